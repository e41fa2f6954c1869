"""In-process A/B of the copy-on-write upsert's pipeline around the merge (issue #16, session 15): "old" restores
the session-14 steps by patching them back in, "new" runs the code as it is. Restored:

* the merge tasks as ``groupBy(bin, partition, file id).applyInArrow`` (Spark sorts the batch by group in the
  JVM) instead of ``mapInArrow`` over the bins, each task splitting its rows by group (targets.merge_bin);
* a copy-on-write upsert of a single merge bin shuffled by its bin label (now: the joined records' partitions
  coalesced into the one task, no shuffle).

Modes alternate rep by rep in one Spark session, each on a fresh copy of a loaded table, so both see the same
machine load; figures per rep: wall, Spark jobs, CPU seconds of the driver, the JVM and the Python workers (from
/proc), and the write stats (the same in both modes).

    .venv/bin/python benchmarks/upsert_pipeline_ab.py --golden /tmp/cow-upsert/w/golden-sf1/hoodpy-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 --out /tmp/ab.json
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import DataFrame  # noqa: E402

from spark_local import report, spark_session  # noqa: E402
from upsert_calls import CpuClock  # noqa: E402

from hoodpy.meta_fields import PARTITION_PATH  # noqa: E402
from hoodpy.write import targets, writer  # noqa: E402
from hoodpy.write.merge import TARGET_FILE_ID, merge_file_group  # noqa: E402


@contextmanager
def old_pipeline():
    """Session 14's merge tasks: Spark groups (and sorts) each bin's rows by file group."""
    saved = DataFrame.mapInArrow

    def map_in_arrow(self, func, schema, *a, **k):
        if isinstance(func, functools.partial) and func.func is targets.merge_bin:
            return self.groupBy(targets.MERGE_BIN, PARTITION_PATH, TARGET_FILE_ID).applyInArrow(
                functools.partial(merge_file_group, *func.args), schema)
        return saved(self, func, schema, *a, **k)

    attach = writer.attach_targets

    def shuffled_attach(spark, records, table, storage, temp_dir, num_bins, *a, **k):
        joined = attach(spark, records, table, storage, temp_dir, 2, *a, **k)  # 2 bins: not coalesced
        return joined.repartition(max(1, num_bins), targets.MERGE_BIN)  # replaces the 2-bin repartition

    DataFrame.mapInArrow = map_in_arrow
    writer.attach_targets = shuffled_attach
    try:
        yield
    finally:
        DataFrame.mapInArrow = saved
        writer.attach_targets = attach


@contextmanager
def _nothing():
    yield


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--golden", required=True, help="a loaded hoodpy table (copied per rep)")
    ap.add_argument("--batch", required=True, help="parquet of the upsert batch")
    ap.add_argument("--reps", type=int, default=3, help="reps per mode (after one untimed warm-up of each)")
    ap.add_argument("--driver-memory", default="3g")
    ap.add_argument("--work", default=None, help="scratch folder for the table copies")
    ap.add_argument("--out", default="/tmp/upsert_pipeline_ab.json")
    args = ap.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session("upsert-pipeline-ab", shuffle_partitions=8, driver_memory=args.driver_memory)
    clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
    work = Path(tempfile.mkdtemp(prefix="upsert-pipeline-ab-", dir=args.work))
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    try:
        for i in range(2 * (args.reps + 1)):
            mode = ("old", "new")[i % 2]
            path = work / f"t{i}"
            shutil.copytree(args.golden, path)
            group = f"ab-{i}"
            spark.sparkContext.setJobGroup(group, group)
            before, t0 = clock.read(), time.perf_counter()
            with old_pipeline() if mode == "old" else _nothing():
                r = HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(args.batch))
            wall, after = time.perf_counter() - t0, clock.read()
            shutil.rmtree(path)
            row = {"mode": mode, "seconds": round(wall, 2), "spark_jobs": len(tracker.getJobIdsForGroup(group)),
                   **{f"cpu_{k}_s": round(after[k] - before[k], 2) for k in after},
                   "updates": r.num_update_writes, "inserts": r.num_inserts, "deletes": r.num_deletes,
                   "files_updated": r.files_updated, "files_added": r.files_added}
            print(("warm-up " if i < 2 else "") + str(row), flush=True)
            if i >= 2:
                runs[mode].append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    median = {m: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "mode"} for m, rs in runs.items()}
    report({"golden": args.golden, "batch": args.batch, "reps": runs, "median": median}, args.out)


if __name__ == "__main__":
    main()

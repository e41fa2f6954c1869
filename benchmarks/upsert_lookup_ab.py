"""In-process A/B of the BLOOM index's driver lookup in one default upsert (issue #16): the session-14 lookup
("new": filters probed only when they can rule a file out, key columns read only from row groups whose key range
holds a candidate, the insert file left to its merge task) against the session-13 lookup ("old": every filter
probed with every candidate, whole key columns, every file looked up), restored by patching those three steps.
Modes alternate rep by rep in one Spark session, each on a fresh copy of a loaded table, so both see the same
machine load; figures per rep: wall, Spark jobs, CPU seconds of the driver, the JVM and the Python workers (from
/proc), and the write stats (the same in both modes).

    .venv/bin/python benchmarks/upsert_lookup_ab.py --golden /tmp/cow-upsert/w/golden-sf1/hoodpy-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 --out /tmp/ab.json
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spark_local import report, spark_session  # noqa: E402
from upsert_calls import CpuClock  # noqa: E402

from hoodpy.index import bloom  # noqa: E402
from hoodpy.keygen.stored import stored_record_keys  # noqa: E402
from hoodpy.write.writer import Writer  # noqa: E402


@contextmanager
def old_lookup():
    """The session-13 lookup: full probes, whole key columns, no insert file left out."""
    saved = bloom.rules_out, bloom._stored_keys_for, Writer._insert_files
    bloom.rules_out = lambda b, candidates: not any(b.might_contain_many(candidates))
    bloom._stored_keys_for = lambda pf, candidates, virtual: stored_record_keys(pf, virtual)
    Writer._insert_files = lambda self, view, timeline: {}
    try:
        yield
    finally:
        bloom.rules_out, bloom._stored_keys_for, Writer._insert_files = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--golden", required=True, help="a loaded hoodpy table (copied per rep)")
    ap.add_argument("--batch", required=True, help="parquet of the upsert batch")
    ap.add_argument("--reps", type=int, default=3, help="reps per mode (after one untimed warm-up of each)")
    ap.add_argument("--driver-memory", default="3g")
    ap.add_argument("--out", default="/tmp/upsert_lookup_ab.json")
    args = ap.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session("upsert-lookup-ab", shuffle_partitions=8, driver_memory=args.driver_memory)
    clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
    work = Path(tempfile.mkdtemp(prefix="upsert-lookup-ab-"))
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    try:
        for i in range(2 * (args.reps + 1)):
            mode = ("old", "new")[i % 2]
            path = work / f"t{i}"
            shutil.copytree(args.golden, path)
            group = f"ab-{i}"
            spark.sparkContext.setJobGroup(group, group)
            before, t0 = clock.read(), time.perf_counter()
            with old_lookup() if mode == "old" else _nothing():
                r = HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(args.batch))
            wall, after = time.perf_counter() - t0, clock.read()
            shutil.rmtree(path)
            row = {"mode": mode, "seconds": round(wall, 2), "spark_jobs": len(tracker.getJobIdsForGroup(group)),
                   **{f"cpu_{k}_s": round(after[k] - before[k], 2) for k in after},
                   "updates": r.num_update_writes, "inserts": r.num_inserts, "files_updated": r.files_updated,
                   "files_added": r.files_added}
            print(("warm-up " if i < 2 else "") + str(row), flush=True)
            if i >= 2:
                runs[mode].append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    median = {m: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "mode"} for m, rs in runs.items()}
    report({"golden": args.golden, "batch": args.batch, "reps": runs, "median": median}, args.out)


@contextmanager
def _nothing():
    yield


if __name__ == "__main__":
    main()

"""The harness of the in-process upsert A/Bs (upsert_lookup_ab.py, upsert_pipeline_ab.py): "old" runs the upsert
inside a context that patches earlier steps back in, "new" runs the code as it is. Modes alternate rep by rep in
one Spark session, each on a fresh copy of a loaded table, so both see the same machine load; figures per rep:
wall, Spark jobs, CPU seconds of the driver, the JVM and the Python workers (from /proc), and the write stats
(the same in both modes)."""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spark_local import report, spark_session  # noqa: E402
from upsert_calls import CpuClock  # noqa: E402


def run_upsert_ab(name: str, doc: str, old: Callable[[], AbstractContextManager]) -> None:
    """Parse the command line and run the A/B; ``old()`` is the context the "old" mode's upserts run in."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--golden", required=True, help="a loaded hoodpy table (copied per rep)")
    ap.add_argument("--batch", required=True, help="parquet of the upsert batch")
    ap.add_argument("--reps", type=int, default=3, help="reps per mode (after one untimed warm-up of each)")
    ap.add_argument("--driver-memory", default="3g")
    ap.add_argument("--work", default=None, help="scratch folder for the table copies")
    ap.add_argument("--out", default=f"/tmp/{name.replace('-', '_')}.json")
    args = ap.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session(name, shuffle_partitions=8, driver_memory=args.driver_memory)
    clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=args.work))
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    try:
        for i in range(2 * (args.reps + 1)):
            mode = ("old", "new")[i % 2]
            path = work / f"t{i}"
            shutil.copytree(args.golden, path)
            group = f"ab-{i}"
            spark.sparkContext.setJobGroup(group, group)
            before, t0 = clock.read(), time.perf_counter()
            with old() if mode == "old" else nullcontext():
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

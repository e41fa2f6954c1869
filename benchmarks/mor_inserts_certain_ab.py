"""In-process A/B of the insert file's bloom proof (hoodpy.index.bloom.lacks_one, Writer._inserts_certain) in the
default merge-on-read upsert (the ``mor`` workload's batch): alternating repetitions with it on (B) and off (A:
lacks_one proves nothing, so the driver looks the insert file up when no new key lies outside its key range, as
before), each on a fresh copy of the loaded table. Per
repetition, from Spark's event log and the driver: wall seconds from the upsert's start to the merge job's
submission, the driver gap (key-collection job's end to the merge job's submission), the driver lookup
(Writer._tag_and_assign_on_driver) and the driver process's CPU seconds (all its threads).

    .venv/bin/python benchmarks/mor_inserts_certain_ab.py --sf 0.25 --reps 6 --work /tmp/w --driver-memory 3g
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mor_upsert_timeline as tl  # noqa: E402
from mor_upsert_calls import fresh_copy, upsert_inputs  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _jobs(events: list[dict], group: str) -> list[tuple[float, float]]:
    """(submission, completion) of the group's jobs, in seconds since the epoch, in submission order."""
    submitted, completed = {}, {}
    for e in events:
        if e["Event"] == "SparkListenerJobStart" and e.get("Properties", {}).get("spark.jobGroup.id") == group:
            submitted[e["Job ID"]] = e["Submission Time"] / 1000
        elif e["Event"] == "SparkListenerJobEnd":
            completed[e["Job ID"]] = e["Completion Time"] / 1000
    return [(submitted[j], completed.get(j, float("nan"))) for j in sorted(submitted)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1)
    p.add_argument("--reps", type=int, default=6, help="repetitions per variant, alternating")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--work", default=None)
    p.add_argument("--driver-memory", default="3g")
    args = p.parse_args()

    import hoodpy.write.writer as writer_module
    from hoodpy.table import HoodieTable

    work = Path(args.work or tempfile.mkdtemp(prefix="mor-inserts-certain-ab-"))
    spark, log_dir = tl.event_log_session("mor-inserts-certain-ab", work / "events-ab", args.driver_memory)
    batch, golden = upsert_inputs(spark, Path(args.data), args.sf, work, {})
    tl._instrument()
    real = writer_module.lacks_one
    runs = []
    try:
        for rep in range(2 * args.reps + 2):  # the first two warm up
            variant = "AB"[rep % 2]
            writer_module.lacks_one = real if variant == "B" else (lambda storage, bf, keys: False)
            path = fresh_copy(golden, work / "ab-run")
            group = f"ab-{rep}"
            spark.sparkContext.setJobGroup(group, group)
            tl._events.clear()
            cpu, start = _cpu(), time.time()
            HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(str(batch)))
            end, cpu = time.time(), _cpu() - cpu
            lookup = sum(e - s for name, s, e, _ in tl._events if name == "Writer._tag_and_assign_on_driver")
            if rep >= 2:
                runs.append((variant, group, start, end, cpu, lookup))
    finally:
        writer_module.lacks_one = real
        spark.stop()
    events = tl._spark_events(log_dir)
    rows = {"A": [], "B": []}
    for variant, group, start, end, cpu, lookup in runs:
        jobs = _jobs(events, group)
        merge_submitted, key_job_done = jobs[-1][0], jobs[-2][1]
        row = (merge_submitted - start, merge_submitted - key_job_done, lookup, cpu, end - start)
        rows[variant].append(row)
        print(f"{group} {variant}: to merge job {row[0]:.2f} s, gap {row[1]:.2f} s, lookup {row[2]:.3f} s, "
              f"driver cpu {row[3]:.2f} s, upsert {row[4]:.2f} s")
    for variant, label in (("A", "bloom proof off"), ("B", "bloom proof on")):
        med = [statistics.median(c) for c in zip(*rows[variant])]
        print(f"median {variant} ({label}): to merge job {med[0]:.2f} s, gap {med[1]:.2f} s, lookup {med[2]:.3f} s, "
              f"driver cpu {med[3]:.2f} s, upsert {med[4]:.2f} s")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

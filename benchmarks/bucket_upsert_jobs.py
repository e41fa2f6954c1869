"""The copy-on-write upsert under the BUCKET index (issue #16, benchmarks/run.py's ``hoodpy_upsert_tuned`` with
``--tuned hoodie.index.type=BUCKET,hoodie.bucket.index.num.buckets=2``): per repetition, on a fresh copy of the
loaded table, wall seconds, CPU seconds of the driver, the JVM and the Python workers (/proc), and each Spark job
with its stages (name, tasks, duration, summed task run and CPU time) from the event log. For an A/B of two code
versions, run it alternately with PYTHONPATH on each (one warm-up rep per run is not reported).

    .venv/bin/python benchmarks/bucket_upsert_jobs.py --golden /tmp/w/golden-sf1/hoodpy-tuned-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 \\
        --options hoodie.index.type=BUCKET,hoodie.bucket.index.num.buckets=2
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mor_upsert_calls import _options  # noqa: E402
from mor_upsert_timeline import _spark_events, event_log_session  # noqa: E402
from upsert_calls import CpuClock  # noqa: E402


def _jobs(events: list[dict], group: str) -> list[str]:
    """One line per job of ``group``: its stages' names, task counts, durations and summed task times."""
    jobs, stage_job, stages = {}, {}, {}
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerJobStart" and e.get("Properties", {}).get("spark.jobGroup.id") == group:
            jobs[e["Job ID"]] = [e["Submission Time"], None]
            for s in e["Stage Infos"]:
                stage_job[s["Stage ID"]] = e["Job ID"]
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            jobs[e["Job ID"]][1] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted" and e["Stage Info"]["Stage ID"] in stage_job:
            s = e["Stage Info"]  # after its tasks' ends: keep their sums
            st = stages.setdefault(s["Stage ID"], {"run": 0.0, "cpu": 0.0})
            st.update(name=s["Stage Name"].split(" at ")[0], tasks=s["Number of Tasks"],
                      ms=s["Completion Time"] - s.get("Submission Time", s["Completion Time"]))
        elif kind == "SparkListenerTaskEnd" and e["Stage ID"] in stage_job:
            m = e.get("Task Metrics") or {}
            st = stages.setdefault(e["Stage ID"], {"name": "?", "tasks": 0, "ms": 0, "run": 0.0, "cpu": 0.0})
            st["run"] += m.get("Executor Run Time", 0) / 1000
            st["cpu"] += m.get("Executor CPU Time", 0) / 1e9
    out = []
    for job, (start, end) in sorted(jobs.items()):
        parts = [f"{sid}:{s['name']} x{s['tasks']} {s['ms']} ms run {s['run']:.2f} s cpu {s['cpu']:.2f} s"
                 for sid, s in sorted(stages.items()) if stage_job[sid] == job]
        out.append(f"  job {job} {(end or start) - start} ms: " + ("; ".join(parts) or "(stages skipped)"))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--golden", required=True, help="a loaded hoodpy table (copied per rep)")
    p.add_argument("--batch", required=True, help="parquet of the upsert batch")
    p.add_argument("--options", type=_options, default={}, help="hoodie.* options of the upsert, k=v,k=v")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--work", default=None, help="scratch folder for the table copies and the event log")
    p.add_argument("--driver-memory", default="3g")
    args = p.parse_args()

    from hoodpy.table import HoodieTable

    work = Path(tempfile.mkdtemp(prefix="bucket-upsert-jobs-", dir=args.work))
    spark, log_dir = event_log_session("bucket-upsert-jobs", work / "events", args.driver_memory)
    clock = CpuClock()
    rows = []
    try:
        for rep in range(args.reps + 1):  # the first warms up
            path = work / f"t{rep}"
            shutil.copytree(args.golden, path, ignore=shutil.ignore_patterns(".done"))
            group = f"rep-{rep}"
            spark.sparkContext.setJobGroup(group, group)
            before, t0 = clock.read(), time.perf_counter()
            r = HoodieTable.for_path(spark, str(path), options=args.options).upsert(spark.read.parquet(args.batch))
            wall, after = time.perf_counter() - t0, clock.read()
            shutil.rmtree(path)
            row = {"rep": rep, "seconds": round(wall, 2), **{f"cpu_{k}_s": round(after[k] - before[k], 2)
                                                              for k in after},
                   "updates": r.num_update_writes, "inserts": r.num_inserts, "files_updated": r.files_updated,
                   "files_added": r.files_added}
            print(("warm-up " if rep == 0 else "") + str(row), flush=True)
            if rep:
                rows.append((group, row))
    finally:
        spark.stop()
    events = _spark_events(log_dir)
    for group, row in rows:
        print(f"{group}: {row['seconds']} s")
        print("\n".join(_jobs(events, group)))
    keys = [k for k in rows[0][1] if k.startswith(("seconds", "cpu_"))]
    print("median", {k: statistics.median(r[k] for _, r in rows) for k in keys})
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

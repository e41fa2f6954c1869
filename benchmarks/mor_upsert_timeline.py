"""Wall-clock timeline of one default merge-on-read upsert (the ``mor`` workload's batch of benchmarks/run.py):
the driver's phases (hoodpy functions wrapped with timestamps, nested by depth), each Spark job's and stage's
submission and completion and each task's launch and finish (from Spark's event log), relative to the upsert's
start, one block per repetition. Shows the critical path and where both cores idle (the driver planning, a
job waiting on the previous one, the JVM waiting on a Python task).

    .venv/bin/python benchmarks/mor_upsert_timeline.py --sf 1 --reps 3 --work /tmp/w --driver-memory 3g
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import functools
import importlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mor_upsert_calls import _options, fresh_copy, upsert_inputs  # noqa: E402
from spark_local import spark_session  # noqa: E402

# (module, attribute path) of the driver functions timed; a name imported into writer.py is patched there.
_TIMED = [
    ("hoodpy.write.writer", "Writer._prepare"),
    ("hoodpy.write.writer", "Writer._run"),
    ("hoodpy.write.writer", "Writer._tag_and_assign_on_driver"),
    ("hoodpy.write.writer", "Writer._insert_buckets"),
    ("hoodpy.write.writer", "Writer._targets_on_driver"),
    ("hoodpy.write.writer", "Writer._inserts_certain"),
    ("hoodpy.write.writer", "Writer._has_duplicate_keys"),
    ("hoodpy.write.writer", "locate_on_driver"),
    ("hoodpy.write.writer", "rollback_failed_writes"),
    ("hoodpy.write.writer", "append_context"),
    ("hoodpy.write.records", "collect_keys"),
    ("hoodpy.write.records", "has_duplicate_keys"),
    ("hoodpy.write.commit", "commit"),
    ("hoodpy.write.commit", "write_stats_from_rows"),
    ("hoodpy.write.decimal_transfer", "ship"),
    ("hoodpy.transaction.transaction", "WriteTransaction.commit"),
    ("hoodpy.timeline.timeline", "Timeline.load"),
    ("hoodpy.file_group.fs_view", "FileSystemView.load"),
    ("hoodpy.timeline.transitions", "create_requested"),
    ("hoodpy.timeline.transitions", "transition_to_inflight"),
    ("pyspark.sql.dataframe", "DataFrame.collect"),
]

_events: list[tuple[str, float, float, int]] = []
_depth = [0]


def _wrap(name: str, fn):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        start, _depth[0] = time.time(), _depth[0] + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1
            _events.append((name, start, time.time(), _depth[0]))
    return timed


def _instrument() -> None:
    for module_name, attr in _TIMED:
        owner = importlib.import_module(module_name)
        *path, last = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        fn = owner.__dict__[last] if isinstance(owner, type) else getattr(owner, last)
        if isinstance(fn, (classmethod, staticmethod)):
            setattr(owner, last, type(fn)(_wrap(attr, fn.__func__)))
        else:
            setattr(owner, last, _wrap(attr, fn))


def _spark_events(log_dir: Path) -> list[dict]:
    out = []
    for f in sorted(f for f in log_dir.rglob("*") if f.is_file() and not f.name.startswith(".")):
        with open(f) as fh:
            out.extend(json.loads(line) for line in fh if line.strip())
    return out


def _timeline(events: list[dict], start: float, end: float, group: str) -> list[tuple[float, str]]:
    """The Spark events of one job group, as (seconds from ``start``, text)."""
    jobs, stages, rows = set(), {}, []
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerJobStart" and e.get("Properties", {}).get("spark.jobGroup.id") == group:
            jobs.add(e["Job ID"])
            for s in e["Stage Infos"]:
                stages[s["Stage ID"]] = e["Job ID"]
            named = [(s["Stage ID"], s["Stage Name"].split(" at ")[0], s["Number of Tasks"]) for s in e["Stage Infos"]]
            rows.append((e["Submission Time"] / 1000 - start, f"job {e['Job ID']} submitted, stages {named}"))
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
            rows.append((e["Completion Time"] / 1000 - start, f"job {e['Job ID']} completed"))
        elif kind == "SparkListenerStageCompleted" and e["Stage Info"]["Stage ID"] in stages:
            s = e["Stage Info"]
            if "Submission Time" in s:
                rows.append((s["Submission Time"] / 1000 - start, f"  stage {s['Stage ID']} submitted"))
            rows.append((s["Completion Time"] / 1000 - start, f"  stage {s['Stage ID']} completed"))
        elif kind == "SparkListenerTaskEnd" and e["Stage ID"] in stages:
            t, m = e["Task Info"], e.get("Task Metrics") or {}
            rows.append((t["Launch Time"] / 1000 - start, f"    task {e['Stage ID']}.{t['Index']} launched"))
            rows.append((t["Finish Time"] / 1000 - start,
                         f"    task {e['Stage ID']}.{t['Index']} finished "
                         f"(run {m.get('Executor Run Time', 0) / 1000:.2f}"
                         f" s, cpu {m.get('Executor CPU Time', 0) / 1e9:.2f} s, deser "
                         f"{m.get('Executor Deserialize Time', 0) / 1000:.2f} s)"))
    return rows


def event_log_session(app: str, log_dir: Path, driver_memory: str):
    """A local Spark session writing its event log, uncompressed and unrolled, to ``log_dir`` (emptied first)."""
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)
    spark = spark_session(app, shuffle_partitions=8, driver_memory=driver_memory,
                          extra={"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(log_dir),
                                 "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
    return spark, log_dir


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--options", type=_options, default={}, help="hoodie.* options of the upsert, k=v,k=v")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--work", default=None, help="keeps the loaded table (golden-mor-sf<SF>) between runs when given")
    p.add_argument("--driver-memory", default="3g")
    p.add_argument("--profile", action="store_true", help="cProfile of the driver's Writer._run, last repetition")
    p.add_argument("--min-ms", type=float, default=5, help="driver phases shorter than this are left out")
    args = p.parse_args()

    from hoodpy.table import HoodieTable

    work = Path(args.work or tempfile.mkdtemp(prefix="mor-upsert-timeline-"))
    spark, log_dir = event_log_session("mor-upsert-timeline", work / "events", args.driver_memory)
    batch, golden = upsert_inputs(spark, Path(args.data), args.sf, work, {})
    _instrument()
    spans = []
    try:
        for rep in range(args.reps + 1):  # the first warms up
            path = fresh_copy(golden, work / f"rep{rep}")
            group = f"timeline-{rep}"
            spark.sparkContext.setJobGroup(group, group)
            _events.clear()
            profile = cProfile.Profile() if args.profile and rep == args.reps else None
            if profile:
                profile.enable()
            start = time.time()
            HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(str(batch)), options=args.options)
            end = time.time()
            if profile:
                profile.disable()
                out = io.StringIO()
                pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(45)
                print(out.getvalue())
            shutil.rmtree(path)
            if rep:
                spans.append((group, start, end, list(_events)))
    finally:
        spark.stop()
    events = _spark_events(log_dir)
    for group, start, end, driver in spans:
        print(f"\n=== {group}: {end - start:.2f} s")
        rows = [(s - start, f"{'  ' * d}[driver] {name} {(e - s) * 1000:.0f} ms (ends {e - start:.2f})")
                for name, s, e, d in driver if (e - s) * 1000 >= args.min_ms]
        rows += _timeline(events, start, end, group)
        for at, text in sorted(rows, key=lambda r: r[0]):
            print(f"{at:6.2f}  {text}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

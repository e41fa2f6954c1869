"""What one merge-on-read upsert costs: Spark jobs, driver->JVM (py4j) calls and CPU seconds per process kind
(driver Python, JVM, Python workers; the JVM's split by thread kind: JIT compilers, GC, task threads, py4j
threads, which plan the driver's queries, others), on a copy of one bulk-loaded MOR table per repetition; the
batch is the ``mor`` workload's of benchmarks/run.py (5% updates + 1% inserts, concentrated). By default the small-file
limit is off, so the updates go to log files and the inserts to a new base file (``--options`` adds or
overrides ``hoodie.*`` keys). ``--profile`` adds cProfile of the driver and Spark's Python UDF profiler of the
workers for the last repetition (top functions by cumulative time).

Counts are exact and load-independent; CPU seconds come from /proc, so they are less noisy than wall time.

    .venv/bin/python benchmarks/mor_upsert_calls.py --sf 0.25 --reps 3 --out /tmp/mor_upsert_calls.json
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from spark_local import report, spark_session  # noqa: E402
from upsert_calls import _TICK, CpuClock, Py4jCalls  # noqa: E402

LOGS_ONLY = {"hoodie.parquet.small.file.limit": "0"}


def _options(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(",") if kv)


# JVM thread kinds by the start of their names (/proc's comm: 15 characters).
_THREAD_KINDS = (("C1 CompilerThre", "jit"), ("C2 CompilerThre", "jit"), ("GC Thread", "gc"), ("G1 ", "gc"),
                 ("VM Thread", "gc"), ("Executor task", "tasks"), ("Thread-", "py4j"))


def _jvm_threads(pid: int) -> dict[int, tuple[str, float]]:
    """Each live thread of the JVM: (its kind, CPU seconds so far)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kind = next((k for prefix, k in _THREAD_KINDS if name.startswith(prefix)), "other")
        out[int(tid)] = (kind, (int(fields[11]) + int(fields[12])) / _TICK)
    return out


def _jvm_split(before: dict, after: dict, total: float) -> dict[str, float]:
    """The JVM's CPU seconds between two :func:`_jvm_threads` snapshots by thread kind; ``exited``: threads
    gone by the second (the rest of ``total``)."""
    split: dict[str, float] = {}
    for tid, (kind, cpu) in after.items():
        split[kind] = split.get(kind, 0.0) + cpu - before.get(tid, (kind, 0.0))[1]
    split["exited"] = total - sum(split.values())
    return {f"jvm_{k}": round(v, 2) for k, v in sorted(split.items())}


def _top(profile: cProfile.Profile, n: int = 25) -> str:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(n)
    return out.getvalue()


def upsert_inputs(spark, data: Path, sf: float, work: Path, load_options: dict[str, str]) -> tuple[Path, Path]:
    """The concentrated upsert batch (run.py's batch_file) and the MOR table loaded with ``load_options``
    (golden-mor-sf<SF>[-<option><value>...] under ``work``, kept between runs), made when missing."""
    from hoodpy.table import HoodieTable

    src = lineitem.generate(data, sf)
    rows = pq.ParquetFile(src).metadata.num_rows
    updates, inserts = int(rows * 0.05), int(rows * 0.01)
    batch = data / f"sf{sf:g}" / f"batch-w2-conc-{updates}-{inserts}.parquet"  # run.py's batch_file name
    if not batch.exists():
        pq.write_table(lineitem.upsert_batch(pq.read_table(src), updates=updates, inserts=inserts,
                                             concentrated=True), batch)
    suffix = "".join(f"-{k.rsplit('.', 1)[-1]}{v}" for k, v in sorted(load_options.items()))
    golden = work / f"golden-mor-sf{sf:g}{suffix}"
    if not (golden / ".done").exists():
        shutil.rmtree(golden, ignore_errors=True)
        HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                           table_type="MERGE_ON_READ").bulk_insert(spark.read.parquet(str(src)), options=load_options)
        (golden / ".done").touch()
    return batch, golden


def fresh_copy(golden: Path, path: Path) -> Path:
    """``golden`` copied to ``path`` (replacing what was there), for one run to write into."""
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(golden, path, ignore=shutil.ignore_patterns(".done"))
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=0.25)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--options", type=_options, default=LOGS_ONLY, help="hoodie.* options of the upsert, k=v,k=v")
    p.add_argument("--load-options", type=_options, default={},
                   help="hoodie.* options of the bulk load, k=v,k=v (hoodie.parquet.max.file.size=31457280 at SF "
                        "0.25 gives SF 1's layout: a full file and a small one)")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--work", default=None, help="keeps the loaded table between runs when given")
    p.add_argument("--out", default="/tmp/mor_upsert_calls.json")
    p.add_argument("--driver-memory", default="2g", help="spark.driver.memory (3g for an SF 1 load)")
    args = p.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session("mor-upsert-calls", shuffle_partitions=8, driver_memory=args.driver_memory)
    if args.profile:
        spark.conf.set("spark.sql.pyspark.udf.profiler", "perf")
    work = Path(args.work or tempfile.mkdtemp(prefix="mor-upsert-calls-"))
    batch, golden = upsert_inputs(spark, Path(args.data), args.sf, work, args.load_options)
    clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
    reps, driver_profile = [], None
    try:
        for rep in range(args.reps + 1):  # the first warms up
            path = fresh_copy(golden, work / f"rep{rep}")
            group = f"mor-upsert-calls-{rep}"
            spark.sparkContext.setJobGroup(group, group)
            profile = cProfile.Profile() if args.profile and rep == args.reps else None
            threads, before, started = _jvm_threads(clock.jvm), clock.read(), time.monotonic()
            calls = Py4jCalls()
            try:
                if profile:
                    profile.enable()
                HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(str(batch)), options=args.options)
            finally:
                if profile:
                    profile.disable()
                calls.close()
            seconds, after, threads = time.monotonic() - started, clock.read(), (threads, _jvm_threads(clock.jvm))
            log_bytes = sum(f.stat().st_size for f in path.rglob(".*.log.*"))
            shutil.rmtree(path)
            driver_profile = profile or driver_profile
            if rep == 0:
                continue
            jobs = sorted(tracker.getJobIdsForGroup(group))
            if rep == args.reps:  # what each job ran: the names of its stages (the calls that started them)
                for j in jobs:
                    stages = [tracker.getStageInfo(s) for s in (tracker.getJobInfo(j).stageIds or [])]
                    print(f"job {j}:", [(s.name, s.numTasks) for s in stages if s is not None], flush=True)
            reps.append({"seconds": round(seconds, 2), "spark_jobs": len(jobs),
                         "py4j_calls": calls.count, "log_bytes": log_bytes,
                         **{f"cpu_{k}": round(after[k] - before[k], 2) for k in after},
                         **_jvm_split(*threads, after["jvm"] - before["jvm"])})
            print(reps[-1], flush=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    median = {k: statistics.median(r[k] for r in reps) for k in reps[0]}
    if driver_profile is not None:
        print(_top(driver_profile))
        driver_profile.dump_stats(args.out + ".prof")  # the driver's cProfile, for pstats
        spark.profile.show(type="perf")
    report({"sf": args.sf, "options": args.options, "reps": reps, "median": median}, args.out)


if __name__ == "__main__":
    main()

"""Where one default-options upsert's JVM and driver CPU go: per Spark job and stage (tasks, executor CPU,
GC, input / shuffle bytes, from the Spark UI's REST API), per JVM thread kind (task threads, JIT compilers,
GC, the py4j / planning threads: /proc/<jvm>/task/*), and per process (driver Python, JVM, Python workers).
Optionally the driver's Python profiled by CPU time (cProfile with time.process_time).

A profiling tool: it enables the Spark UI and uses spark.sparkContext, which hoodpy's own code may not.

    .venv/bin/python benchmarks/upsert_profile.py --sf 1 --reps 2 --work /tmp/upsert-pipeline/prof
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import shutil
import statistics
import sys
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from cpu_split import CpuSplit  # noqa: E402
from measure import _thread_children  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def _jvm_pid() -> int:
    for pid in _thread_children(os.getpid()):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if f.read().split(b"\0")[0].endswith(b"java"):
                return pid
    raise RuntimeError("no JVM child of the driver")


def jvm_threads(pid: int) -> dict[str, float]:
    """CPU seconds per JVM thread kind (the thread name without its digits)."""
    out: dict[str, float] = defaultdict(float)
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = re.sub(r"[0-9]+", "#", f.read().strip())
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] += (int(fields[11]) + int(fields[12])) / _TICK
    return out


def _get(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def stage_report(ui: str, app: str, group: str) -> list[dict]:
    """The jobs of ``group`` with their stages' metrics."""
    jobs = [j for j in _get(f"{ui}/api/v1/applications/{app}/jobs") if j.get("jobGroup") == group]
    out = []
    for job in sorted(jobs, key=lambda j: j["jobId"]):
        stages = []
        for sid in job["stageIds"]:
            for s in _get(f"{ui}/api/v1/applications/{app}/stages/{sid}"):
                if s["status"] == "SKIPPED" or s.get("numTasks", 0) == 0 and s["status"] != "COMPLETE":
                    continue
                stages.append({
                    "stage": sid, "status": s["status"], "tasks": s["numTasks"],
                    "name": s["name"][:60],
                    "run_s": round(s["executorRunTime"] / 1e3, 2), "cpu_s": round(s["executorCpuTime"] / 1e9, 2),
                    "gc_s": round(s["jvmGcTime"] / 1e3, 2),
                    "in_MB": round(s["inputBytes"] / 2**20, 1), "in_rows": s["inputRecords"],
                    "shw_MB": round(s["shuffleWriteBytes"] / 2**20, 1), "shr_MB": round(s["shuffleReadBytes"] / 2**20, 1),
                    "shw_rows": s["shuffleWriteRecords"], "spill_MB": round(s["memoryBytesSpilled"] / 2**20, 1),
                })
        out.append({"job": job["jobId"], "name": job["name"][:80], "stages": stages,
                    "start": _ui_time(job.get("submissionTime")), "end": _ui_time(job.get("completionTime"))})
    return out


def _ui_time(text: str | None) -> float | None:
    """Epoch seconds of a Spark UI time stamp (``2026-11-27T01:10:02.123GMT``)."""
    if not text:
        return None
    from datetime import datetime, timezone

    return datetime.strptime(text.replace("GMT", ""), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()


def job_seconds(jobs: list[dict]) -> float:
    """Wall seconds during which at least one of ``jobs`` ran (the union of their intervals)."""
    spans = sorted((j["start"], j["end"]) for j in jobs if j["start"] is not None and j["end"] is not None)
    total, reach = 0.0, None
    for start, end in spans:
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--work", default="/tmp/upsert-pipeline/prof")
    p.add_argument("--batch", default="conc", help="conc or unif (the run.py upsert batches), or a path")
    p.add_argument("--table-type", default="COPY_ON_WRITE")
    p.add_argument("--options", default="{}", help="upsert options as JSON")
    p.add_argument("--cprofile", default=None, help="write the driver's CPU profile of the last rep here")
    p.add_argument("--golden", default=None, help="a loaded table to copy (default: bulk_insert one under --work)")
    p.add_argument("--driver-memory", default="3g")
    p.add_argument("--out", default=None)
    args = p.parse_args()

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf
    from hoodpy.table import HoodieTable

    spark = (SparkSession.builder.master("local[2]").appName("upsert-profile").config(map=spark_conf())
             .config("spark.driver.memory", args.driver_memory).config("spark.ui.enabled", "true")
             .config("spark.ui.port", "4311").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "8").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    ui, app = sc.uiWebUrl.rstrip("/"), sc.applicationId
    data, work = Path(args.data), Path(args.work)
    src = lineitem.generate(data, args.sf)
    n = pq.ParquetFile(src).metadata.num_rows
    if args.batch in ("conc", "unif"):
        batch = data / f"sf{args.sf:g}" / f"batch-w2-{args.batch}-{n // 20}-{n // 100}.parquet"
        if not batch.exists():
            pq.write_table(lineitem.upsert_batch(pq.read_table(src), updates=n // 20, inserts=n // 100,
                                                 concentrated=args.batch == "conc"), batch)
    else:
        batch = Path(args.batch)
    mor = args.table_type.upper() == "MERGE_ON_READ"
    golden = Path(args.golden) if args.golden else work / f"golden-sf{args.sf:g}-{'mor' if mor else 'cow'}"
    if not args.golden and not (golden / ".done").exists():
        shutil.rmtree(golden, ignore_errors=True)
        HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                           partition_fields=[], hive_style_partitioning=True,
                           table_type="MERGE_ON_READ" if mor else None).bulk_insert(spark.read.parquet(str(src)))
        (golden / ".done").touch()
    options = json.loads(args.options)
    jvm = _jvm_pid()
    reps = []
    for rep in range(args.reps + 1):  # the first warms up
        path = work / f"rep{rep}"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(golden, path)
        group = f"upsert-profile-{rep}"
        sc.setJobGroup(group, group)
        split = CpuSplit(_thread_children)
        threads0 = jvm_threads(jvm)
        prof = cProfile.Profile(time.process_time) if args.cprofile and rep == args.reps else None
        split.start()
        stop = threading.Event()
        sampler = threading.Thread(target=lambda: [split.sample() for _ in iter(lambda: stop.wait(0.25), True)],
                                   daemon=True)
        sampler.start()
        t0 = time.perf_counter()
        epoch0 = time.time()
        if prof:
            prof.enable()
        HoodieTable.for_path(spark, str(path), options=options).upsert(spark.read.parquet(str(batch)))
        if prof:
            prof.disable()
        wall = time.perf_counter() - t0
        stop.set()
        sampler.join()
        cpu = split.totals()
        threads1 = jvm_threads(jvm)
        sc.setJobGroup("idle", "idle")
        shutil.rmtree(path, ignore_errors=True)
        if rep == 0:
            continue
        time.sleep(1.0)  # the UI's listener catches up
        by_thread = {k: round(threads1[k] - threads0.get(k, 0.0), 2) for k in threads1}
        by_thread = dict(sorted(((k, v) for k, v in by_thread.items() if v >= 0.05), key=lambda kv: -kv[1]))
        jobs = stage_report(ui, app, group)
        in_jobs = job_seconds(jobs)
        r = {"wall_s": round(wall, 2), "no_job_s": round(wall - in_jobs, 2),
             "job_s": [round(j["end"] - j["start"], 2) for j in jobs if j["start"] and j["end"]],
             "first_job_after_s": round(min(j["start"] for j in jobs) - epoch0, 2) if jobs else None,
             "cpu": {k: round(v, 2) for k, v in cpu.items()}, "jobs": len(jobs),
             "stage_cpu_s": round(sum(s["cpu_s"] for j in jobs for s in j["stages"]), 2),
             "jvm_threads": by_thread, "job_detail": jobs, "load": os.getloadavg()}
        reps.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "job_detail"}), flush=True)
        for j in jobs:
            print(f"  job {j['job']}: {j['name']}")
            for s in j["stages"]:
                print(f"    {s}")
        if prof:
            prof.dump_stats(args.cprofile)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
    summary = {k: statistics.median(r["cpu"][k] for r in reps) for k in reps[0]["cpu"]}
    print("median cpu", summary, "wall", statistics.median(r["wall_s"] for r in reps),
          "no_job_s", statistics.median(r["no_job_s"] for r in reps))
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "reps": reps, "median_cpu": summary}, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()

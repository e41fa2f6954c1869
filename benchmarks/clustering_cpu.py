"""CPU seconds of one z-order clustering of a hoodpy table, per process (driver Python, JVM, Python
workers) and per Spark stage (JVM task CPU), so that phases can be compared on a loaded machine where wall
times are noise. The table is copied first and the copy clustered, as benchmarks/run.py's clustering
workload does (same options: ``--files`` outputs over (l_shipdate, l_partkey)).

    python benchmarks/clustering_cpu.py --table /tmp/work/golden-sf0.25/hoodpy-unpartitioned --reps 2

``--engine delta`` runs delta-rs ``optimize.z_order`` instead, on a delta table (``--table``
.../delta-unpartitioned), into as many files (its own bytes over ``--files``), in this process: its CPU is
this process's (every delta-rs thread), the figure to set against hoodpy's total.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of the process and its reaped children)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(entry)] = (int(fields[1]), sum(int(v) for v in fields[11:15]) / _TICKS)
    return out


def cpu_by_role() -> dict[str, float]:
    """CPU seconds so far of this driver, its JVM and the Python workers under the JVM."""
    procs = _processes()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)

    def tree(pid: int) -> float:
        return procs[pid][1] + sum(tree(c) for c in children.get(pid, []))
    roles = {"driver": procs[me][1], "jvm": 0.0, "workers": 0.0}
    for pid in children.get(me, []):
        roles["jvm"] += procs[pid][1]
        roles["workers"] += sum(tree(c) for c in children.get(pid, []))
    return roles


def _stages(port: int) -> list[dict]:
    base = f"http://127.0.0.1:{port}/api/v1/applications"
    app = json.load(urllib.request.urlopen(base))[0]["id"]
    return json.load(urllib.request.urlopen(f"{base}/{app}/stages?status=complete"))


def _delta_runs(source: Path, files: int, reps: int) -> list[dict]:
    from deltalake import DeltaTable

    total = sum(f.stat().st_size for f in source.rglob("*.parquet") if "_delta_log" not in f.parts)
    work = Path(tempfile.mkdtemp(prefix="clustering-cpu-delta-"))
    runs = []
    try:
        for rep in range(reps):
            dest = work / f"t{rep}"
            shutil.copytree(source, dest)
            before, started = time.process_time(), time.monotonic()
            m = DeltaTable(str(dest)).optimize.z_order(["l_shipdate", "l_partkey"], target_size=total // files + 1)
            runs.append({"wall_s": round(time.monotonic() - started, 2),
                         "cpu_total_s": round(time.process_time() - before, 2),
                         "files_added": m.get("numFilesAdded")})
            shutil.rmtree(dest, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return runs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--table", required=True)
    p.add_argument("--files", type=int, default=16)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--layout", default="z-order")
    p.add_argument("--engine", default="hoodpy", choices=("hoodpy", "delta"))
    args = p.parse_args()
    if args.engine == "delta":
        print(json.dumps(_delta_runs(Path(args.table), args.files, args.reps), indent=1))
        return
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf
    from hoodpy.table import HoodieTable

    port = 4300 + os.getpid() % 500
    spark = (SparkSession.builder.master("local[2]").config(map=spark_conf())
             .config("spark.ui.port", str(port)).config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    source = Path(args.table)
    total = sum(f.stat().st_size for f in source.rglob("*.parquet"))
    options = {"hoodie.clustering.plan.strategy.target.file.max.bytes": total // args.files + 1,
               "hoodie.clustering.plan.strategy.max.bytes.per.group": total * 2,
               "hoodie.clustering.plan.strategy.small.file.limit": total * 2}
    work = Path(tempfile.mkdtemp(prefix="clustering-cpu-"))
    runs = []
    try:
        for rep in range(args.reps):
            dest = work / f"t{rep}"
            shutil.copytree(source, dest)
            t = HoodieTable.for_path(spark, str(dest))
            seen = {s["stageId"] for s in _stages(port)}
            before, started = cpu_by_role(), time.monotonic()
            t.clustering.run(sort_columns=["l_shipdate", "l_partkey"], layout=args.layout, options=options)
            after, wall = cpu_by_role(), time.monotonic() - started
            stages = [{"stage": s["stageId"], "name": s["name"].split(" at ")[0][:40],
                       "jvm_task_cpu_s": round(s["executorCpuTime"] / 1e9, 2),
                       "task_run_s": round(s["executorRunTime"] / 1e3, 2),
                       "shuffle_write_mb": round(s["shuffleWriteBytes"] / 2**20, 1)}
                      for s in sorted(_stages(port), key=lambda s: s["stageId"]) if s["stageId"] not in seen]
            runs.append({"wall_s": round(wall, 2),
                         "cpu_s": {k: round(after[k] - before[k], 2) for k in before},
                         "cpu_total_s": round(sum(after.values()) - sum(before.values()), 2), "stages": stages})
            shutil.rmtree(dest, ignore_errors=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()

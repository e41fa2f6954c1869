"""bulk_insert per hoodie.bulkinsert.sort.mode beside Spark's own parquet write of the same rows (issue #16):
Spark jobs, stages, shuffle bytes written / read, the JVM's task CPU (executorCpuTime), the process tree's CPU
split (driver, JVM, Python workers), files and bytes written.

Counts and CPU, not wall time, are the figures to compare on a loaded machine. Shuffle bytes and task CPU
come from Spark's monitoring REST API (the UI is on for this script only; benchmarks/run.py keeps it off).

    PYTHONPATH=$PWD python benchmarks/bulk_insert_modes.py --sf 0.1 --modes NONE,GLOBAL_SORT \
        --data /tmp/hoodpy-bench/data --work /tmp/bulk-sort/modes --out /tmp/bulk-sort/modes.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lineitem  # noqa: E402
from measure import measure  # noqa: E402


def _get(spark, path: str):
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}/{path}"
    with urllib.request.urlopen(url) as r:
        return json.load(r)


def stage_totals(spark, job_ids: list[int]) -> dict:
    """Summed over the stages of ``job_ids`` (every attempt; skipped stages ran nothing)."""
    out = {"stages": 0, "shuffle_write_bytes": 0, "shuffle_read_bytes": 0, "input_bytes": 0, "task_cpu_s": 0.0}
    for job in job_ids:
        for stage in _get(spark, f"jobs/{job}")["stageIds"]:
            for attempt in _get(spark, f"stages/{stage}"):
                if attempt["status"] == "SKIPPED":
                    continue
                out["stages"] += 1
                out["shuffle_write_bytes"] += attempt["shuffleWriteBytes"]
                out["shuffle_read_bytes"] += attempt["shuffleReadBytes"]
                out["input_bytes"] += attempt["inputBytes"]
                out["task_cpu_s"] += attempt["executorCpuTime"] / 1e9
    out["task_cpu_s"] = round(out["task_cpu_s"], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--modes", default="NONE,GLOBAL_SORT,PARTITION_SORT")
    ap.add_argument("--partition-fields", default="", help="comma separated (default: unpartitioned)")
    ap.add_argument("--data", default="/tmp/hoodpy-bench/data")
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--driver-memory", default=None)
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf
    from hoodpy.table import HoodieTable

    builder = SparkSession.builder.master("local[2]").appName("bulk-insert-modes").config(map=spark_conf())
    if args.driver_memory:
        builder = builder.config("spark.driver.memory", args.driver_memory)
    spark = (builder.config("spark.ui.enabled", "true").config("spark.ui.port", "0")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    src = lineitem.generate(Path(args.data), args.sf)
    parts = [p for p in args.partition_fields.split(",") if p]
    work = Path(args.work)
    results = {"sf": args.sf, "partition_fields": parts, "runs": {}}

    def run(name, fn):
        target = work / name
        shutil.rmtree(target, ignore_errors=True)
        meter = measure(spark)
        with meter as m:
            extra = fn(target)
        jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(meter.group)
        row = {**m.as_dict(), **extra, **stage_totals(spark, sorted(jobs))}
        results["runs"][name] = row
        print(name, json.dumps(row), flush=True)

    def hoodpy(mode, limit=None):
        def fn(path):
            t = HoodieTable.create(spark, str(path), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                                   partition_fields=parts, hive_style_partitioning=True,
                                   options={"hoodie.bulkinsert.sort.mode": mode})
            df = spark.read.parquet(str(src))
            r = t.bulk_insert(df.limit(limit) if limit else df)
            sizes = sorted(s.file_size_in_bytes for s in r.metadata.write_stats)
            return {"files": r.files_added, "bytes_written": r.total_bytes_written,
                    "file_mb_min_median_max": [round(sizes[i] / 2**20, 1) for i in (0, len(sizes) // 2, -1)]}
        return fn

    def spark_parquet(path):
        w = spark.read.parquet(str(src)).write.mode("overwrite")
        (w.partitionBy(*parts) if parts else w).parquet(str(path))
        files = list(path.rglob("*.parquet"))
        return {"files": len(files), "bytes_written": sum(f.stat().st_size for f in files)}

    modes = [m for m in args.modes.split(",") if m]
    # Untimed, on a slice: the first write of a session pays the JVM's class loading and JIT (the first timed
    # run measured ~2x the task CPU of the same run later in the session).
    spark_parquet(work / "warmup")
    for mode in modes:
        shutil.rmtree(work / f"warmup-{mode}", ignore_errors=True)
        hoodpy(mode, limit=50_000)(work / f"warmup-{mode}")
    for mode in modes:
        run(f"hoodpy_bulk_insert_{mode}", hoodpy(mode))
    run("spark_parquet_write", spark_parquet)
    base = results["runs"]["spark_parquet_write"]
    results["ratios_to_spark_parquet"] = {
        n: {k: round(r[k] / base[k], 2) for k in ("seconds", "cpu_jvm_s", "task_cpu_s") if base.get(k)}
        for n, r in results["runs"].items() if n != "spark_parquet_write"}
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(json.dumps(results["ratios_to_spark_parquet"], indent=1))
    spark.stop()


if __name__ == "__main__":
    main()

"""Peak RSS of the Python workers and wall time of one bulk_insert into an empty table.

    PYTHONPATH=$PWD PYSPARK_PYTHON=.venv/bin/python python benchmarks/bulk_insert_memory.py \
        /tmp/hoodpy-bench/data/sf0.25/lineitem_norm.parquet --max-file-size 16777216

Python workers are the processes whose command line names ``pyspark.daemon`` or ``pyspark.worker``; their
RSS is sampled from /proc every 20 ms (the JVM's heap is not counted: it is sized by Spark, not by hoodpy).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq


def _python_workers() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
            pids.append(int(entry))
    return pids


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class WorkerPeak:
    """The largest RSS any single Python worker reached while the block ran."""

    def __enter__(self) -> WorkerPeak:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max([self.peak, *(_rss_bytes(p) for p in _python_workers())])
            time.sleep(0.02)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("--max-file-size", type=int, default=16 << 20)
    parser.add_argument("--block-size", type=int, default=None)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    from hoodpy.table import HoodieTable

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
             .config("spark.ui.enabled", "false").getOrCreate())
    options = {"hoodie.parquet.max.file.size": str(args.max_file_size)}
    if args.block_size:
        options["hoodie.parquet.block.size"] = str(args.block_size)
    work = Path(tempfile.mkdtemp(prefix="hoodpy-bulk-mem-"))
    try:
        df = spark.read.parquet(str(args.source))
        rows = df.count()
        table = HoodieTable.create(spark, str(work / "t"), table_name="lineitem",
                                   record_key_fields=["l_orderkey", "l_linenumber"], partition_fields=[],
                                   options=options)
        with WorkerPeak() as peak:
            started = time.perf_counter()
            table.bulk_insert(df)
            seconds = time.perf_counter() - started
        files = sorted((work / "t").rglob("*.parquet"))
        groups = [pq.ParquetFile(f).metadata.num_row_groups for f in files]
        print(f"rows={rows} seconds={seconds:.1f} python_worker_peak_rss_mb={peak.peak / 2**20:.0f} "
              f"files={len(files)} sizes_mb={[round(f.stat().st_size / 2**20, 1) for f in files]} "
              f"row_groups={groups}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()

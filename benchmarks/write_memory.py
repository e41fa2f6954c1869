"""Peak resident memory of one insert or bulk_insert into an empty table, split by process kind: the driver
(Python), the JVM, and the JVM's Python workers (sampled together every 20 ms; the peaks of the kinds need not
coincide, so the total is sampled as one sum). Memory is not load-sensitive, so one run is a figure.

    PYTHONPATH=$PWD PYSPARK_PYTHON=.venv/bin/python .venv/bin/python benchmarks/write_memory.py \
        --sf 1 --op insert [--option k=v ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lineitem  # noqa: E402
from measure import _thread_children  # noqa: E402
from spark_local import report, spark_session  # noqa: E402

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return 0


def _tree(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        kids = _thread_children(stack.pop())
        out += kids
        stack += kids
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1)
    p.add_argument("--op", choices=("insert", "bulk_insert"), default="insert")
    p.add_argument("--option", action="append", default=[], help="hoodie.* or spark.* k=v (repeatable)")
    p.add_argument("--driver-memory", default="6g", help="as benchmarks/run.py")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--out", default="/tmp/write_memory.json")
    args = p.parse_args()
    options = dict(o.split("=", 1) for o in args.option)

    from hoodpy.table import HoodieTable

    spark = spark_session("write-memory", shuffle_partitions=8, driver_memory=args.driver_memory)
    for k, v in options.items():
        if k.startswith("spark."):
            spark.conf.set(k, v)
    hoodie = {k: v for k, v in options.items() if not k.startswith("spark.")}
    src = lineitem.generate(Path(args.data), args.sf)
    kids = _thread_children(os.getpid())
    jvm = next(k for k in kids if b"java" in Path(f"/proc/{k}/cmdline").read_bytes())
    peaks = {"driver": 0, "jvm": 0, "workers": 0, "total": 0}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            now = {"driver": _rss(os.getpid()), "jvm": _rss(jvm), "workers": sum(_rss(w) for w in _tree(jvm))}
            now["total"] = sum(now.values())
            for k, v in now.items():
                peaks[k] = max(peaks[k], v)
            time.sleep(0.02)

    work = Path(tempfile.mkdtemp(prefix="write-memory-"))
    try:
        table = HoodieTable.create(spark, str(work / "t"), table_name="lineitem",
                                   record_key_fields=list(lineitem.RECORD_KEY), options=hoodie)
        thread = threading.Thread(target=sample, daemon=True)
        started = time.perf_counter()
        thread.start()
        r = getattr(table, args.op)(spark.read.parquet(str(src)))
        seconds = time.perf_counter() - started
        stop.set()
        thread.join()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report({"sf": args.sf, "op": args.op, "options": options, "seconds": round(seconds, 1),
            "files": r.files_added, "bytes_written": r.total_bytes_written,
            "peak_mb": {k: round(v / 2**20) for k, v in peaks.items()}}, args.out)


if __name__ == "__main__":
    main()

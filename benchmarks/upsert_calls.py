"""What one default-options upsert costs besides its data: Spark jobs, driver->JVM (py4j) calls and CPU seconds
per process kind (driver Python, JVM, Python workers), on a copy of one bulk-loaded table per repetition.

Counts are exact and load-independent; CPU seconds come from /proc (utime + stime of the driver, the JVM and
the JVM's Python workers, alive or reaped), so they are less noisy than wall time on a shared machine.

    .venv/bin/python benchmarks/upsert_calls.py --sf 0.1 --reps 5 --out /tmp/upsert_calls.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from spark_local import report, spark_session  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int, children: bool = False) -> float:
    """utime + stime of ``pid`` (with ``children``: plus its reaped children's), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14).
    total = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return total / _TICK


def _jvm_pid() -> int:
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
        kids = [int(p) for p in f.read().split()]
    for pid in kids:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"java" in f.read():
                return pid
    raise RuntimeError("no JVM child of the driver")


def _descendants(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        for tid in os.listdir(f"/proc/{p}/task") if os.path.exists(f"/proc/{p}/task") else []:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            stack += kids
    return out


class CpuClock:
    """CPU seconds of the driver, the JVM (its own threads) and its Python workers (alive and reaped)."""

    def __init__(self):
        self.jvm = _jvm_pid()

    def read(self) -> dict[str, float]:
        workers = 0.0
        for pid in _descendants(self.jvm):
            try:
                workers += _cpu(pid, children=True)
            except OSError:
                continue
        with open(f"/proc/{self.jvm}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        reaped = (int(fields[13]) + int(fields[14])) / _TICK  # workers that exited (the JVM waited on them)
        return {"driver": _cpu(os.getpid()), "jvm": _cpu(self.jvm), "workers": workers + reaped}


class Py4jCalls:
    """Counts driver->JVM calls (every py4j command sent on the gateway) while installed."""

    def __init__(self):
        from py4j import java_gateway

        self.count = 0
        self._patched = []
        for cls in (java_gateway.GatewayClient,):  # clientserver.JavaClient inherits its send_command
            original = cls.send_command

            def counted(client, command, *a, _original=original, **k):
                self.count += 1
                return _original(client, command, *a, **k)

            self._patched.append((cls, original))
            cls.send_command = counted

    def close(self):
        for cls, original in self._patched:
            cls.send_command = original


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=0.1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--out", default="/tmp/upsert_calls.json")
    args = p.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session("upsert-calls", shuffle_partitions=4)
    data = Path(args.data)
    src = lineitem.generate(data, args.sf)
    batch = data / f"sf{args.sf:g}" / "batch-calls-conc.parquet"
    if not batch.exists():
        table = pq.read_table(src)
        n = table.num_rows
        pq.write_table(lineitem.upsert_batch(table, updates=n // 20, inserts=n // 100, concentrated=True), batch)
    work = Path(tempfile.mkdtemp(prefix="upsert-calls-"))
    golden = work / "golden"
    HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY)
                       ).bulk_insert(spark.read.parquet(str(src)))
    clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
    reps = []
    try:
        for rep in range(args.reps + 1):  # the first warms up
            path = work / f"rep{rep}"
            shutil.copytree(golden, path)
            group = f"upsert-calls-{rep}"
            spark.sparkContext.setJobGroup(group, group)
            before = clock.read()
            calls = Py4jCalls()
            try:
                HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(str(batch)))
            finally:
                calls.close()
            after = clock.read()
            shutil.rmtree(path)
            if rep == 0:
                continue
            reps.append({"spark_jobs": len(tracker.getJobIdsForGroup(group)), "py4j_calls": calls.count,
                         **{f"cpu_{k}": round(after[k] - before[k], 2) for k in after}})
            print(reps[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = {k: statistics.median(r[k] for r in reps) for k in reps[0]}
    report({"sf": args.sf, "reps": reps, "median": median}, args.out)


if __name__ == "__main__":
    main()

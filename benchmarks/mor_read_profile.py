"""CPU split of snapshot reads (Q1-style aggregate) on tables benchmarks/run.py --workloads mor leaves in
<work>/scratch (mor-read-cow, mor-read-1, mor-read-5): per read, CPU seconds of the driver's Python, the JVM
and the Python workers (from /proc, so noise from other processes on the machine does not count), Spark jobs
and stages, wall seconds. Reads alternate between tables (A/B/C, ...), medians reported.

    python benchmarks/mor_read_profile.py --work /tmp/mr-work --reps 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import _children  # noqa: E402
from run import q1_aggregate  # noqa: E402
from spark_local import spark_session  # noqa: E402


def _cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (its reaped children included)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(_children(p))
    return out


def cpu_split() -> dict[str, float]:
    """CPU seconds so far of the driver, the JVM (the driver's child java) and the Python workers (the JVM's
    descendants)."""
    me = os.getpid()
    driver = _cpu(me)
    jvm = workers = 0.0
    for child in _children(me):
        jvm += _cpu(child)  # includes reaped workers (cutime) - subtracted below via live workers only
        for w in _tree(child)[1:]:
            workers += _cpu(w)
    return {"driver": driver, "jvm": jvm, "workers": workers}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", default="/tmp/mr-work")
    p.add_argument("--tables", default="mor-read-cow,mor-read-1,mor-read-5")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    spark = spark_session("mor-read-profile", shuffle_partitions=8)
    sc = spark.sparkContext
    from hoodpy.table import HoodieTable

    names = args.tables.split(",")
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for n in names:  # warm-up: JIT, Python workers
        q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n)).read())
    for _ in range(args.reps):
        for n in names:
            group = f"prof-{n}-{time.monotonic_ns()}"
            sc.setJobGroup(group, group)
            before, t0 = cpu_split(), time.perf_counter()
            q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n)).read())
            wall, after = time.perf_counter() - t0, cpu_split()
            tracker = sc.statusTracker()
            jobs = tracker.getJobIdsForGroup(group)
            stages = sum(len(tracker.getJobInfo(j).stageIds) for j in jobs if tracker.getJobInfo(j))
            cpu = {k: round(after[k] - before[k], 3) for k in before}
            runs[n].append({"wall_s": round(wall, 3), "jobs": len(jobs), "stages": stages, **cpu})
    summary = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for n, rs in runs.items()}
    base = summary[names[0]]["wall_s"]
    for n in names:
        summary[n]["wall / first"] = round(summary[n]["wall_s"] / base, 3)
    print(json.dumps(summary, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"runs": runs, "medians": summary}, indent=1))


if __name__ == "__main__":
    main()

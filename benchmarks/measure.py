"""Measuring one benchmark operation: wall time, Spark jobs, time with a Spark job running, peak memory.

Everything goes through public PySpark APIs (job groups and the status tracker), no JVM internals and no
REST calls. A sampler thread polls every ``interval`` seconds; the time with at least one job of the
operation's group active is "Spark job time" (executor work plus task scheduling), the rest of the wall
time is driver-side Python (timeline, listing, footers, planning, commit). Peak memory is the largest
resident set of the whole process tree (driver Python, the JVM and its Python workers) seen while sampling.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field

from cpu_split import CpuSplit

_group_ids = itertools.count()


_CHILDREN_TTL = 0.5  # seconds a process's child list is reused: the JVM has ~100 threads to walk
_children_seen: dict[int, tuple[float, list[int]]] = {}


def _children(pid: int) -> list[int]:
    """Children of every thread of ``pid``: /proc lists a child under the thread that forked it, and the JVM
    starts its Python workers from a thread other than its main one. Walking every thread at each sample
    costs the sampler (in the driver's process) measurable CPU, so a list is reused for a short while."""
    now = time.monotonic()
    seen = _children_seen.get(pid)
    if seen is not None and now - seen[0] < _CHILDREN_TTL:
        return seen[1]
    kids = _thread_children(pid)
    _children_seen[pid] = (now, kids)
    return kids


def _thread_children(pid: int) -> list[int]:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out = []
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return out


def tree_rss_bytes(root: int | None = None) -> int:
    """Resident bytes of ``root`` (default: this process) and all its descendants."""
    total, stack = 0, [root or os.getpid()]
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * page
        except OSError:
            continue
        stack.extend(_children(pid))
    return total


@dataclass
class Measurement:
    seconds: float = 0.0
    spark_jobs: int = 0
    spark_job_seconds: float = 0.0
    driver_seconds: float = 0.0
    peak_rss_mb: float = 0.0
    cpu: dict = field(default_factory=dict)  # CPU seconds by role (cpu_split)
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"seconds": round(self.seconds, 3), "spark_jobs": self.spark_jobs,
                "spark_job_seconds": round(self.spark_job_seconds, 3),
                "driver_seconds": round(self.driver_seconds, 3), "peak_rss_mb": round(self.peak_rss_mb, 1),
                **{f"cpu_{k}_s": round(v, 2) for k, v in self.cpu.items()},
                **self.extra}


class measure:
    """``with measure(spark) as m: ...`` fills ``m`` (a Measurement) when the block ends."""

    def __init__(self, spark=None, interval: float = 0.02):
        self.spark = spark
        self.interval = interval
        self.result = Measurement()
        self._stop = threading.Event()

    def __enter__(self) -> Measurement:
        self.group = f"bench-{os.getpid()}-{next(_group_ids)}"
        if self.spark is not None:
            self.spark.sparkContext.setJobGroup(self.group, self.group)
        self._active = 0.0
        self._peak = tree_rss_bytes()
        self._cpu = CpuSplit(_thread_children)
        self._cpu.start()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._started = time.perf_counter()
        self._thread.start()
        return self.result

    def _sample(self) -> None:
        tracker = self.spark.sparkContext.statusTracker() if self.spark is not None else None
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(self.interval)
            now = time.perf_counter()
            if tracker is not None:
                try:
                    running = [j for j in tracker.getJobIdsForGroup(self.group)
                               if (info := tracker.getJobInfo(j)) is not None and info.status == "RUNNING"]
                except Exception:  # the gateway is busy or closing: skip this sample
                    running = []
                if running:
                    self._active += now - last
            last = now
            self._peak = max(self._peak, tree_rss_bytes())
            self._cpu.sample()
        self._sampler_cpu = time.thread_time()  # this thread's: counted in the driver's CPU, not the operation's

    def __exit__(self, *exc) -> None:
        elapsed = time.perf_counter() - self._started
        self._stop.set()
        self._thread.join()
        r = self.result
        r.seconds = elapsed
        r.peak_rss_mb = self._peak / 2**20
        r.cpu = self._cpu.totals()
        r.extra["cpu_sampler_s"] = round(self._sampler_cpu, 2)
        if self.spark is not None:
            r.spark_jobs = len(self.spark.sparkContext.statusTracker().getJobIdsForGroup(self.group))
            self.spark.sparkContext.setJobGroup("bench-idle", "bench-idle")
        r.spark_job_seconds = min(self._active, elapsed)
        r.driver_seconds = elapsed - r.spark_job_seconds

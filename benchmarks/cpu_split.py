"""CPU seconds of the benchmark's process tree split by role: the driver's Python, the JVM, Spark's Python
workers. Read from /proc (utime + stime), so they are CPU time, not wall time, and hold up under a loaded
machine where wall times do not."""

from __future__ import annotations

import os

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> float | None:
    """CPU seconds (user + system) of ``pid``."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # fields[0] is the state (field 3 of stat): utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / _TICK


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def cpu_by_process(children_of, root: int | None = None) -> dict[int, tuple[str, float]]:
    """Per process of the tree under ``root`` (default: this process): its role ("driver", "jvm" or "workers")
    and its CPU seconds so far. ``children_of(pid)`` lists children."""
    root = root or os.getpid()
    out = {}
    own = _stat(root)
    if own is not None:
        out[root] = ("driver", own)
    stack = list(children_of(root))
    while stack:
        pid = stack.pop()
        cpu = _stat(pid)
        if cpu is None:
            continue
        exe = _cmdline(pid).split(b"\0")
        if exe[0].endswith(b"java"):  # before the workers: the JVM's class path names pyspark too
            out[pid] = ("jvm", cpu)
        elif any(b"pyspark" in a for a in exe):
            out[pid] = ("workers", cpu)
        stack.extend(children_of(pid))
    return out


class CpuSplit:
    """CPU seconds by role between ``start()`` and ``totals()``, with ``sample()`` called often in between: the
    pyspark daemon ignores SIGCHLD, so a worker that exits leaves no trace in its parent's times and counts
    with its last sampled value."""

    def __init__(self, children_of):
        self._children_of = children_of
        self._start: dict[int, tuple[str, float]] = {}
        self._seen: dict[int, tuple[str, float]] = {}

    def start(self) -> None:
        self._start = cpu_by_process(self._children_of)
        self._seen = dict(self._start)

    def sample(self) -> None:
        self._seen.update(cpu_by_process(self._children_of))

    def totals(self) -> dict[str, float]:
        self.sample()
        out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
        for pid, (role, cpu) in self._seen.items():
            out[role] += cpu - self._start.get(pid, (role, 0.0))[1]
        return out

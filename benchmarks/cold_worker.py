"""What a cold Python worker costs a hoodpy upsert, with and without the daemon's preload (issues #16, #18).

PySpark closes Python workers idle for a minute; the next task forks a fresh one from the daemon, which then
imports what the task needs (pandas, pyarrow.compute, hoodpy ...) and unpickles its closure. hoodpy's daemon
(hoodpy/spark_worker.py) imports those modules before it forks (``HOODPY_WORKER_PRELOAD``). Two parts:

- ``imports``: no Spark. A process set up like the daemon (PySpark's daemon modules, then the preload of the
  mode) forks children that import what the upsert's merge task imports; CPU seconds per child (median).
- ``upsert``: an upsert at ``--sf`` into a copy of a bulk-inserted table, per mode (``none`` = PySpark's
  behaviour, ``default`` = hoodpy's preload list), alternating modes within each rep: *cold* after the
  workers were killed by pid (what the idle timeout does: Spark discards dead idle workers and forks new
  ones; no 60 s wait), then *warm* right after. Each mode gets its own daemon: the mode is a worker
  environment variable, so it is a separate PySpark worker factory. Figures: wall, CPU of the daemon and of
  the forked workers (from /proc, CPU time, so they hold up on a loaded machine), workers forked.

- ``--workload compaction``: instead of the upsert, compaction of a copy of ``--state`` (a merge-on-read table
  with log files, e.g. benchmarks/run.py's ``<work>/scratch/mor-read-1``: the one-log state).

Modes (``--modes``): ``none`` (no preload; huge pages off as in ``default``), ``default`` (hoodpy's daemon as
shipped), ``thp`` (the default preload with mimalloc's transparent huge pages left on, ``MIMALLOC_ALLOW_THP=1``:
the daemon before it turned them off). ``busiest_worker`` is the pid of the worker whose CPU the timed step
used most (the one that took the task).

    .venv/bin/python benchmarks/cold_worker.py --sf 0.1 --reps 3 --out /tmp/cold_worker.json
    .venv/bin/python benchmarks/cold_worker.py --workload compaction --state <work>/scratch/mor-read-1 \
        --modes thp,default --reps 3 --out /tmp/cold_compaction.json
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lineitem  # noqa: E402
from cpu_split import _TICK, _cmdline  # noqa: E402
from measure import _thread_children, measure  # noqa: E402
from spark_local import report, spark_session  # noqa: E402

from hoodpy.arrow_pool import ARROW_ALLOCATOR_ENV  # noqa: E402
from hoodpy.spark_worker import PRELOAD_ENV  # noqa: E402

# The worker environment of each mode (variables of MODE_VARS not named: unset).
MODES = {"none": {PRELOAD_ENV: "none"}, "default": {}, "thp": {"MIMALLOC_ALLOW_THP": "1"}}
MODE_VARS = (PRELOAD_ENV, *ARROW_ALLOCATOR_ENV)
# What the upsert's merge task imported in a cold worker (cProfile of a worker, before preloading).
TASK_IMPORTS = ("pandas", "pyarrow.compute", "pyarrow.parquet", "pyarrow.dataset", "fastavro", "hoodpy.write.merge")
KEY = list(lineitem.RECORD_KEY)

_FORK_CHILDREN = r"""
import os, sys, time
from hoodpy.spark_worker import drop_archives_from_path, preload, preload_list
from hoodpy.arrow_pool import set_allocator_env
start = time.process_time()
set_allocator_env()
drop_archives_from_path()
preload(preload_list(os.environ.get({env!r})))
from pyspark import daemon  # noqa: F401  (what PySpark's daemon imports)
print("daemon", time.process_time() - start, flush=True)
for _ in range({n}):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        t = time.process_time()
        for m in {mods!r}:
            __import__(m)
        os.write(w, repr(time.process_time() - t).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    print("child", os.read(r, 100).decode(), flush=True)
"""


def fork_imports(mode: str, n: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in MODE_VARS}
    env.update(MODES[mode])
    code = _FORK_CHILDREN.format(env=PRELOAD_ENV, n=n, mods=TASK_IMPORTS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    lines = [line.split() for line in out.stdout.splitlines()]
    children = [float(v) for k, v in lines if k == "child"]
    return {"daemon_start_cpu_s": round(next(float(v) for k, v in lines if k == "daemon"), 3),
            "child_import_cpu_s_median": round(statistics.median(children), 4),
            "child_import_cpu_s": [round(c, 4) for c in children]}


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()  # [0] is field 3 of proc(5): the state
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def _usage(pid: int) -> tuple[float, float, int]:
    """(user CPU s, system CPU s, minor page faults) of ``pid``; system time and faults show first-touch
    memory costs, which a fresh worker pays and a reused one mostly does not."""
    fields = _stat_fields(pid)
    if not fields:
        return 0.0, 0.0, 0
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK, int(fields[7])


def python_processes() -> dict[int, str]:
    """This benchmark's PySpark processes by pid: "daemon" (a child of the JVM) or "worker" (forked by one)."""
    out: dict[int, str] = {}
    for jvm in _thread_children(os.getpid()):
        if not _cmdline(jvm).split(b"\0")[0].endswith(b"java"):
            continue
        for daemon in _thread_children(jvm):
            if b"python" not in _cmdline(daemon).split(b"\0")[0]:
                continue
            out[daemon] = "daemon"
            for worker in _thread_children(daemon):
                out[worker] = "worker"
    return out


def kill_workers() -> int:
    """SIGKILL every forked worker (never a daemon), as the idle timeout's socket close ends them."""
    workers = [pid for pid, role in python_processes().items() if role == "worker"]
    for pid in workers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_ppid(p) is not None for p in workers):
        time.sleep(0.05)  # the daemon ignores SIGCHLD, so the kernel reaps them
    return len(workers)


def set_mode(spark, mode: str) -> None:
    env = spark.sparkContext.environment  # each Python function ships it: a new value is a new daemon
    for k in MODE_VARS:
        env.pop(k, None)
    env.update(MODES[mode])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--forks", type=int, default=5, help="children per mode in the imports part")
    ap.add_argument("--data", default="/tmp/hoodpy-bench/data")
    ap.add_argument("--work", default="/tmp/worker-warm/cold_worker")
    ap.add_argument("--out", default="cold_worker.json")
    ap.add_argument("--workload", choices=("upsert", "compaction"), default="upsert")
    ap.add_argument("--state", default=None, help="compaction: the merge-on-read table to compact copies of")
    ap.add_argument("--modes", default="none,default", help=f"comma-separated, of {', '.join(MODES)}")
    ap.add_argument("--driver-memory", default=None)
    args = ap.parse_args()

    modes = [m for m in args.modes.split(",") if m]
    if args.workload == "compaction" and not args.state:
        ap.error("--workload compaction needs --state")
    result: dict = {"sf": args.sf, "workload": args.workload, "task_imports": list(TASK_IMPORTS), "imports": {},
                    args.workload: {}}
    for mode in modes:
        result["imports"][mode] = fork_imports(mode, args.forks)
    print(result["imports"], flush=True)

    data, work = Path(args.data), Path(args.work)
    if args.workload == "upsert":
        src = lineitem.generate(data, args.sf)
        batch = lineitem.concentrated_upsert_batch(data, args.sf)
    spark = spark_session("cold-worker", shuffle_partitions=4, driver_memory=args.driver_memory)
    from hoodpy.table import HoodieTable

    golden = Path(args.state) if args.workload == "compaction" else work / f"golden-sf{args.sf:g}"
    if args.workload == "upsert" and not (golden / ".done").exists():
        shutil.rmtree(golden, ignore_errors=True)
        HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=KEY,
                           partition_fields=[], hive_style_partitioning=True).bulk_insert(spark.read.parquet(str(src)))
        (golden / ".done").touch()

    def step() -> dict:
        dest = work / "scratch"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(golden, dest)
        before = python_processes()
        usage_before = {pid: _usage(pid) for pid in before}
        with measure(spark) as m:
            if args.workload == "compaction":
                HoodieTable.for_path(spark, str(dest)).compaction.run()
            else:
                HoodieTable.for_path(spark, str(dest)).upsert(spark.read.parquet(str(batch)))
        after = python_processes()
        use = {"daemon": [0.0, 0.0, 0], "worker": [0.0, 0.0, 0]}
        by_worker = {}
        for pid, role in after.items():
            now, was = _usage(pid), usage_before.get(pid, (0.0, 0.0, 0))
            use[role] = [u + n - w for u, n, w in zip(use[role], now, was)]
            if role == "worker":
                by_worker[pid] = now[0] + now[1] - was[0] - was[1]
        return {"seconds": round(m.seconds, 3), "spark_jobs": m.spark_jobs,
                **{k: round(m.cpu.get(k[4:-2], 0.0), 2) for k in ("cpu_driver_s", "cpu_jvm_s")},
                "cpu_daemon_s": round(use["daemon"][0] + use["daemon"][1], 2),
                "cpu_workers_s": round(use["worker"][0] + use["worker"][1], 2),
                "cpu_workers_sys_s": round(use["worker"][1], 2), "workers_minor_faults": use["worker"][2],
                "workers_forked": len([p for p, r in after.items() if r == "worker" and p not in before]),
                "busiest_worker": max(by_worker, key=by_worker.get) if by_worker else None}

    runs: dict = {mode: {"cold": [], "warm": []} for mode in modes}
    for mode in modes:  # start each mode's daemon (and the JIT) untimed
        set_mode(spark, mode)
        step()
    for rep in range(args.reps):
        for mode in (modes if rep % 2 == 0 else modes[::-1]):
            set_mode(spark, mode)
            kill_workers()
            runs[mode]["cold"].append(step())
            runs[mode]["warm"].append(step())
            print(rep, mode, runs[mode]["cold"][-1], runs[mode]["warm"][-1], flush=True)
    for mode, by_state in runs.items():
        summary = {}
        for state, reps in by_state.items():
            summary[state] = {f"median_{k}": statistics.median(r[k] for r in reps) for k in reps[0]
                              if k != "busiest_worker"}
            summary[state]["reps"] = reps
        summary["cold_minus_warm_worker_cpu_s"] = round(
            summary["cold"]["median_cpu_workers_s"] - summary["warm"]["median_cpu_workers_s"], 2)
        result[args.workload][mode] = summary
    spark.stop()
    shutil.rmtree(work / "scratch", ignore_errors=True)
    report(result, args.out)


if __name__ == "__main__":
    main()

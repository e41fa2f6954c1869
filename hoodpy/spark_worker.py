"""A PySpark daemon for Python workers whose interpreter has pyspark installed (local mode, or executors
built from the same environment): ``spark.python.daemon.module=hoodpy.spark_worker``.

Why: Spark puts the spark-core jar (and, in a Spark distribution, pyspark.zip and py4j's zip) on the
workers' PYTHONPATH. At the start of every task PySpark calls ``importlib.invalidate_caches()``, and on
Python 3.11 a zip importer then re-reads its archive's whole directory: for the spark-core jar that is
~0.2-0.3 s of CPU per Python task, more than merging a small file group costs. When pyspark imports
without those archives, this daemon drops them from the path before starting PySpark's own daemon, so
tasks pay nothing. When it does not (pyspark is only in the archives), the path is left as it was.

``spark_conf()`` gives the setting for sessions whose workers run the driver's interpreter with hoodpy
installed (the daemon starts before any ``spark.submit.pyFiles`` are on the path, so a cluster that ships
hoodpy as a zip keeps PySpark's default daemon).

The daemon also imports, before it forks any worker, the modules hoodpy's tasks import (``PRELOAD_ENV``):
forked workers inherit them, so a worker Spark starts after its idle ones were closed (PySpark closes workers
idle for a minute) does not pay ~0.4 CPU s of imports (pandas, pyarrow.compute, hoodpy) in its first task.
Fork safety: the only thread these imports add is jemalloc's background purger (pyarrow's default pool is
mimalloc; numpy's OpenBLAS thread is there under PySpark's own daemon too); Arrow's thread pool starts
lazily, in the worker, and forked workers allocate from both pools normally (tests/unit/test_spark_worker.py).

And it turns transparent huge pages off for Arrow's default memory pool in its workers
(:mod:`hoodpy.arrow_pool`): the first time a worker's task touches a gigabyte (compacting an 80 MB file slice)
it would fault in ~1,600 2 MB pages, 1.5-5 s of system CPU that a reused worker mostly does not pay again
(benchmarks/cold_worker.py). With 4 KB pages the first task costs what a warm one does.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import warnings

# mimalloc (Arrow's default pool) reads its options from the environment when libarrow loads: set before the
# preload imports pyarrow, forked workers inherit it.
from hoodpy.arrow_pool import set_allocator_env

DAEMON_MODULE_CONF = "spark.python.daemon.module"
PRELOAD_ENV = "HOODPY_WORKER_PRELOAD"
# What a cold worker's first hoodpy task imported (cProfile of the upsert's merge task in a fresh worker):
# pandas (pyarrow and PySpark's Arrow path import it lazily), pyarrow's compute / parquet / dataset modules
# (pq.read_table imports the last), fastavro, and hoodpy's task modules, all of which hoodpy.table reaches.
DEFAULT_PRELOAD = ("pandas", "pyarrow.compute", "pyarrow.parquet", "pyarrow.dataset", "fastavro", "hoodpy.table")


def spark_conf(preload: str | None = None) -> dict[str, str]:
    """Spark configuration that starts Python workers through this daemon; ``preload`` (comma-separated
    modules, or "none") replaces the modules the daemon imports before forking workers."""
    conf = {DAEMON_MODULE_CONF: __name__}
    if preload is not None:
        conf[f"spark.executorEnv.{PRELOAD_ENV}"] = preload
    return conf


def preload_list(setting: str | None) -> tuple[str, ...]:
    """Modules to preload for ``PRELOAD_ENV``'s value: unset means ``DEFAULT_PRELOAD``, "" or "none" nothing,
    else the comma-separated module names."""
    if setting is None:
        return DEFAULT_PRELOAD
    if setting.strip().lower() in ("", "none"):
        return ()
    return tuple(m.strip() for m in setting.split(",") if m.strip())


def preload(modules: tuple[str, ...]) -> list[str]:
    """Import ``modules``; returns those that imported. One that fails is skipped with a warning: its tasks
    then import it themselves, as under PySpark's own daemon. Anything printed meanwhile goes to stderr, as
    the daemon's stdout carries its port to the JVM."""
    loaded = []
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as e:  # noqa: BLE001 - any failure must leave the daemon working
                warnings.warn(f"hoodpy.spark_worker: not preloading {name} ({type(e).__name__}: {e}); "
                              "tasks import it themselves", RuntimeWarning, stacklevel=2)
            else:
                loaded.append(name)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    return loaded


def _is_archive(entry: str) -> bool:
    return entry.endswith((".jar", ".zip")) and not entry.endswith(f"python{sys.version_info[0]}{sys.version_info[1]}.zip")


def drop_archives_from_path() -> list[str]:
    """Remove jar / zip entries (except the standard library's zip) from ``sys.path`` when pyspark and py4j
    import without them; returns what was removed."""
    archives = [p for p in sys.path if _is_archive(p)]
    if not archives:
        return []
    kept = [p for p in sys.path if p not in archives]
    saved = sys.path[:]
    sys.path[:] = kept
    importlib.invalidate_caches()
    try:
        found = all(_spec_outside(name, archives) for name in ("pyspark", "py4j"))
    except (ImportError, ValueError):
        found = False
    if not found:
        sys.path[:] = saved
        return []
    for p in archives:
        sys.path_importer_cache.pop(p, None)
    return archives


def _spec_outside(name: str, archives: list[str]) -> bool:
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
    return origin is not None and not any(origin.startswith(a) for a in archives)


if __name__ == "__main__":
    set_allocator_env()
    drop_archives_from_path()
    preload(preload_list(os.environ.get(PRELOAD_ENV)))
    from pyspark import daemon

    daemon.manager()

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
"""

from __future__ import annotations

import importlib.util
import sys

DAEMON_MODULE_CONF = "spark.python.daemon.module"


def spark_conf() -> dict[str, str]:
    """Spark configuration that starts Python workers through this daemon."""
    return {DAEMON_MODULE_CONF: __name__}


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
    drop_archives_from_path()
    from pyspark import daemon

    daemon.manager()

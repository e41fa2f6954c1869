"""Arrow's default memory pool in hoodpy's processes: transparent huge pages off.

mimalloc (pyarrow's default pool) reserves its arenas advised ``MADV_HUGEPAGE``, so buffers are first touched
as 2 MB pages: a worker's first task that touches a gigabyte (compacting an 80 MB file slice at SF 1) pays
1.5-5 s of system CPU for it (benchmarks/cold_worker.py), and the driver's Arrow work on an upsert's keys
(sorting, locating and targeting SF 1's 360k keys) 0-380 ms, varying with the machine's memory, against 0-40 ms
with 4 KB pages. ``MIMALLOC_ALLOW_THP=0`` turns that off: mimalloc reads it when libarrow loads and then calls
``prctl(PR_SET_THP_DISABLE)`` for the process. The worker daemon (:mod:`hoodpy.spark_worker`) sets it before
its workers import pyarrow; ``import hoodpy`` sets it for the driver, calling prctl itself when pyarrow was
loaded first. An environment that sets the variable wins (``MIMALLOC_ALLOW_THP=1`` keeps huge pages).
"""

from __future__ import annotations

import os
import sys

ARROW_ALLOCATOR_ENV = {"MIMALLOC_ALLOW_THP": "0"}
PR_SET_THP_DISABLE = 41  # linux/prctl.h


def set_allocator_env(environ=os.environ) -> dict[str, str]:
    """Set ``ARROW_ALLOCATOR_ENV``'s variables the environment does not set already (a user's
    ``spark.executorEnv.MIMALLOC_ALLOW_THP=1`` wins); returns those set. No effect on a pyarrow already loaded."""
    added = {k: v for k, v in ARROW_ALLOCATOR_ENV.items() if k not in environ}
    environ.update(added)
    return added


def set_driver_allocator(environ=os.environ) -> bool:
    """:func:`set_allocator_env` for the driver (hoodpy's import calls it), where pyarrow may be loaded already (a
    script that imported it first): then huge pages are turned off here as mimalloc would have, for the whole
    process; processes started after (a local session's JVM) inherit that. Returns whether they were turned off
    now."""
    if not set_allocator_env(environ) or "pyarrow" not in sys.modules or not sys.platform.startswith("linux"):
        return False
    import ctypes

    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "mimalloc":
        return False
    return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0

"""hoodpy's PySpark daemon drops Spark's jar / zip archives from the workers' path only when pyspark and py4j
import without them, and preloads hoodpy's task modules before it forks workers."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hoodpy.arrow_pool import ARROW_ALLOCATOR_ENV, PR_SET_THP_DISABLE, set_allocator_env
from hoodpy.spark_worker import (
    DAEMON_MODULE_CONF,
    DEFAULT_PRELOAD,
    PRELOAD_ENV,
    drop_archives_from_path,
    preload_list,
    spark_conf,
)


def test_spark_conf_names_this_daemon_module():
    assert spark_conf() == {DAEMON_MODULE_CONF: "hoodpy.spark_worker"}


def test_archives_are_dropped_when_pyspark_imports_without_them(tmp_path, monkeypatch):
    jar = tmp_path / "spark-core_2.13-4.0.5.jar"
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("org/apache/spark/Dummy.class", b"\xca\xfe")
    stdlib_zip = f"{sys.prefix}/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip"
    monkeypatch.setattr(sys, "path", [str(jar), stdlib_zip, *sys.path])
    assert drop_archives_from_path() == [str(jar)]
    assert str(jar) not in sys.path and str(jar) not in sys.path_importer_cache
    assert stdlib_zip in sys.path  # the standard library's own zip stays


def test_path_is_kept_when_pyspark_lives_only_in_the_archive(tmp_path):
    # A fresh interpreter whose only pyspark / py4j are inside a zip (as on a worker without pyspark installed).
    archive = tmp_path / "pyspark.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pyspark/__init__.py", "")
        z.writestr("py4j/__init__.py", "")
    code = ("import sys; sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; "
            f"sys.path.insert(0, {str(archive)!r}); "
            "from hoodpy.spark_worker import drop_archives_from_path; "
            f"print(drop_archives_from_path(), {str(archive)!r} in sys.path)")
    repo = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    assert out.stdout.strip() == "[] True", out.stderr


def test_spark_conf_can_set_the_preload_for_workers():
    assert spark_conf(preload="none") == {DAEMON_MODULE_CONF: "hoodpy.spark_worker",
                                          f"spark.executorEnv.{PRELOAD_ENV}": "none"}


def test_preload_list_default_none_and_explicit():
    assert preload_list(None) == DEFAULT_PRELOAD
    assert "hoodpy.table" in DEFAULT_PRELOAD and "pandas" in DEFAULT_PRELOAD
    assert preload_list("none") == preload_list("") == preload_list(" NONE ") == ()
    assert preload_list("pyarrow.compute, fastavro,") == ("pyarrow.compute", "fastavro")


def _run(code: str, tmp_path, **env) -> subprocess.CompletedProcess:
    repo = str(Path(__file__).resolve().parents[2])
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, str(tmp_path)]), **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, env=environ,
                          check=True)


def test_a_module_that_fails_is_skipped_with_a_warning_and_output_stays_off_stdout(tmp_path):
    # The daemon's stdout carries its port to the JVM: a preloaded module's print must not reach it.
    (tmp_path / "hoodpy_test_noisy.py").write_text("print('noise')\n")
    (tmp_path / "hoodpy_test_broken.py").write_text("raise RuntimeError('boom')\n")
    out = _run("import sys; from hoodpy.spark_worker import preload; "
               "r = preload(('hoodpy_test_broken', 'hoodpy_test_noisy', 'hoodpy_test_missing')); "
               "print(r, 'hoodpy_test_broken' in sys.modules)", tmp_path)
    assert out.stdout == "['hoodpy_test_noisy'] False\n"
    assert "noise" in out.stderr
    assert "not preloading hoodpy_test_broken (RuntimeError: boom)" in out.stderr
    assert "not preloading hoodpy_test_missing (ModuleNotFoundError" in out.stderr


def test_workers_forked_after_the_default_preload_import_nothing_and_run_arrow_threads(tmp_path):
    # What the daemon does (preload, then fork per task): the child finds hoodpy's task modules loaded and
    # Arrow's thread pool (created lazily, after the fork) and allocators work in it.
    code = f"""
import os, sys
from hoodpy.spark_worker import DEFAULT_PRELOAD, preload
assert preload(DEFAULT_PRELOAD) == list(DEFAULT_PRELOAD)
loaded = set(sys.modules)
pid = os.fork()
if pid == 0:
    import numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
    import hoodpy.write.merge, hoodpy.write.log_append, hoodpy.services.compaction.execute  # noqa: F401
    ok = set(sys.modules) == loaded
    for pool in (pa.default_memory_pool(), pa.jemalloc_memory_pool()):
        a = pa.array(np.arange(400_000, dtype=np.int64)[::-1], memory_pool=pool)
        pq.write_table(pa.table({{"a": a}}), {str(tmp_path / "a.parquet")!r}, row_group_size=50_000)
        back = pq.read_table({str(tmp_path / "a.parquet")!r}, use_threads=True)
        ok = ok and pc.sort_indices(back["a"])[0].as_py() == 399_999 and pc.sum(back["a"]).as_py() == 79_999_800_000
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    assert _run(code, tmp_path).stdout == "0\n"


def test_allocator_env_is_set_unless_the_environment_sets_it():
    environ = {"PATH": "/bin"}
    assert set_allocator_env(environ) == ARROW_ALLOCATOR_ENV == {"MIMALLOC_ALLOW_THP": "0"}
    assert environ == {"PATH": "/bin", "MIMALLOC_ALLOW_THP": "0"}
    user = {"MIMALLOC_ALLOW_THP": "1"}  # e.g. spark.executorEnv.MIMALLOC_ALLOW_THP=1
    assert set_allocator_env(user) == {} and user == {"MIMALLOC_ALLOW_THP": "1"}


def test_arrow_pool_of_a_daemon_set_up_process_and_its_forked_child_uses_no_huge_pages(tmp_path):
    # mimalloc reads its options when libarrow loads (in the daemon, at the preload) and prints them when
    # verbose: the forked worker's allocations come from an arena that is not advised MADV_HUGEPAGE.
    code = """
import os
from hoodpy.arrow_pool import set_allocator_env
from hoodpy.spark_worker import preload
set_allocator_env()
preload(("pyarrow",))
import pyarrow as pa
pid = os.fork()
if pid == 0:
    a = pa.allocate_buffer(64 << 20)  # a fresh arena's worth
    os._exit(0 if a.size == 64 << 20 and pa.default_memory_pool().backend_name == "mimalloc" else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    repo = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True,
                         env={**environ, "PYTHONPATH": repo, "MIMALLOC_VERBOSE": "1"})
    assert out.stdout == "0\n", out.stderr
    assert "option 'allow_thp': 0" in out.stderr


def test_the_daemon_module_loads_no_pyarrow_before_it_sets_the_allocator_env(tmp_path):
    # ``python -m hoodpy.spark_worker`` imports hoodpy first: were libarrow loaded then, mimalloc would have read
    # its options before set_allocator_env ran.
    out = _run("import sys, hoodpy.spark_worker; print('pyarrow' in sys.modules)", tmp_path)
    assert out.stdout == "False\n"


def test_the_package_import_leaves_the_daemon_module_to_run_as_main(tmp_path):
    # `python -m hoodpy.spark_worker` imports the package first: had the package imported the daemon module, runpy
    # would run it a second time as __main__ (its RuntimeWarning, and two copies of its state).
    out = _run("import runpy, sys, warnings; warnings.simplefilter('error'); import hoodpy; "
               "print('hoodpy.spark_worker' in sys.modules)", tmp_path)
    assert out.stdout == "False\n"


_THP_STATE = """
{first}
import hoodpy
import pyarrow as pa
pa.allocate_buffer(1 << 20)
status = open("/proc/self/status").read()
print(status.split("THP_enabled:")[1].split()[0], pa.default_memory_pool().backend_name)
"""
_LINUX_THP = pytest.mark.skipif(
    not sys.platform.startswith("linux") or "THP_enabled:" not in open("/proc/self/status").read(),
    reason="the process's huge-page state is Linux's /proc/self/status")


def _thp_state(first: str, **env) -> list[str]:
    """(THP_enabled, Arrow's pool) of a process importing ``first`` then hoodpy and pyarrow. It starts with huge
    pages allowed: children inherit the setting, and this test process imported hoodpy."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")}
    out = subprocess.run([sys.executable, "-c", _THP_STATE.format(first=first)], capture_output=True, text=True,
                         check=True, env={**environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env},
                         preexec_fn=lambda: ctypes.CDLL(None).prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
    return out.stdout.split()


@_LINUX_THP
@pytest.mark.parametrize("first", ["", "import pyarrow"])
def test_the_driver_importing_hoodpy_turns_huge_pages_off_for_arrows_pool_whether_pyarrow_loaded_first(first):
    # mimalloc turns them off for the process when libarrow loads with MIMALLOC_ALLOW_THP=0; a pyarrow loaded
    # before hoodpy read no such setting, so hoodpy does what mimalloc would have done.
    assert _thp_state(first) == ["0", "mimalloc"]


@_LINUX_THP
def test_an_environment_allowing_huge_pages_wins_in_the_driver():
    assert _thp_state("import pyarrow", MIMALLOC_ALLOW_THP="1") == ["1", "mimalloc"]

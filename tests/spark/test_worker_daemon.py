"""Python workers started through hoodpy's daemon (the session conf every local hoodpy session sets) have no
Spark archive on their path, so a task does not re-read the spark-core jar's directory, and inherit the
modules the daemon preloaded, so a freshly forked worker does not import them again."""

from __future__ import annotations

import uuid
from contextlib import contextmanager

import pytest

from hoodpy.spark_worker import PRELOAD_ENV
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.spark]


def test_workers_run_without_spark_archives_on_their_path(spark):
    def _worker_path(_):  # nested, so it ships by value (the test module is not importable on workers)
        import sys

        yield [p for p in sys.path if p.endswith((".jar", ".zip"))]

    assert spark.conf.get("spark.python.daemon.module") == "hoodpy.spark_worker"
    seen = spark.sparkContext.parallelize(range(4), 2).mapPartitions(_worker_path).collect()
    assert len(seen) == 2
    for archives in seen:
        assert not [p for p in archives if p.endswith(".jar")], archives


@contextmanager
def _fresh_daemon(spark, **env):
    """Tasks started inside run on workers of a daemon of their own: the worker environment is part of PySpark's
    worker-factory key, so a new value (restored after) starts a new daemon with ``env``."""
    environment = spark.sparkContext.environment
    saved = dict(environment)
    environment.update(HOODPY_TEST_DAEMON=uuid.uuid4().hex, **env)
    try:
        yield
    finally:
        environment.clear()
        environment.update(saved)


def _modules_at_fork(spark) -> list[tuple[bool, bool]]:
    def _seen(_):  # nested: ships by value; a plain RDD task imports neither pandas nor hoodpy.table itself
        import sys

        yield ("pandas" in sys.modules, "hoodpy.table" in sys.modules)

    return spark.sparkContext.parallelize(range(2), 2).mapPartitions(_seen).collect()


def test_daemon_preloads_hoodpys_task_modules_and_none_turns_it_off(spark):
    with _fresh_daemon(spark):
        assert _modules_at_fork(spark) == [(True, True)] * 2
    with _fresh_daemon(spark, **{PRELOAD_ENV: "none"}):
        assert _modules_at_fork(spark) == [(False, False)] * 2


def _allow_thp(spark) -> list[str | None]:
    def _seen(_):  # nested: ships by value
        import os

        yield os.environ.get("MIMALLOC_ALLOW_THP")

    return spark.sparkContext.parallelize(range(2), 2).mapPartitions(_seen).collect()


def test_daemon_turns_arrows_huge_pages_off_unless_the_worker_environment_sets_them(spark):
    with _fresh_daemon(spark):
        assert _allow_thp(spark) == ["0", "0"]
    with _fresh_daemon(spark, MIMALLOC_ALLOW_THP="1"):
        assert _allow_thp(spark) == ["1", "1"]


def test_daemon_with_a_module_that_fails_to_import_still_runs_tasks(spark):
    with _fresh_daemon(spark, **{PRELOAD_ENV: "hoodpy_no_such_module,pyarrow.compute"}):
        assert spark.range(0, 10, 1, 2).selectExpr("sum(id) AS s").collect()[0].s == 45
        assert sorted(spark.sparkContext.parallelize(range(6), 2).map(lambda x: x * x).collect()) == [
            0, 1, 4, 9, 16, 25]


def test_preloaded_workers_run_hoodpy_upserts_and_arrow_threads(spark, table_path):
    ddl = "id int, p string, ts long, v string"
    with _fresh_daemon(spark):
        t = HoodieTable.create(spark, table_path, table_name="warm_t", record_key_fields=["id"],
                               partition_fields=["p"], precombine_field="ts")
        t.upsert(spark.createDataFrame([(i, "ab"[i % 2], 1, f"v{i}") for i in range(20)], ddl))
        t.upsert(spark.createDataFrame([(3, "b", 2, "u3"), (4, "a", 2, "u4"), (50, "a", 2, "n50")], ddl))
        got = sorted((r.id, r.p, r.v) for r in t.read().select("id", "p", "v").collect())

        def _threaded(_):  # Arrow's thread pool in a worker forked from a daemon that imported pyarrow
            import tempfile

            import pyarrow as pa
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            values = pa.array([(i * 7919) % 200_003 for i in range(200_000)], pa.int64())
            with tempfile.TemporaryDirectory() as d:
                pq.write_table(pa.table({"x": values}), f"{d}/x.parquet", row_group_size=20_000)
                back = pq.read_table(f"{d}/x.parquet", use_threads=True)
            order = pc.sort_indices(back, [("x", "descending")])
            yield (pc.sum(back["x"]).as_py(), back["x"][order[0].as_py()].as_py())

        threaded = spark.sparkContext.parallelize(range(2), 2).mapPartitions(_threaded).collect()
    expected = {i: (("ab"[i % 2]), f"v{i}") for i in range(20)}
    expected.update({3: ("b", "u3"), 4: ("a", "u4"), 50: ("a", "n50")})
    assert got == sorted((k, p, v) for k, (p, v) in expected.items())
    total = sum((i * 7919) % 200_003 for i in range(200_000))
    assert threaded == [(total, max((i * 7919) % 200_003 for i in range(200_000)))] * 2

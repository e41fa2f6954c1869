"""Python workers started through hoodpy's daemon (the session conf every local hoodpy session sets) have no
Spark archive on their path, so a task does not re-read the spark-core jar's directory."""

from __future__ import annotations

import pytest

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

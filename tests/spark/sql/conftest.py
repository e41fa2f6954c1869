"""Fixtures of the SQL-layer tests: the shared session with hoodpy's SQL layer enabled for one module,
and one catalog database per module."""

from __future__ import annotations

import pytest

from sql_ext import disable, enable


@pytest.fixture(scope="module")
def hoodpy_spark(spark):
    """The session-wide SparkSession with ``enable`` applied for this module (disabled afterwards)."""
    enable(spark)
    yield spark
    disable(spark)


@pytest.fixture(scope="module")
def database(hoodpy_spark, request):
    name = "hoodpy_" + request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    hoodpy_spark.sql(f"CREATE DATABASE IF NOT EXISTS {name}")
    yield name
    hoodpy_spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")

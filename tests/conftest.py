"""Shared fixtures: one local SparkSession per pytest session, the Java Hudi sample tables."""

from __future__ import annotations

import os
import sys

import pytest

# Re-exported: tests import them from here (``from conftest import unzip_sample``) or, where another
# conftest module shadows the name, from java_samples.
from java_samples import REPO, SAMPLES_DIR, unzip_sample  # noqa: F401


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf

    warehouse = tmp_path_factory.mktemp("warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hoodpy-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={warehouse}")
        .config(map=spark_conf())  # hoodpy's worker daemon, as dbt's and the demo's local sessions use
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def table_path(tmp_path) -> str:
    return str(tmp_path / "table")

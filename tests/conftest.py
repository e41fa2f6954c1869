"""Shared fixtures: one local SparkSession per pytest session, the Java Hudi sample tables."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES_DIR = Path(os.environ.get("HOODPY_HUDI_SAMPLES", REPO.parent / "shared" / "hudi-samples"))


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


def unzip_sample(name: str, dest: Path) -> Path:
    """Unzip one sample table into ``dest``; returns the table's base path."""
    zip_path = SAMPLES_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        members = [m for m in z.namelist() if not m.startswith("__MACOSX") and ".DS_Store" not in m]
        z.extractall(dest, members)
    return dest / name

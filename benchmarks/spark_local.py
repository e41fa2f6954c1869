"""The benchmarks' local SparkSession: two cores, no UI, UTC, quiet logs, hoodpy's worker daemon."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager


def spark_session(app: str, *, shuffle_partitions: int, driver_memory: str | None = None,
                  extra: dict[str, str] | None = None):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hoodpy.spark_worker import spark_conf

    builder = SparkSession.builder.master("local[2]").appName(app)
    builder = builder.config(map=spark_conf())  # workers run this interpreter: skip the per-task jar rescan
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    spark = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def report(result: dict, out: str) -> None:
    """Print a benchmark's result as JSON and write it to ``out``."""
    import json
    from pathlib import Path

    text = json.dumps(result, indent=2)
    print(text)
    Path(out).write_text(text + "\n")


@contextmanager
def hoodpy_session(app: str, *, shuffle_partitions: int, prefix: str):
    """(session with hoodpy's layer enabled, a scratch folder); the session stops and the folder goes after."""
    import shutil
    import tempfile
    from pathlib import Path

    from sql_ext import enable

    spark = enable(spark_session(app, shuffle_partitions=shuffle_partitions))
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield spark, work
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)

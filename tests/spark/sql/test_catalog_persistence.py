"""hoodpy tables survive a new SparkSession on the same (Hive/Derby) metastore. Runs in a child process: a
pytest process can hold only one JVM, and the shared test session has no Hive support. Slow tier (~100 s,
mostly the Derby metastore's initialisation); the default tier checks a ``newSession()`` instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("hive_catalog_session.py")


def test_table_survives_a_new_session_on_the_same_metastore(tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    seen = json.loads(lines[-1].removeprefix("RESULT "))
    assert seen["tables"] == ["trips"]
    assert seen["properties"]["primaryKey"] == "id"
    assert seen["properties"]["hoodie.base.path"].endswith("lake.db/trips")
    assert "HOODPY-TABLE--query-it-through-sql_ext.enable" in seen["plain_read"]
    assert seen["rows"] == [[1, "a", "sf"], [2, "b", "nyc"]]
    assert seen["commits"] == 1

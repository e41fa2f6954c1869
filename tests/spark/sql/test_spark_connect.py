"""The SQL layer over Spark Connect (a local Connect server in a child process). Needs pyspark's connect
extras (grpcio, grpcio-status, googleapis-common-protos, zstandard): importable, or installed in a folder
named by HOODPY_CONNECT_DEPS (added to the child's PYTHONPATH). Slow tier: the child starts its own JVM."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("connect_session.py")


def test_sql_layer_over_spark_connect(tmp_path):
    deps = os.environ.get("HOODPY_CONNECT_DEPS")
    if importlib.util.find_spec("grpc") is None and not deps:
        pytest.skip("pyspark[connect] dependencies are not installed (set HOODPY_CONNECT_DEPS)")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    if deps:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (deps, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=900, cwd=tmp_path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    seen = json.loads(lines[-1].removeprefix("RESULT "))
    assert seen["session"] == "pyspark.sql.connect.session" and seen["same_object"]
    assert seen["rows"] == [[1, "a"], [2, "B"]]
    assert seen["first"] == [[1, "a"], [2, "b"]]
    assert seen["table_count"] == 2 and seen["commits"] == 2
    assert seen["api_rows"] == seen["api_stream"] == [[1, "a"], [2, "B"], [3, "c"]]

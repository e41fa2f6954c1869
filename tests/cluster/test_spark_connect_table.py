"""HoodieTable's Python API on a Spark Connect session: a Connect server (local[2]) in a child process
on 127.0.0.1, a client process running the shared workload (create, upserts, delete, time travel,
clustering, clean), and the same rows as the workload in local mode and as hudi-rs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.processes import connect_server, spark_env
from tests.cluster.table_workload import rows, run
from tests.compat import hudi_rs

pytestmark = [pytest.mark.spark]

pytest.importorskip("grpc", reason="pyspark's connect client needs grpcio (the test extra installs it)")
WORKLOAD = Path(__file__).with_name("table_workload.py")


def run_workload(path: Path, *flags: str, timeout: float = 1200) -> dict:
    done = subprocess.run([sys.executable, str(WORKLOAD), str(path), *flags], capture_output=True, text=True,
                          env=spark_env(), timeout=timeout, cwd=path.parent)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (done.stdout[-2000:], done.stderr[-4000:])
    return json.loads(lines[-1].removeprefix("RESULT "))


def expected_rows(spark, tmp_path: Path) -> dict:
    """The workload in the test's own local session: what every other session must match."""
    seen = run(spark, str(tmp_path / "local"))
    return {k: v for k, v in seen.items() if k not in ("session", "timings")}


def hudi_rs_rows(path: Path) -> list[list]:
    return sorted([r["id"], r["p"], r["ts"], r["v"]] for r in hudi_rs.snapshot(str(path)))


def test_table_api_over_spark_connect(spark, tmp_path):
    with connect_server(tmp_path) as url:
        seen = run_workload(tmp_path / "connect", "--remote", url)
    assert seen.pop("session") == "pyspark.sql.connect.session"
    seen.pop("timings")
    assert seen == expected_rows(spark, tmp_path)
    assert seen["final"] == hudi_rs_rows(tmp_path / "connect") == rows(
        __import__("hoodpy").HoodieTable.for_path(spark, str(tmp_path / "connect")).read())

"""The workload on a Spark standalone cluster: a master and two workers on 127.0.0.1 started with
pyspark's own ``bin/spark-class``, a driver process submitting to it with sql_ext shipped as a zip in
``spark.submit.pyFiles`` (built here), and the same rows as local mode and as hudi-rs. The cluster's
processes are always stopped."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.cluster.processes import standalone_cluster
from tests.cluster.test_spark_connect_table import expected_rows, hudi_rs_rows, run_workload

# Slow tier: three JVMs for the cluster, one for the driver, plus the local run (9-18 minutes measured
# on the shared 2-core machine under load); run with `bash scripts/test.sh -m slow tests/cluster`.
pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def sql_ext_zip(dest: Path) -> Path:
    """sql_ext's sources as a zip for spark.submit.pyFiles (what a user ships to workers without it)."""
    out = dest / "sql_ext.zip"
    with zipfile.ZipFile(out, "w") as z:
        for f in sorted((REPO / "sql_ext").rglob("*.py")):
            z.write(f, f.relative_to(REPO).as_posix())
    return out


def test_workload_on_a_standalone_cluster(spark, tmp_path):
    pyfiles = sql_ext_zip(tmp_path)
    with standalone_cluster(tmp_path, workers=2, cores=1, memory="512m") as master:
        seen = run_workload(tmp_path / "cluster", "--master", master, "--pyfiles", str(pyfiles))
    assert seen.pop("session") != "pyspark.sql.connect.session"  # a classic session on the cluster
    executor_dirs = seen.pop("executor_dirs")
    # Both workers ran Python tasks, each in its own executor folder under its work dir.
    assert {d.split("/worker-")[1][0] for d in executor_dirs if "/worker-" in d} == {"0", "1"}, executor_dirs
    # Executors imported sql_ext from the shipped zip (in their work folders), not from an installation.
    from_zip = seen.pop("executor_sql_ext")
    assert from_zip and all("sql_ext.zip" in p for p in from_zip), from_zip
    assert seen == expected_rows(spark, tmp_path)
    assert seen["final"] == hudi_rs_rows(tmp_path / "cluster")

"""Two writer processes with overlapping file groups on S3 under optimistic concurrency control: the
lock is S3 put-if-absent, completed instants are published with If-None-Match. Exactly one write commits
per conflict, the other fails cleanly; against a model of the commits that landed nothing is lost or
duplicated, in hoodpy's reads and in hudi-rs's. The writers are the local test's (occ_writer.py); they
find the endpoint and credentials in the AWS environment variables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiTableBuilder

from hoodpy import HoodieTable
from hoodpy.file_group.fs_view import list_base_files
from tests.s3.conftest import hudi_rs_storage_options

pytestmark = [pytest.mark.spark]

WRITER = Path(__file__).resolve().parents[1] / "spark" / "transaction" / "occ_writer.py"
DDL = "id int, part string, val string"


def _run_writers(path: str, plans: dict[str, list[list[tuple]]], env: dict[str, str]) -> list[dict]:
    child_env = {**os.environ, **env}
    procs = [subprocess.Popen([sys.executable, str(WRITER), path, w, json.dumps(b)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=child_env) for w, b in plans.items()]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=1200)
        assert p.returncode == 0, err[-3000:]
        results += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return results


def _state(table: HoodieTable) -> dict[int, tuple]:
    rows = table.read().select("id", "part", "val").collect()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), "duplicate keys"
    return {r.id: (r.part, r.val) for r in rows}


def _hudi_rs(path: str, endpoint: str) -> dict[int, tuple]:
    t = HudiTableBuilder.from_base_uri(path).with_storage_options(hudi_rs_storage_options(endpoint)).build()
    rows = pa.Table.from_batches(t.read()).select(["id", "part", "val"]).to_pylist()
    return {r["id"]: (r["part"], r["val"]) for r in rows}


def test_overlapping_writers_on_s3(spark, bucket, s3_options, s3_env, s3_endpoint):
    path = f"s3://{bucket}/occ"
    t = HoodieTable.create(spark, path, table_name="occ", record_key_fields=["id"], partition_fields=["part"],
                           options={"hoodie.index.bloom.num_entries": "100", **s3_options})
    t.bulk_insert(spark.createDataFrame([(i, f"p{i % 2}", "init") for i in range(20)], DDL))
    initial = _state(t)
    # Both writers update the same keys (same file groups) in each of two batches, plus one insert each.
    plans = {w: [[(i, f"p{i % 2}", f"{w}{b}") for i in range(0, 20, 3)] + [(100 + 10 * n + b, "p0", f"{w}{b}")]
                 for b in range(2)] for n, w in enumerate(["A", "B"])}
    results = _run_writers(path, plans, s3_env)

    assert len(results) == 4
    committed = sorted((r["instant"], r["writer"], r["batch"]) for r in results if "instant" in r)
    conflicts = [r for r in results if "conflict" in r]
    assert committed, results
    assert all("conflicts with instant" in r["conflict"] for r in conflicts)
    model = dict(initial)
    for _, writer, batch in committed:
        for id_, part, val in plans[writer][batch]:
            model[id_] = (part, val)
    table = HoodieTable.for_path(spark, path, options=s3_options)
    assert _state(table) == model == _hudi_rs(path, s3_endpoint)
    # Every conflict lost to a write that committed, and left no files or instants behind.
    completed = {i.timestamp for i in table.timeline.completed_commits()}
    assert {c[0] for c in committed} <= completed and len(completed) == 1 + len(committed)
    assert all(bf.instant_time in completed for bf in list_base_files(table.storage))
    assert not table.storage.exists(".hoodie/lock")

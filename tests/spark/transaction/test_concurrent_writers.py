"""Concurrent writer processes under optimistic concurrency control: with disjoint file groups every
commit lands; with overlapping ones each commit lands whole or fails with the conflict error; no key is
duplicated or lost against a model of the successful commits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hoodpy import HoodieTable
from hoodpy.file_group.fs_view import list_base_files

pytestmark = [pytest.mark.spark]

WRITER = Path(__file__).with_name("occ_writer.py")
SCHEMA = "id int, part string, val string"


def _run_writers(path: str, plans: dict[str, list[list[tuple]]]) -> list[dict]:
    procs = [subprocess.Popen([sys.executable, str(WRITER), path, w, json.dumps(b)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w, b in plans.items()]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
        results += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return results


def _state(spark, path) -> dict[int, tuple]:
    rows = HoodieTable.for_path(spark, path).read().select("id", "part", "val").collect()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), "duplicate keys"
    return {r.id: (r.part, r.val) for r in rows}


def _hudi_rs(path) -> dict[int, tuple]:
    from hudi import HudiTableBuilder

    t = pa.Table.from_batches(HudiTableBuilder.from_base_uri(path).build().read())
    return {r["id"]: (r["part"], r["val"]) for r in t.select(["id", "part", "val"]).to_pylist()}


def _table(spark, path):
    t = HoodieTable.create(spark, path, table_name="occ", record_key_fields=["id"], partition_fields=["part"],
                           options={"hoodie.index.bloom.num_entries": "100"})
    t.bulk_insert(spark.createDataFrame([(i, f"p{i % 2}", "init") for i in range(20)], SCHEMA))
    return t


def _model(results, plans, initial):
    model = dict(initial)
    done = sorted((r["instant"], r["writer"], r["batch"]) for r in results if "instant" in r)
    for _, writer, batch in done:
        for id_, part, val in plans[writer][batch]:
            model[id_] = (part, val)
    return model


def test_disjoint_writers_all_commit(spark, tmp_path):
    path = str(tmp_path / "disjoint")
    _table(spark, path)
    initial = _state(spark, path)
    # Writer A only touches partition p0, writer B only p1: different file groups.
    plans = {w: [[(i, f"p{n}", f"{w}{b}") for i in range(20) if i % 2 == n] for b in range(2)]
             for n, w in enumerate(["A", "B"])}
    results = _run_writers(path, plans)
    assert all("instant" in r for r in results), results
    expected = _model(results, plans, initial)
    assert _state(spark, path) == expected == _hudi_rs(path)


def test_overlapping_writers_commit_whole_or_fail_cleanly(spark, tmp_path):
    path = str(tmp_path / "overlap")
    _table(spark, path)
    initial = _state(spark, path)
    plans = {w: [[(i, f"p{i % 2}", f"{w}{b}") for i in range(0, 20, 3)] + [(100 + 10 * n + b, "p0", f"{w}{b}")]
                 for b in range(2)] for n, w in enumerate(["A", "B"])}
    results = _run_writers(path, plans)
    assert len(results) == 4
    conflicts = [r for r in results if "conflict" in r]
    for r in conflicts:
        assert "conflicts with instant" in r["conflict"]
    assert any("instant" in r for r in results)
    expected = _model(results, plans, initial)
    assert _state(spark, path) == expected == _hudi_rs(path)
    timeline = HoodieTable.for_path(spark, path).timeline
    completed = {i.timestamp for i in timeline.completed_commits()}
    assert all(bf.instant_time in completed for bf in list_base_files(HoodieTable.for_path(spark, path).storage))


# Slow tier: more writers, many batches each (the quick tests above run 2 x 2 in CI).
@pytest.mark.slow
@pytest.mark.parametrize("writers,batches", [(3, 6), (4, 4)])
def test_many_disjoint_writers_many_batches_all_commit(spark, tmp_path, writers, batches):
    path = str(tmp_path / "disjoint_many")
    t = HoodieTable.create(spark, path, table_name="occ", record_key_fields=["id"], partition_fields=["part"],
                           options={"hoodie.index.bloom.num_entries": "100"})
    t.bulk_insert(spark.createDataFrame([(i, f"p{i % writers}", "init") for i in range(8 * writers)], SCHEMA))
    initial = _state(spark, path)
    # Writer n owns partition p<n>: updates of its keys plus new keys of its own in every batch.
    plans = {f"W{n}": [[(i, f"p{n}", f"W{n}-{b}") for i in range(8 * writers) if i % writers == n]
                       + [(1000 + 100 * n + b, f"p{n}", f"W{n}-{b}")] for b in range(batches)]
             for n in range(writers)}
    results = _run_writers(path, plans)
    assert len(results) == writers * batches and all("instant" in r for r in results), results
    expected = _model(results, plans, initial)
    assert len(expected) == 8 * writers + writers * batches
    assert _state(spark, path) == expected == _hudi_rs(path)


@pytest.mark.slow
@pytest.mark.parametrize("writers,batches", [(3, 6), (4, 4)])
def test_many_overlapping_writers_many_batches(spark, tmp_path, writers, batches):
    path = str(tmp_path / "overlap_many")
    _table(spark, path)
    initial = _state(spark, path)
    # Every batch updates the same keys (every file group of p0 and p1) and adds one key of its own.
    plans = {f"W{n}": [[(i, f"p{i % 2}", f"W{n}-{b}") for i in range(0, 20, 3)]
                       + [(1000 + 100 * n + b, "p0", f"W{n}-{b}")] for b in range(batches)]
             for n in range(writers)}
    results = _run_writers(path, plans)
    assert len(results) == writers * batches
    landed = [r for r in results if "instant" in r]
    assert landed, results
    for r in results:
        assert "instant" in r or "conflicts with instant" in r["conflict"], r
    expected = _model(results, plans, initial)
    # Each batch's own new key is present exactly when that batch committed: nothing lost, nothing extra.
    assert {k for k in expected if k >= 1000} == {1000 + 100 * int(r["writer"][1:]) + r["batch"] for r in landed}
    assert _state(spark, path) == expected == _hudi_rs(path)
    timeline = HoodieTable.for_path(spark, path).timeline
    completed = {i.timestamp for i in timeline.completed_commits()}
    assert timeline.pending_writes() == []
    assert all(bf.instant_time in completed for bf in list_base_files(HoodieTable.for_path(spark, path).storage))

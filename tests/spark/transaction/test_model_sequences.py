"""Randomized sequences of inserts, upserts, deletes, rollbacks and crashed writes, compared with an in-memory
model after every step (hoodpy and hudi-rs). CI runs a few derandomized sequences; the `slow` tier many more."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hoodpy import HoodieTable
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.write import commit as commit_step
from tests.spark.hoodpy_spark_helpers import sequences

pytestmark = [pytest.mark.spark]

SCHEMA = "id int, part string, ts long, val string"
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy"}

keys = st.integers(min_value=0, max_value=12)
step = st.one_of(
    st.tuples(st.just("insert"), st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=4, unique=True)),
    st.tuples(st.just("upsert"), st.lists(keys, min_size=1, max_size=5, unique=True)),
    st.tuples(st.just("delete"), st.lists(keys, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("crash"), st.lists(keys, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("rollback"), st.just([])),
)


class Crash(BaseException):
    """Stands in for the process dying between writing files and publishing the commit."""


def _state(table) -> dict:
    df = table.read()
    if "id" not in df.columns:  # no commit has recorded a schema yet (all rolled back or crashed)
        assert df.count() == 0
        return {}
    return {r.id: (r.part, r.ts, r.val) for r in table.read().select("id", "part", "ts", "val").collect()}


def _hudi_rs(path) -> dict:
    from hudi import HudiTableBuilder

    batches = HudiTableBuilder.from_base_uri(path).build().read()
    if not batches:
        return {}
    t = pa.Table.from_batches(batches)
    return {r["id"]: (r["part"], r["ts"], r["val"]) for r in t.select(["id", "part", "ts", "val"]).to_pylist()} \
        if t.num_rows else {}


@sequences(3)
@given(steps=st.lists(step, min_size=3, max_size=5))
def test_sequences_match_the_model(spark, tmp_path_factory, steps):
    _check_sequence(spark, tmp_path_factory, steps)


@pytest.mark.slow
@sequences(40)
@given(steps=st.lists(step, min_size=4, max_size=8))
def test_many_sequences_match_the_model(spark, tmp_path_factory, steps):
    _check_sequence(spark, tmp_path_factory, steps)


def _check_sequence(spark, tmp_path_factory, steps) -> None:
    path = str(tmp_path_factory.mktemp("model") / "t")
    table = HoodieTable.create(spark, path, table_name="model", record_key_fields=["id"],
                               partition_fields=["part"], precombine_field="ts", options=OPTIONS)
    history = [{}]  # model state after each completed commit
    for n, (op, ids) in enumerate(steps, start=1):
        model = history[-1]
        if op == "insert":
            # Insert never looks keys up (as in Hudi): a key the table holds would be stored twice. Fresh keys only.
            rows = [(i, f"p{i % 2}", n, f"i{n}-{i}") for i in ids if i not in model]
            if not rows:
                continue
            table.insert(spark.createDataFrame(rows, SCHEMA))
            history.append({**model, **{r[0]: r[1:] for r in rows}})
        elif op == "upsert":
            rows = [(i, f"p{i % 2}", n, f"v{n}-{i}") for i in ids]
            table.upsert(spark.createDataFrame(rows, SCHEMA))
            history.append({**model, **{r[0]: r[1:] for r in rows}})
        elif op == "delete":
            if not table.timeline.completed_commits():
                continue  # nothing committed yet: hoodpy refuses a delete against a table with no data
            table.delete(spark.createDataFrame([(i, f"p{i % 2}") for i in ids], "id int, part string"))
            history.append({k: v for k, v in model.items() if k not in ids})
        elif op == "crash":
            real_commit, real_abort = commit_step.commit, commit_step.abort
            commit_step.commit = lambda *a, **k: (_ for _ in ()).throw(Crash())
            commit_step.abort = lambda *a, **k: None  # a dead process cleans nothing up
            try:
                with pytest.raises(Crash):
                    table.upsert(spark.createDataFrame([(i, f"p{i % 2}", n, "lost") for i in ids], SCHEMA))
            finally:
                commit_step.commit, commit_step.abort = real_commit, real_abort
            assert table.timeline.pending_writes(), "the crashed write left its instant behind"
        elif op == "rollback":
            commits = table.timeline.completed_commits()
            if not commits or len(history) < 2:
                continue
            table.rollback_to_instant(commits[-1].timestamp)
            history.pop()
        assert _state(table) == history[-1], (n, op, ids)
        assert _hudi_rs(path) == history[-1], (n, op, ids)
    # The next write cleans every leftover of crashed writes.
    table.upsert(spark.createDataFrame([(99, "p1", 999, "last")], SCHEMA))
    assert table.timeline.pending_writes() == []
    completed = {i.timestamp for i in table.timeline.completed_commits()}
    assert all(bf.instant_time in completed for bf in list_base_files(table.storage))

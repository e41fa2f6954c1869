"""``hoodpy_changes(...)``: incremental models that read only what their upstream hoodpy tables committed since
their last successful run, with the consumed upstream instant stored in the model's own commit.

Two upstream tables (``a_src``, ``b_src``) are written by the test with the Python API; ``copy_a`` reads one
of them, ``both`` reads the two (two checkpoints in one commit)."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt

from hoodpy import HoodieTable
from hoodpy.timeline.timeline import Timeline
from sql_ext import table_for_name

SOURCES_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: a_src
      - name: b_src
"""

COPY_SQL = """
{{ config(materialized='incremental', unique_key='id', precombine_key='ts') }}
select id, ts, v
from {{ hoodpy_changes(source('raw', 'a_src')) }}
where v <> 'skip' {%- if var('fail', false) %} and raise_error('failing after reading') is null{% endif %}
"""

BOTH_SQL = """
{{ config(materialized='incremental', unique_key=['src', 'id']) }}
select 'a' as src, id, v as val from {{ hoodpy_changes(source('raw', 'a_src')) }}
union all
select 'b' as src, id, w as val from {{ hoodpy_changes(source('raw', 'b_src')) }}
"""

TABLE_SQL = """
{{ config(materialized='table', unique_key='id') }}
select id, v from {{ hoodpy_changes(source('raw', 'a_src')) }}
"""

A_DDL, B_DDL = "id int, ts bigint, v string", "id int, ts bigint, w string"


def _extra(table: HoodieTable) -> list[dict]:
    """extraMetadata of each completed write of ``table``, oldest first."""
    timeline = Timeline.load(table.storage)
    return [json.loads(table.storage.read_bytes(i.path))["extraMetadata"] for i in timeline.completed_commits()]


def _read(results, name: str) -> str:
    return next(r.message for r in results.results if r.node.name == name)


class TestChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML, "copy_a.sql": COPY_SQL, "both.sql": BOTH_SQL,
                "whole_a.sql": TABLE_SQL}

    @pytest.fixture(scope="class")
    def upstreams(self, project, spark):
        schema = project.test_schema
        tables = {}
        for name, ddl in (("a_src", A_DDL), ("b_src", B_DDL)):
            spark.sql(f"CREATE TABLE {schema}.{name} ({ddl}) USING hoodpy TBLPROPERTIES (primaryKey = 'id', "
                      "preCombineField = 'ts')")
            tables[name] = table_for_name(spark, f"{schema}.{name}")
        return tables

    def test_windows_checkpoints_failures_and_refreshes(self, project, spark, upstreams):
        schema = project.test_schema
        a, b = upstreams["a_src"], upstreams["b_src"]
        key_a, key_b = f"_hoodpy.changes.{schema}.a_src", f"_hoodpy.changes.{schema}.b_src"
        rows = lambda df: sorted(tuple(r) for r in df.collect())  # noqa: E731
        copy = lambda: rows(spark.sql(f"select id, ts, v from {schema}.copy_a"))  # noqa: E731
        a1 = a.upsert(spark.createDataFrame([(1, 1, "x"), (2, 1, "y"), (3, 1, "z")], A_DDL)).instant_time
        b1 = b.upsert(spark.createDataFrame([(1, 1, "p"), (2, 1, "q")], B_DDL)).instant_time

        # First run: the upstreams as of their newest commit, whose instants the models' first commits store.
        results = run_dbt(["run"])
        assert f"read 3 records of {schema}.a_src as of {a1}" in _read(results, "copy_a")
        target = table_for_name(spark, f"{schema}.copy_a")
        both = table_for_name(spark, f"{schema}.both")
        assert copy() == [(1, 1, "x"), (2, 1, "y"), (3, 1, "z")]
        assert [m.get(key_a) for m in _extra(target)] == [a1]
        assert [(m.get(key_a), m.get(key_b)) for m in _extra(both)] == [(a1, b1)]
        # A table model reads its upstream itself: no window, no checkpoint.
        assert "read" not in _read(results, "whole_a")

        # Incremental: only the records committed since, each upstream from its own checkpoint.
        a2 = a.upsert(spark.createDataFrame([(2, 2, "y2"), (4, 2, "w")], A_DDL)).instant_time
        results = run_dbt(["run", "--select", "copy_a", "both"])
        assert f"read 2 records of {schema}.a_src ({a1}, {a2}]" in _read(results, "copy_a")
        message = _read(results, "both")
        assert f"2 records of {schema}.a_src ({a1}, {a2}]" in message
        assert f"0 records of {schema}.b_src ({b1}, {b1}]" in message
        assert copy() == [(1, 1, "x"), (2, 2, "y2"), (3, 1, "z"), (4, 2, "w")]
        assert [(m.get(key_a), m.get(key_b)) for m in _extra(both)][-1] == (a2, b1)
        assert rows(spark.sql(f"select src, id, val from {schema}.both")) == [
            ("a", 1, "x"), ("a", 2, "y2"), ("a", 3, "z"), ("a", 4, "w"), ("b", 1, "p"), ("b", 2, "q")]

        # A run failing after it read commits nothing: the next run reads the same window again.
        a3 = a.upsert(spark.createDataFrame([(1, 3, "x3")], A_DDL)).instant_time
        commits = len(_extra(target))
        failed = run_dbt(["run", "--select", "copy_a", "--vars", "fail: true"], expect_pass=False)
        assert "failing after reading" in _read(failed, "copy_a")
        assert not [t.name for t in spark.catalog.listTables() if t.isTemporary]  # the batch's view went too
        assert len(_extra(target)) == commits
        assert Timeline.load(target.storage).latest_extra_metadata(key_a)[1] == a2
        results = run_dbt(["run", "--select", "copy_a"])
        assert f"read 1 records of {schema}.a_src ({a2}, {a3}]" in _read(results, "copy_a")
        assert copy()[0] == (1, 3, "x3")

        # Nothing new upstream: an empty window and no commit.
        commits = len(_extra(target))
        results = run_dbt(["run", "--select", "copy_a"])
        assert f"read 0 records of {schema}.a_src ({a3}, {a3}]" in _read(results, "copy_a")
        assert len(_extra(target)) == commits

        # The window moved but the model keeps none of its rows: an empty commit still records it.
        a4 = a.upsert(spark.createDataFrame([(5, 4, "skip")], A_DDL)).instant_time
        run_dbt(["run", "--select", "copy_a"])
        assert len(_extra(target)) == commits + 1 and _extra(target)[-1][key_a] == a4
        results = run_dbt(["run", "--select", "copy_a"])
        assert f"read 0 records of {schema}.a_src ({a4}, {a4}]" in _read(results, "copy_a")

        # --full-refresh reads the whole upstream again.
        results = run_dbt(["run", "--select", "copy_a", "--full-refresh"])
        assert f"read 5 records of {schema}.a_src as of {a4}" in _read(results, "copy_a")
        assert [m.get(key_a) for m in _extra(table_for_name(spark, f"{schema}.copy_a"))] == [a4]

        # The upstream rolled back a commit the model consumed: no change read can undo it.
        a5 = a.upsert(spark.createDataFrame([(6, 5, "v")], A_DDL)).instant_time
        run_dbt(["run", "--select", "copy_a"])
        a.rollback_to_instant(a5)
        failed = run_dbt(["run", "--select", "copy_a"], expect_pass=False)
        assert f"no longer has the commit {a5}" in _read(failed, "copy_a") and "--full-refresh" in \
            _read(failed, "copy_a")

        # The session keeps none of the views the change reads registered.
        assert not [t.name for t in spark.catalog.listTables() if t.name.startswith("__hoodpy_")]


def test_the_window_end_stops_before_a_pending_write(spark, tmp_path):
    """A write still pending with an instant time older than the newest commit would complete inside a window
    already consumed (Hudi's hollow commit): the end stops before it. A pending clustering does not count: it
    writes no new commit times."""
    from datetime import timedelta

    from hoodpy.timeline import transitions
    from hoodpy.timeline.instant import Action, instant_time_of, parse_instant_time

    from dbt.adapters.hoodpy.changes import consumable_end

    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="ends", record_key_fields=["id"],
                           precombine_field="ts")
    c1 = t.upsert(spark.createDataFrame([(1, 1, "a")], A_DDL)).instant_time
    c2 = t.upsert(spark.createDataFrame([(2, 1, "b")], A_DDL)).instant_time
    assert consumable_end(t) == c2
    # A writer that started between c1 and c2 and has not completed yet.
    started = instant_time_of(parse_instant_time(c1) + timedelta(milliseconds=1))
    pending = transitions.create_requested(t.storage, started, Action.COMMIT)
    assert c1 < pending.timestamp < c2 and consumable_end(t) == c1
    transitions.delete_pending(t.storage, pending)
    assert t.clustering.schedule(sort_columns="id") is not None
    assert consumable_end(t) == c2


KEYLESS_SQL = """
{{ config(materialized='incremental') }}
select id, v from {{ hoodpy_changes(source('raw', 'a_src')) }}
"""


class TestChangesNeedAHoodpyModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML, "keyless.sql": KEYLESS_SQL}

    def test_a_model_without_a_key_is_refused_before_reading(self, project, spark):
        spark.sql(f"CREATE TABLE {project.test_schema}.a_src ({A_DDL}) USING hoodpy TBLPROPERTIES "
                  "(primaryKey = 'id')")
        message = _read(run_dbt(["run"], expect_pass=False), "keyless")
        assert "hoodpy_changes" in message and "keyless" in message and "unique_key" in message

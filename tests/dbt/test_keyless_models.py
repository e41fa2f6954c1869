"""dbt models without a unique_key on hoodpy (``file_format='hoodpy'``): tables whose record keys are generated,
as Hudi 0.14+ makes a table without a record key; incremental runs append (Hudi's insert) and keep the keys of the
rows already stored; a strategy that matches rows by key (merge) is refused, naming unique_key."""

from __future__ import annotations

import re

import pytest
from dbt.tests.util import run_dbt

from hoodpy.config.properties import load_table_properties
from sql_ext import table_for_name
from tests.compat import hudi_rs

KEY = re.compile(r"^(\d{17})_\d+_\d+$")  # Hudi's generated keys: <instant>_<Spark partition>_<row>

EVENTS_SQL = """
{{ config(materialized='incremental', file_format='hoodpy', partition_by='day') }}
{% if var('batch', 1) == 1 %}
select 'd1' as day, 1 as id, 'open' as kind union all select 'd1', 1, 'open' union all select 'd2', 2, 'close'
{% else %}
select 'd2' as day, 2 as id, 'close' as kind union all select 'd3', 3, 'open'
{% endif %}
"""
SNAPSHOT_SQL = """
{{ config(materialized='table', file_format='hoodpy') }}
select 1 as id, 'a' as v union all select 1, 'a'
"""
MERGE_SQL = """
{{ config(materialized='incremental', file_format='hoodpy', incremental_strategy='merge') }}
select 1 as id
"""


def _rows(path: str) -> list[tuple]:
    return sorted((r["_hoodie_record_key"], r["_hoodie_commit_time"], r["day"], r["id"], r["kind"])
                  for r in hudi_rs.snapshot(path))


class TestKeylessModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS_SQL, "snapshot.sql": SNAPSHOT_SQL, "merge_no_key.sql": MERGE_SQL}

    def test_generated_keys_append_and_merge_refused(self, project, spark):
        results = run_dbt(["run"], expect_pass=False)
        status = {r.node.name: (r.status, r.message) for r in results.results}
        assert status["events"][0] == "success" and status["snapshot"][0] == "success"
        message = status["merge_no_key"][1]
        assert status["merge_no_key"][0] == "error"
        assert "merge_no_key" in message and "'merge'" in message and "unique_key" in message
        with project.adapter.connection_named("__test"):
            names = {r.identifier for r in project.adapter.list_relations(project.database, project.test_schema)}
        assert names == {"events", "snapshot"}  # the refused model created nothing

        events = table_for_name(spark, f"{project.test_schema}.events")
        path = events.base_path
        props = load_table_properties(events.storage)
        assert "hoodie.table.recordkey.fields" not in props and props["hoodie.table.partition.fields"] == "day"
        first = _rows(path)
        assert sorted(r[2:] for r in first) == [("d1", 1, "open"), ("d1", 1, "open"), ("d2", 2, "close")]
        assert len({r[0] for r in first}) == 3 and all(KEY.match(r[0]).group(1) == r[1] for r in first)

        snapshot = table_for_name(spark, f"{project.test_schema}.snapshot")
        theirs = hudi_rs.snapshot(snapshot.base_path)
        assert sorted((r["id"], r["v"]) for r in theirs) == [(1, "a"), (1, "a")]  # duplicates kept: no key
        assert all(KEY.match(r["_hoodie_record_key"]) for r in theirs)

        # The incremental run appends: a row equal to a stored one is a new record; stored keys stay.
        run_dbt(["run", "--select", "events", "--vars", "batch: 2"])
        events = table_for_name(spark, f"{project.test_schema}.events")
        commits = events.timeline.completed_commits()
        assert len(commits) == 2
        assert events.timeline.commit_metadata(commits[-1]).operation_type == "INSERT"
        second = _rows(path)
        added = [r for r in second if r not in first]
        assert len(second) == 5 and sorted(r[2:] for r in added) == [("d2", 2, "close"), ("d3", 3, "open")]
        assert all(KEY.match(r[0]).group(1) == r[1] == commits[-1].timestamp for r in added)
        assert len({r[0] for r in second}) == 5

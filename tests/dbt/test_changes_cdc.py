"""``hoodpy_changes(ref(...), format='cdc')``: an incremental model over the change data capture rows (op,
ts_ms, before, after) of an upstream with ``hoodie.table.cdc.enabled``, with the same consumed-instant
checkpoint as the latest_state reads: each run reads only the changes committed since the last one, and the
model ends equal to a full recompute (a table model over every change)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from hoodpy.timeline.timeline import Timeline
from sql_ext import table_for_name

SOURCES_YML = """
version: 2
sources: [{name: raw, schema: "{{ target.schema }}", tables: [{name: a_src}]}]
"""

SELECT = """
select cast(get_json_object(coalesce(after, before), '$.id') as int) as id, ts_ms, op,
       get_json_object(before, '$.v') as v_before, get_json_object(after, '$.v') as v_after
from {{ hoodpy_changes(source('raw', 'a_src'), format='cdc') }}
"""
CHANGES_SQL = "{{ config(materialized='incremental', unique_key=['id', 'ts_ms']) }}" + SELECT
RECOMPUTE_SQL = "{{ config(materialized='table', unique_key=['id', 'ts_ms']) }}" + SELECT
DDL = "id int, ts bigint, v string"


def _read(results, name: str) -> str:
    return next(r.message for r in results.results if r.node.name == name)


class TestChangesCdc:
    @pytest.fixture(scope="class")
    def models(self):
        return {"sources.yml": SOURCES_YML, "changes.sql": CHANGES_SQL, "recompute.sql": RECOMPUTE_SQL}

    def test_incremental_model_over_cdc_rows(self, project, spark):
        schema = project.test_schema
        spark.sql(f"CREATE TABLE {schema}.a_src ({DDL}) USING hoodpy TBLPROPERTIES (primaryKey = 'id', "
                  "preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true')")
        a = table_for_name(spark, f"{schema}.a_src")
        key = f"_hoodpy.changes.{schema}.a_src"

        def model(name: str) -> list[tuple]:
            return sorted(tuple(r) for r in spark.sql(f"select id, ts_ms, op, v_before, v_after from {schema}.{name}")
                          .collect())

        def checkpoint() -> str:
            target = table_for_name(spark, f"{schema}.changes")
            return Timeline.load(target.storage).latest_extra_metadata(key)[1]

        a1 = a.upsert(spark.createDataFrame([(1, 1, "x"), (2, 1, "y"), (3, 1, "z")], DDL)).instant_time
        results = run_dbt(["run"])
        assert f"read 3 records of {schema}.a_src changes (cdc) up to {a1}" in _read(results, "changes")
        expected = [(1, a1, "i", None, "x"), (2, a1, "i", None, "y"), (3, a1, "i", None, "z")]
        assert model("changes") == model("recompute") == expected
        assert checkpoint() == a1

        # Only the changes since: an update, an insert and a delete (its before image), in two commits.
        a2 = a.upsert(spark.createDataFrame([(2, 2, "y2"), (4, 2, "w")], DDL)).instant_time
        a3 = a.delete(spark.createDataFrame([(3, 3, "")], DDL)).instant_time
        results = run_dbt(["run"])
        assert f"read 3 records of {schema}.a_src changes (cdc) ({a1}, {a3}]" in _read(results, "changes")
        expected += [(2, a2, "u", "y", "y2"), (4, a2, "i", None, "w"), (3, a3, "d", "z", None)]
        assert model("changes") == model("recompute") == sorted(expected)
        assert checkpoint() == a3

        # Nothing new: an empty window, the model unchanged.
        results = run_dbt(["run", "--select", "changes"])
        assert f"read 0 records of {schema}.a_src changes (cdc) ({a3}, {a3}]" in _read(results, "changes")
        assert model("changes") == sorted(expected)

"""dbt: a view model over an incremental hoodpy model shows its current rows; `dbt docs generate` shows
hoodpy tables with their columns and Hudi properties; changed column types follow Hudi's promotion."""

from __future__ import annotations

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.util import run_dbt

from sql_ext import table_for_name

RIDES_SQL = """
{{ config(materialized='incremental', unique_key='id', precombine_key='ts') }}
{% if var('batch', 1) == 1 %}
select 1 as id, 'sf' as city, 10.0 as fare, 1 as ts union all select 2, 'la', 20.0, 1
{% else %}
select 1 as id, 'sf' as city, 15.0 as fare, 2 as ts union all select 3, 'ny', 30.0, 2
{% endif %}
"""
CHEAP_RIDES_SQL = """
{{ config(materialized='view') }}
select id, fare from {{ ref('rides') }} where fare < 100
"""


def _rows(project, sql):
    return sorted(tuple(r) for r in project.run_sql(sql, fetch="all"))


class TestViewOverHoodpyModelAndDocs:
    @pytest.fixture(scope="class")
    def models(self):
        return {"rides.sql": RIDES_SQL, "cheap_rides.sql": CHEAP_RIDES_SQL}

    def test_view_shows_the_latest_run_and_docs_show_hoodpy_properties(self, project):
        run_dbt(["run"])
        view = f"{project.test_schema}.cheap_rides"
        assert _rows(project, f"select id, fare from {view}") == [(1, 10.0), (2, 20.0)]
        # Only the incremental model runs: the view, created once, reads the table's current snapshot.
        run_dbt(["run", "--select", "rides", "--vars", "batch: 2"])
        assert _rows(project, f"select id, fare from {view}") == [(1, 15.0), (2, 20.0), (3, 30.0)]

        catalog = run_dbt(["docs", "generate"])
        nodes = {key.rsplit(".", 1)[-1]: node for key, node in catalog.nodes.items()}
        rides, cheap = nodes["rides"], nodes["cheap_rides"]
        assert rides.metadata.type == "table" and cheap.metadata.type == "view"
        # The model's columns, as `select *` of the model returns them: no _hoodie_* meta columns.
        columns = sorted(rides.columns.values(), key=lambda c: c.index)
        assert [c.name for c in columns] == ["id", "city", "fare", "ts"]
        assert [c.type for c in columns] == ["integer", "string", "decimal(3,1)", "integer"]  # Spark's names
        assert list(cheap.columns) == ["id", "fare"]
        stats = {key: (stat.label, stat.value) for key, stat in rides.stats.items()}
        assert stats["record_key"] == ("record key", "id")
        assert stats["precombine_field"] == ("precombine field", "ts")
        assert stats["format"] == ("format", "hoodpy (Hudi COW v6)")
        assert stats["base_path"][1].endswith("/rides")
        assert "record_key" not in cheap.stats


WIDEN_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% if var('batch', 1) == 1 %} select 1 as id, cast(1 as int) as v
{% else %} select 2 as id, cast(3000000000 as bigint) as v {% endif %}
"""
TO_STRING_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='append_new_columns') }}
{% if var('batch', 1) == 1 %} select 1 as id, 5 as v
{% else %} select 2 as id, 'x' as v {% endif %}
"""
NARROW_SQL = """
{{ config(materialized='incremental', unique_key='id', on_schema_change='sync_all_columns') }}
{% if var('batch', 1) == 1 %} select 1 as id, cast(1 as bigint) as v
{% else %} select 2 as id, cast(2 as int) as v {% endif %}
"""


class TestColumnTypeChanges:
    @pytest.fixture(scope="class")
    def models(self):
        return {"widen.sql": WIDEN_SQL, "to_string.sql": TO_STRING_SQL, "narrow.sql": NARROW_SQL}

    def test_promotions_apply_and_narrowing_fails_naming_model_and_column(self, project, spark):
        run_dbt(["run"])
        narrow = table_for_name(spark, f"{project.test_schema}.narrow")
        commits = len(narrow.timeline)

        results = run_dbt(["run", "--vars", "batch: 2"], expect_pass=False).results
        by_name = {r.node.name: r for r in results}
        assert by_name["widen"].status == RunStatus.Success
        assert by_name["to_string"].status == RunStatus.Success
        failed = by_name["narrow"]
        assert failed.status == RunStatus.Error
        assert "narrow" in failed.message and "column 'v' cannot change type from bigint (table) to int (model)" \
            in failed.message

        schema = project.test_schema
        assert _rows(project, f"select id, v from {schema}.widen") == [(1, 1), (2, 3000000000)]
        assert _rows(project, f"select id, v from {schema}.to_string") == [(1, "5"), (2, "x")]
        assert _rows(project, f"select id, v from {schema}.narrow") == [(1, 1)]
        assert len(table_for_name(spark, f"{schema}.narrow").timeline) == commits
        with project.adapter.connection_named("__test"):
            types = {name: {c.name: c.dtype for c in project.adapter.get_columns_in_relation(
                project.adapter.Relation.create(schema=schema, identifier=name))}
                for name in ("widen", "to_string", "narrow")}
        assert types == {"widen": {"id": "int", "v": "bigint"}, "to_string": {"id": "int", "v": "string"},
                         "narrow": {"id": "int", "v": "bigint"}}

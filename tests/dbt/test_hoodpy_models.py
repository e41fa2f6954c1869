"""hoodpy's own dbt behaviour: model config -> hoodie options, upserts, deletes, table services, errors."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from hoodpy import HoodieTable
from hoodpy.timeline.instant import Action, State
from sql_ext import table_for_name

RIDES_SQL = """
{{ config(materialized='incremental', unique_key=['city', 'ride_id'], precombine_key='ts',
          delete_column='is_deleted', clean={'policy': 'KEEP_LATEST_FILE_VERSIONS', 'retained': 1}) }}
{% if var('batch', 1) == 1 %}
select 'sf' as city, 1 as ride_id, 10 as ts, 5.0 as fare, false as is_deleted
union all select 'sf', 2, 10, 6.0, false
union all select 'la', 1, 10, 7.0, false
{% else %}
select 'sf' as city, 1 as ride_id, 5 as ts, 99.0 as fare, false as is_deleted   -- late: ignored
union all select 'sf', 2, 20, 8.0, false                                        -- newer: applied
union all select 'la', 1, 20, 0.0, true                                         -- deleted
union all select 'ny', 1, 20, 9.0, null                                         -- new
{% endif %}
"""

CLUSTERED_SQL = """
{{ config(materialized='table', unique_key='id',
          clustering={'order': ['fare', 'id'], 'strategy': 'z-order', 'inline': true, 'max_commits': 1}) }}
select 1 as id, 3.0 as fare union all select 2, 1.0 union all select 3, 2.0
"""

HOOKED_SQL = """
{{ config(materialized='table', unique_key='id',
          post_hook=["CALL run_clustering(table => '{{ this }}', order => 'fare')",
                     "{{ hoodpy_run_clean(policy='KEEP_LATEST_FILE_VERSIONS', retained=1) }}"]) }}
select 1 as id, 3.0 as fare union all select 2, 1.0
"""


def _table(spark, project, name: str) -> HoodieTable:
    return table_for_name(spark, f"{project.test_schema}.{name}")


def _completed(table: HoodieTable, action: Action) -> list:
    return table.timeline.filter(actions=[action], states=[State.COMPLETED])


class TestHoodpyModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {"rides.sql": RIDES_SQL, "clustered.sql": CLUSTERED_SQL, "hooked.sql": HOOKED_SQL}

    def test_upsert_delete_and_table_services(self, project, spark):
        run_dbt(["run"])
        run_dbt(["run", "--select", "rides", "--vars", "batch: 2"])

        rides = _table(spark, project, "rides")
        rows = sorted((r.city, r.ride_id, r.ts, r.fare) for r in rides.read().collect())
        assert rows == [("ny", 1, 20, 9.0), ("sf", 1, 10, 5.0), ("sf", 2, 20, 8.0)]

        # Neither meta columns nor the delete flag reach the table's or dbt's column lists.
        relation = project.adapter.Relation.create(schema=project.test_schema, identifier="rides")
        with project.adapter.connection_named("__test"):
            columns = [c.name for c in project.adapter.get_columns_in_relation(relation)]
        assert columns == ["city", "ride_id", "ts", "fare"]
        assert "is_deleted" not in rides.read().columns

        # clean config (automatic): the upsert's rewrite leaves one version per file group, cleaned.
        assert _completed(rides, Action.CLEAN)
        # clustering config with inline clustering after every commit: a replacecommit.
        assert _completed(_table(spark, project, "clustered"), Action.REPLACECOMMIT)
        # raw CALL and the hoodpy_run_clean() macro in post-hooks: clustering, then the replaced files cleaned.
        hooked = _table(spark, project, "hooked")
        assert _completed(hooked, Action.REPLACECOMMIT)
        assert _completed(hooked, Action.CLEAN)
        assert sorted(r.id for r in hooked.read().collect()) == [1, 2]


BAD_STRATEGY_SQL = """
{{ config(materialized='table', unique_key='id', clustering={'order': ['id'], 'strategy': 'spiral'}) }}
select 1 as id
"""
BAD_SORT_COLUMN_SQL = """
{{ config(materialized='table', unique_key='id', clustering={'order': ['nope']}) }}
select 1 as id
"""
NO_KEY_UPSERT_SQL = """
{{ config(materialized='incremental', incremental_strategy='upsert') }}
select 1 as id
"""
BAD_CLEAN_KEY_SQL = """
{{ config(materialized='table', unique_key='id', clean={'retain': 3}) }}
select 1 as id
"""


class TestModelConfigErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {"bad_strategy.sql": BAD_STRATEGY_SQL, "bad_sort_column.sql": BAD_SORT_COLUMN_SQL,
                "no_key_upsert.sql": NO_KEY_UPSERT_SQL, "bad_clean_key.sql": BAD_CLEAN_KEY_SQL}

    def test_errors_name_the_model_and_the_key(self, project):
        results = run_dbt(["run"], expect_pass=False)
        messages = {r.node.name: r.message for r in results.results}
        assert all(r.status == "error" for r in results.results)
        assert "bad_strategy" in messages["bad_strategy"] and "clustering.strategy" in messages["bad_strategy"]
        assert "'spiral'" in messages["bad_strategy"]
        assert "bad_sort_column" in messages["bad_sort_column"]
        assert "clustering.order" in messages["bad_sort_column"] and "'nope'" in messages["bad_sort_column"]
        assert "no_key_upsert" in messages["no_key_upsert"] and "unique_key" in messages["no_key_upsert"]
        assert "bad_clean_key" in messages["bad_clean_key"] and "clean.retain" in messages["bad_clean_key"]
        # Nothing was created.
        with project.adapter.connection_named("__test"):
            relations = project.adapter.list_relations(project.database, project.test_schema)
        assert relations == []


MOR_INLINE_SQL = """
{{ config(materialized='incremental', unique_key='id', precombine_key='ts', table_type='mor',
          compaction={'inline': true, 'max_delta_commits': 2}) }}
{% if var('batch', 1) == 1 %}
select 1 as id, 10 as ts, 'a' as val union all select 2, 10, 'b' union all select 3, 10, 'c'
{% else %}
select 1 as id, 20 as ts, 'a2' as val union all select 2, 5, 'late'
{% endif %}
"""

MOR_HOOKED_SQL = """
{{ config(materialized='incremental', unique_key='id', precombine_key='ts', table_type='mor',
          post_hook=["{{ hoodpy_run_compaction() if is_incremental() else '' }}"]) }}
{% if var('batch', 1) == 1 %}
select 1 as id, 10 as ts, 'a' as val union all select 2, 10, 'b'
{% else %}
select 2 as id, 20 as ts, 'b2' as val
{% endif %}
"""


def _rows(table: HoodieTable, **read) -> list[tuple]:
    return sorted((r.id, r.ts, r.val) for r in table.read(**read).select("id", "ts", "val").collect())


class TestMergeOnReadModels:
    """table_type='mor' models: upserts are deltacommits into log files, folded in by the model's compaction
    config (inline after max_delta_commits) or by the hoodpy_run_compaction() post-hook."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"mor_inline.sql": MOR_INLINE_SQL, "mor_hooked.sql": MOR_HOOKED_SQL}

    def test_compaction_from_config_and_post_hook(self, project, spark):
        from tests.compat import hudi_rs

        run_dbt(["run"])
        inline, hooked = _table(spark, project, "mor_inline"), _table(spark, project, "mor_hooked")
        for table in (inline, hooked):
            assert table.properties["hoodie.table.type"] == "MERGE_ON_READ"
            assert not _completed(table, Action.COMMIT), "the first load is a deltacommit, nothing compacted yet"
        run_dbt(["run", "--vars", "batch: 2"])

        inline, hooked = _table(spark, project, "mor_inline"), _table(spark, project, "mor_hooked")
        assert _rows(inline) == [(1, 20, "a2"), (2, 10, "b"), (3, 10, "c")]  # the late ts=5 update loses
        assert _rows(hooked) == [(1, 10, "a"), (2, 20, "b2")]
        for table in (inline, hooked):
            assert len(_completed(table, Action.DELTACOMMIT)) == 2
            # The compaction completed a commit, so the base files alone now hold the latest rows.
            assert len(_completed(table, Action.COMMIT)) == 1
            assert not table.timeline.pending([Action.COMPACTION])
            assert _rows(table, query_type="read_optimized") == _rows(table)
            assert hudi_rs.snapshot_tuples(table.base_path, ["id", "ts", "val"]) == _rows(table)

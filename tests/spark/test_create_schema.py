"""The table's schema is recorded in hoodie.properties by the first write, as Java's first datasource write
does, so a table whose every commit was rolled back still reads with its columns."""

from __future__ import annotations

import json

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM

from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark


def test_first_write_records_create_schema_and_survives_rollback_of_all_commits(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="schema_t", record_key_fields=["id"], precombine_field="ts",
                           options=SMALL_BLOOM)
    assert TableConfig.CREATE_SCHEMA.key not in load_table_properties(t.storage)

    c1 = t.upsert(spark.createDataFrame([(1, 1, "a")], "id int, ts long, v string"))
    props = load_table_properties(t.storage)
    recorded = json.loads(props[TableConfig.CREATE_SCHEMA.key])
    # Java's create-schema form: non-null-first unions and no defaults.
    assert [(f["name"], f["type"]) for f in recorded["fields"]] == [
        ("id", ["int", "null"]), ("ts", ["long", "null"]), ("v", ["string", "null"])]

    # A later write with a new column leaves the recorded create schema alone (commits carry the evolution).
    t.upsert(spark.createDataFrame([(2, 1, "b", 3.5)], "id int, ts long, v string, extra double"))
    assert load_table_properties(t.storage)[TableConfig.CREATE_SCHEMA.key] == props[TableConfig.CREATE_SCHEMA.key]

    for instant in reversed(HoodieTable.for_path(spark, path).timeline.completed_commits()):
        HoodieTable.for_path(spark, path).rollback_to_instant(instant.timestamp)
    reopened = HoodieTable.for_path(spark, path)
    assert reopened.timeline.completed_commits() == []
    df = reopened.read()
    assert df.count() == 0
    assert [c for c in df.columns if not c.startswith("_hoodie_")] == ["id", "ts", "v"]
    assert c1.instant_time not in {i.timestamp for i in reopened.timeline.completed_commits()}

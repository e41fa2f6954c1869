"""read(columns=...): which columns a read asks its scans and merge tasks for (hoodpy.read.query)."""

from __future__ import annotations

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from hoodpy.errors import InvalidConfigError
from hoodpy.read.query import read_schema, selected_columns

SCHEMA = StructType([StructField("_hoodie_commit_time", StringType()), StructField("_hoodie_record_key", StringType()),
                     StructField("id", LongType()), StructField("Name", StringType()), StructField("ts", LongType()),
                     StructField("info", StructType([StructField("a", LongType())])), StructField("x", LongType())])


def test_selected_columns_take_the_schemas_spelling_once_in_the_callers_order():
    assert selected_columns(SCHEMA, None) is None
    assert selected_columns(SCHEMA, ["x", "name", "id", "NAME"]) == ["x", "Name", "id"]
    assert selected_columns(SCHEMA, ("_hoodie_commit_time",)) == ["_hoodie_commit_time"]


@pytest.mark.parametrize("columns, named", [(["id", "nope"], "nope"), ([], "[]"), ("id", "id"),
                                            (["info.a"], "info.a")])
def test_selected_columns_refuse_what_the_table_does_not_have(columns, named):
    with pytest.raises(InvalidConfigError, match="columns") as e:
        selected_columns(SCHEMA, columns)
    assert named in str(e.value)


def test_read_schema_keeps_the_merge_fields_and_filter_columns_in_schema_order():
    pruned = read_schema(SCHEMA, ["x", "info.a"], ("_hoodie_record_key", "ts"))
    assert pruned.fieldNames() == ["_hoodie_record_key", "ts", "info", "x"]
    assert read_schema(SCHEMA, ["NAME"], ("_hoodie_record_key",)).fieldNames() == ["_hoodie_record_key", "Name"]


def test_read_schema_keeps_every_column_without_merge_fields():
    """Virtual keys: the merge computes keys from key generator fields, so nothing is pruned before it."""
    assert read_schema(SCHEMA, ["x"], None) is SCHEMA

"""Bad input raises the specific hoodpy error naming the problem and leaves the table exactly as it was:
same timeline files, same data files, byte for byte."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, rows, timeline_files, tree

from hoodpy.errors import (
    HoodieError,
    InvalidConfigError,
    InvalidRecordError,
    SchemaEvolutionError,
    TableNotFoundError,
)
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bad") / "t")
    t = HoodieTable.create(spark, path, table_name="bad_t", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, "ab"[i % 2], 1, f"v{i}") for i in range(6)], DDL))
    return t


@pytest.fixture
def unchanged(table, monkeypatch):
    """Asserts, after the test body, that no instant was even opened, nothing under the table path changed
    and reads still work."""
    from hoodpy.timeline import transitions

    before, timeline_before = tree(table.base_path), timeline_files(table.base_path)
    rows_before = rows(table.read(), "id", "p", "ts", "v")
    opened = []
    original = transitions.create_requested
    monkeypatch.setattr(transitions, "create_requested", lambda *a, **k: opened.append(a) or original(*a, **k))
    yield table
    assert opened == [], "bad input was detected only after an instant was opened"
    assert timeline_files(table.base_path) == timeline_before
    assert tree(table.base_path) == before
    assert table.timeline.pending_writes() == []
    assert rows(table.read(), "id", "p", "ts", "v") == rows_before


def _raises(error, fn, *words):
    with pytest.raises(error) as info:
        fn()
    message = str(info.value)
    for word in words:
        assert word in message, message
    return info.value


def test_null_record_key(spark, unchanged):
    df = spark.createDataFrame([(1, "a", 2, "x"), (None, "a", 2, "y")], DDL)
    err = _raises(InvalidRecordError, lambda: unchanged.upsert(df), "null or empty record key", "id")
    assert "1 record(s)" in str(err)


def test_empty_string_record_key(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="bad_str", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=SMALL_BLOOM)
    before = tree(path)
    df = spark.createDataFrame([("7", "a", 2, "x"), ("", "a", 2, "y")], "id string, p string, ts long, v string")
    _raises(InvalidRecordError, lambda: t.upsert(df), "null or empty record key", "id")
    assert tree(path) == before
    assert t.timeline.instants == []


def test_null_record_key_on_insert_and_bulk_insert(spark, unchanged):
    df = spark.createDataFrame([(None, "a", 2, "y")], DDL)
    _raises(InvalidRecordError, lambda: unchanged.insert(df), "null or empty record key")
    _raises(InvalidRecordError, lambda: unchanged.bulk_insert(df), "null or empty record key")


def test_null_record_key_in_delete(spark, unchanged):
    df = spark.createDataFrame([(None, "a")], "id int, p string")
    _raises(InvalidRecordError, lambda: unchanged.delete(df), "null or empty record key")


def test_null_ordering_value(spark, unchanged):
    df = spark.createDataFrame([(1, "a", None, "x"), (2, "b", 3, "y")], DDL)
    _raises(InvalidRecordError, lambda: unchanged.upsert(df), "null ordering", "'ts'", "1 record(s)")


def test_missing_ordering_column(spark, unchanged):
    df = spark.createDataFrame([(1, "a", "x")], "id int, p string, v string")
    _raises(InvalidRecordError, lambda: unchanged.upsert(df), "ordering (precombine)", "ts")


def test_another_list_of_ordering_fields_conflicts(spark, unchanged):
    # A list names the table's fields as a tuple: another list than the table's is a conflicting ordering field.
    df = spark.createDataFrame([(1, "a", 2, "x")], DDL)
    _raises(InvalidConfigError, lambda: unchanged.upsert(df, options={"hoodie.datasource.write.precombine.field":
                                                                       "ts,v"}),
            "hoodie.datasource.write.precombine.field", "the table has ordering field 'ts'")


def test_several_ordering_fields_need_every_column_set(spark, tmp_path):
    df = spark.createDataFrame([(1, "a", 2, "x")], DDL)
    path = tmp_path / "list"
    _raises(InvalidConfigError, lambda: HoodieTable.create(spark, str(path), table_name="l", record_key_fields=["id"],
                                                           precombine_field="ts,w", schema=df.schema),
            "lacks configured field(s) w")
    assert not (path / ".hoodie" / "hoodie.properties").exists()
    t = HoodieTable.create(spark, str(path), table_name="l", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts, v", options=SMALL_BLOOM)
    t.upsert(df)
    before = tree(str(path))
    _raises(InvalidRecordError, lambda: t.upsert(spark.createDataFrame([(1, "a", 3, None)], DDL)),
            "1 record(s)", "null ordering", "'ts,v'", "every field")
    _raises(InvalidRecordError, lambda: t.upsert(spark.createDataFrame([(1, "a", 3)], "id int, p string, ts long")),
            "ordering (precombine)", "v")
    assert tree(str(path)) == before
    assert rows(t.read(), "id", "ts", "v") == [(1, 2, "x")]


def test_options_naming_other_table_fields_by_an_alias(spark, unchanged):
    # Aliases of the table's properties are compared with them (they used to hide behind the property).
    df = spark.createDataFrame([(1, "a", 2, "x")], DDL)
    _raises(InvalidConfigError, lambda: unchanged.upsert(df, options={"hoodie.datasource.write.precombine.field": "v"}),
            "hoodie.datasource.write.precombine.field", "the table has ordering field 'ts'")
    _raises(InvalidConfigError, lambda: HoodieTable.for_path(spark, unchanged.base_path, options={
        "hoodie.datasource.write.recordkey.field": "v"}), "hoodie.datasource.write.recordkey.field", "the table has")
    agreeing = HoodieTable.for_path(spark, unchanged.base_path, options={
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.keygenerator.type": "SIMPLE"})
    assert agreeing.keygen == unchanged.keygen


def test_missing_partition_column(spark, unchanged):
    df = spark.createDataFrame([(1, 2, "x")], "id int, ts long, v string")
    _raises(InvalidRecordError, lambda: unchanged.upsert(df), "partition", "p")


def test_incompatible_type_change(spark, unchanged):
    df = spark.createDataFrame([(1, "a", 2, 5)], "id int, p string, ts long, v int")
    _raises(SchemaEvolutionError, lambda: unchanged.upsert(df), "'v'", "string", "int32")


def test_record_key_type_change(spark, unchanged):
    df = spark.createDataFrame([("1", "a", 2, "x")], "id string, p string, ts long, v string")
    _raises(SchemaEvolutionError, lambda: unchanged.upsert(df), "record key", "'id'")


def test_dropped_column(spark, unchanged):
    df = spark.createDataFrame([(1, "a", 2)], "id int, p string, ts long")
    _raises(SchemaEvolutionError, lambda: unchanged.upsert(df), "'v'", "column.drop")


def test_non_boolean_is_deleted_column(spark, unchanged):
    df = spark.createDataFrame([(1, "a", 2, "x", "yes")], DDL + ", _hoodie_is_deleted string")
    _raises(InvalidRecordError, lambda: unchanged.upsert(df), "_hoodie_is_deleted", "boolean")


def test_unknown_index_type(spark, unchanged):
    df = spark.createDataFrame([(1, "a", 2, "x")], DDL)
    _raises(InvalidConfigError, lambda: unchanged.upsert(df, options={"hoodie.index.type": "HBASE"}),
            "hoodie.index.type", "HBASE")


def test_errors_are_hoodie_errors():
    for error in (InvalidRecordError, SchemaEvolutionError, TableNotFoundError, InvalidConfigError):
        assert issubclass(error, HoodieError)


def test_missing_table_path(spark, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _raises(TableNotFoundError, lambda: HoodieTable.for_path(spark, str(empty)), str(empty), "hoodie.properties")
    assert list(empty.iterdir()) == []
    absent = tmp_path / "absent"
    _raises(TableNotFoundError, lambda: HoodieTable.for_path(spark, str(absent)), str(absent))
    assert not absent.exists()

"""Persistent views over hoodpy tables are expanded into their stored text when read (no Spark)."""

from __future__ import annotations

import pytest

from hoodpy.errors import UnsupportedStatementError
from sql_ext.catalog import TableName, ViewDefinition, parse_view_description
from sql_ext.session import SqlLayer
from sql_stubs import stub_layer


def view(name: str, text: str, columns: tuple[str, ...], query_columns: tuple[str, ...] | None = None,
         namespace: str = "db") -> ViewDefinition:
    database, table = name.split(".")
    return ViewDefinition(TableName(database, table), text, "spark_catalog", namespace, columns,
                          query_columns or columns)


VIEWS = {
    "db.v": view("db.v", "SELECT id, name FROM trips WHERE id > 0", ("id", "name")),
    "db.vv": view("db.vv", "SELECT id AS k FROM v", ("k",)),
    "db.plain": view("db.plain", "SELECT * FROM pq", ("id", "s")),
    "db.renamed": view("db.renamed", "SELECT t.id, p.id FROM trips t JOIN other.pq p ON t.id = p.id", ("a", "b"),
                       ("id", "id")),
    "other.w": view("other.w", "SELECT id FROM trips", ("id",), namespace="other"),
}
V_BODY = ("(SELECT __hoodpy_view.`id` AS `id`, __hoodpy_view.`name` AS `name` FROM (\n"
          "SELECT id, name FROM `db`.{__hoodpy_0} AS trips WHERE id > 0\n) AS __hoodpy_view)")


def layer_with_views() -> tuple[SqlLayer, object]:
    return stub_layer({"db.trips", "other.trips"}, VIEWS)


def _only_call(spy):
    assert len(spy.calls) == 1
    (text, *_), kwargs = spy.calls[0]
    return text, kwargs


def test_a_view_over_a_hoodpy_table_is_read_from_the_current_snapshot():
    layer, spy = layer_with_views()
    layer.sql("SELECT name FROM v WHERE id = 1")
    text, kwargs = _only_call(spy)
    assert text == f"SELECT name FROM {V_BODY.replace('`db`.{__hoodpy_0}', '{__hoodpy_0}')} AS `v` WHERE id = 1"
    assert kwargs == {"__hoodpy_0": ("snapshot", "/lake/trips", None)}


def test_views_over_views_are_expanded_and_aliases_kept():
    layer, spy = layer_with_views()
    layer.sql("SELECT x.k FROM db.vv AS x")
    text, kwargs = _only_call(spy)
    assert text.startswith("SELECT x.k FROM (SELECT __hoodpy_view.`k` AS `k` FROM (\nSELECT id AS k FROM (SELECT ")
    assert text.endswith(") AS x")
    assert "{__hoodpy_0} AS trips" in text and list(kwargs) == ["__hoodpy_0"]


def test_view_column_names_and_duplicate_query_columns_rename_by_position():
    layer, spy = layer_with_views()
    layer.sql("SELECT a, b FROM renamed")
    text, kwargs = _only_call(spy)
    assert "FROM {__hoodpy_0} t JOIN other.pq p" in text
    assert text.endswith(") AS __hoodpy_view(`a`, `b`)) AS `renamed`")


def test_unqualified_names_in_a_view_resolve_in_the_view_namespace():
    layer, spy = layer_with_views()
    layer.sql("SELECT id FROM other.w")
    text, kwargs = _only_call(spy)
    assert kwargs == {"__hoodpy_0": ("snapshot", "/lake/trips", None)}
    assert "FROM {__hoodpy_0} AS trips" in text
    assert layer.catalog.lookups[-1] == "other.trips"


def test_views_over_other_tables_and_view_ddl_pass_through_unchanged():
    layer, spy = layer_with_views()
    for statement in ["SELECT * FROM plain WHERE id = 1", "DROP VIEW v", "CREATE VIEW v2 AS SELECT * FROM v",
                      "ALTER VIEW v AS SELECT 1 AS id", "CREATE OR REPLACE VIEW db.v AS SELECT id FROM trips"]:
        spy.calls.clear()
        layer.sql(statement)
        assert spy.calls == [((statement,), {})], statement


def test_views_in_writes_and_temporary_views_are_expanded():
    layer, spy = layer_with_views()
    layer.sql("INSERT INTO pq SELECT id, name FROM v")
    text, kwargs = _only_call(spy)
    assert text.startswith("INSERT INTO pq SELECT id, name FROM (SELECT ") and list(kwargs) == ["__hoodpy_0"]


def test_time_travel_on_a_view_is_refused():
    layer, spy = layer_with_views()
    with pytest.raises(UnsupportedStatementError, match="time travel .* on view db.v"):
        layer.sql("SELECT * FROM v VERSION AS OF '20240101000000'")
    assert spy.calls == []


def test_view_description_is_parsed_from_describe_rows():
    rows = [("a", "int"), ("b", "string"), ("", ""), ("# Detailed Table Information", ""), ("Type", "VIEW"),
            ("View Text", "SELECT id, `we``ird` FROM h"), ("View Catalog and Namespace", "spark_catalog.vx"),
            ("View Query Output Columns", "[`id`, `we``ird`]")]
    parsed = parse_view_description(TableName("vx", "v1"), rows)
    assert parsed == ViewDefinition(TableName("vx", "v1"), "SELECT id, `we``ird` FROM h", "spark_catalog", "vx",
                                    ("a", "b"), ("id", "we`ird"))
    table_rows = [("id", "int"), ("", ""), ("# Detailed Table Information", ""), ("Type", "MANAGED")]
    assert parse_view_description(TableName("vx", "t"), table_rows) is None

"""Which WHERE conjuncts become read filters for which table reference (pure: sqlglot trees only)."""

from __future__ import annotations

import pytest
from pyspark.sql.types import BooleanType, DoubleType, IntegerType, LongType, StringType, StructField, StructType
from sqlglot import exp

from sql_ext.dialect import DIALECT
from sql_ext.pushdown import candidate_filters, typed_filters


def filters_by_table(sql: str) -> dict[str, list]:
    tree = DIALECT.parse(sql)[0]
    return {t.alias_or_name: candidate_filters(t) for t in tree.find_all(exp.Table)}


@pytest.mark.parametrize(("where", "expected"), [
    ("city = 'sf'", [("city", "=", "sf")]),
    ("'sf' = city", [("city", "=", "sf")]),
    ("5 < fare", [("fare", ">", 5)]),
    ("fare <> 2", [("fare", "!=", 2)]),
    ("id BETWEEN 1 AND 3", [("id", ">=", 1), ("id", "<=", 3)]),
    ("id IN (1, 2)", [("id", "in", [1, 2])]),
    ("note IS NULL AND (id > 1 AND flag = true)", [("note", "is null", None), ("id", ">", 1), ("flag", "=", True)]),
    ("note IS NOT NULL", [("note", "is not null", None)]),
    ("fare > 1.5", [("fare", ">", 1.5)]),
    ("fare > -2", [("fare", ">", -2)]),
    ("city = 'sf' OR id = 1", []),
    ("NOT city = 'sf'", []),
    ("upper(city) = 'SF'", []),
    ("id = other", []),
    ("id = NULL", []),
    ("id IN (1, NULL)", []),
    ("id IN (SELECT 1)", []),
    ("id = :param", []),
    ("city = 'sf' AND upper(city) = 'SF'", [("city", "=", "sf")]),
])
def test_conjuncts_of_a_single_table_query(where, expected):
    assert filters_by_table(f"SELECT * FROM db.t WHERE {where}") == {"t": expected}


def test_joins_push_only_qualified_columns_and_never_to_a_null_supplying_side():
    got = filters_by_table("SELECT * FROM t a JOIN u b ON a.id = b.id WHERE a.x = 1 AND b.y = 2 AND z = 3")
    assert got == {"a": [("x", "=", 1)], "b": [("y", "=", 2)]}
    got = filters_by_table("SELECT * FROM t a LEFT JOIN u b ON a.id = b.id WHERE a.x = 1 AND b.y IS NULL")
    assert got == {"a": [("x", "=", 1)], "b": []}
    # Conservative: only the FROM table and inner-joined tables are pruned.
    got = filters_by_table("SELECT * FROM t a RIGHT JOIN u b ON a.id = b.id WHERE a.x = 1 AND b.y = 2")
    assert got == {"a": [], "b": []}
    got = filters_by_table("SELECT * FROM t a FULL JOIN u b ON a.id = b.id WHERE a.x = 1 AND b.y = 2")
    assert got == {"a": [], "b": []}
    got = filters_by_table("SELECT * FROM t a LEFT SEMI JOIN u b ON a.id = b.id WHERE a.x = 1")
    assert got == {"a": [("x", "=", 1)], "b": []}


def test_each_query_level_has_its_own_where():
    got = filters_by_table("SELECT * FROM (SELECT * FROM t WHERE x = 1) s JOIN u ON s.k = u.k WHERE u.y = 2")
    assert got == {"t": [("x", "=", 1)], "u": [("y", "=", 2)]}
    got = filters_by_table("WITH c AS (SELECT * FROM t WHERE x > 1) SELECT * FROM c WHERE y = 2")
    assert got["t"] == [("x", ">", 1)]
    got = filters_by_table("SELECT * FROM t WHERE x IN (SELECT k FROM u WHERE u.k = 5)")
    assert got == {"t": [], "u": [("k", "=", 5)]}


SCHEMA = StructType([StructField("id", IntegerType()), StructField("big", LongType()),
                     StructField("fare", DoubleType()), StructField("City", StringType()),
                     StructField("flag", BooleanType())])


def test_typed_filters_keep_only_literals_of_the_columns_kind():
    candidates = [("ID", "=", 1), ("big", "in", [1, 2]), ("fare", ">", 1), ("fare", "<", 2.5), ("city", "=", "sf"),
                  ("flag", "=", True), ("id", "=", "1"), ("id", "=", 1.5), ("city", "=", 1), ("flag", "=", 1),
                  ("missing", "=", 1), ("city", "is null", None)]
    assert typed_filters(candidates, SCHEMA) == [
        ("id", "=", 1), ("big", "in", [1, 2]), ("fare", ">", 1), ("fare", "<", 2.5), ("City", "=", "sf"),
        ("flag", "=", True), ("City", "is null", None)]


def test_explain_of_a_query_reads_the_pruned_snapshot():
    from sql_stubs import stub_layer

    layer, spy = stub_layer(hoodpy={"db.t"})
    layer.sql("/* dbt */ EXPLAIN  extended SELECT id FROM db.t WHERE city = 'sf'")
    layer.sql("EXPLAIN SELECT 1")
    assert spy.calls == [
        (("/* dbt */ EXPLAIN  extended SELECT id FROM {__hoodpy_0} AS t WHERE city = 'sf'",),
         {"__hoodpy_0": ("snapshot", "/lake/t", None)}),
        (("EXPLAIN SELECT 1",), {}),
    ]

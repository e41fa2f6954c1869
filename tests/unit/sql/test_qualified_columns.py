"""Columns qualified by database (``db.t.col``) keep resolving once ``db.t`` becomes a snapshot parameter
(no Spark): the reference is spliced to ``{__hoodpy_N} AS t`` and such columns lose ``db.`` (and the
session catalog's name), as Spark would have resolved them; nothing else in the text changes."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sql_ext.catalog import TableName
from sql_ext.dialect import DIALECT
from sql_ext.pushdown import candidate_filters
from sql_stubs import stub_layer


def rewritten(sql: str, hoodpy=frozenset({"db.t"})) -> str:
    layer, spy = stub_layer(set(hoodpy))
    layer.sql(sql)
    assert len(spy.calls) == 1
    return spy.calls[0][0][0]


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT db.t.id FROM db.t WHERE db.t.id = 1",
     "SELECT t.id FROM {__hoodpy_0} AS t WHERE t.id = 1"),
    ("SELECT `db`.`t`.`id`, spark_catalog.db.t.x FROM t",
     "SELECT `t`.`id`, t.x FROM {__hoodpy_0} AS t"),
    ("SELECT DB.T.id, t.id, id FROM Db.T",
     "SELECT T.id, t.id, id FROM {__hoodpy_0} AS T"),
    # another table's qualified columns, a struct path t.s.f and an aliased reference are left to Spark
    ("SELECT db.u.id, t.s.f FROM db.t JOIN db.u ON db.t.id = db.u.id",
     "SELECT db.u.id, t.s.f FROM {__hoodpy_0} AS t JOIN db.u ON t.id = db.u.id"),
    ("SELECT db.t.id FROM db.t AS x", "SELECT db.t.id FROM {__hoodpy_0} AS x"),
    ("SELECT other.db.t.id FROM db.t", "SELECT other.db.t.id FROM {__hoodpy_0} AS t"),
    ("SELECT * FROM db.t WHERE db.t.id IN (SELECT db.t.id FROM db.t)",
     "SELECT * FROM {__hoodpy_0} AS t WHERE t.id IN (SELECT t.id FROM {__hoodpy_1} AS t)"),
])
def test_database_qualified_columns_lose_the_database(sql, expected):
    assert rewritten(sql) == expected


def test_rendered_statements_drop_the_qualifiers_too():
    layer, spy = stub_layer({"db.t"})
    tree = DIALECT.parse("SELECT db.t.id FROM db.t WHERE spark_catalog.db.t.id > 1")[0]
    layer.read_sql(tree)
    assert spy.calls[0][0][0] == "SELECT t.id FROM {__hoodpy_0} AS t WHERE t.id > 1"


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT * FROM db.t WHERE db.t.id = 1 AND spark_catalog.db.t.c = 'x'", [("id", "=", 1), ("c", "=", "x")]),
    ("SELECT * FROM t WHERE db.t.id = 1", [("id", "=", 1)]),
    ("SELECT * FROM db.t AS x WHERE db.t.id = 1", []),                  # Spark cannot resolve it: no filter
    ("SELECT * FROM db.t WHERE other.t.id = 1 AND db.u.id = 2", []),
    ("SELECT * FROM db.t JOIN db.u ON db.t.k = db.u.k WHERE db.t.id = 1 AND db.u.id = 2", [("id", "=", 1)]),
])
def test_database_qualified_columns_are_pushed_down(sql, expected):
    node = next(n for n in DIALECT.parse(sql)[0].find_all(exp.Table) if n.name == "t")
    assert candidate_filters(node, TableName("db", "t")) == expected

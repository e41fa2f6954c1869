"""The lifetime of the SQL layer's temporary views (sql_ext/session_views.py), without Spark: which views a
statement's end drops, which a temporary view holds, and when held views go."""

from __future__ import annotations

import pytest

from sql_ext.dialect import DIALECT
from sql_ext.session_views import SessionViews


def _views(connect: bool = False) -> tuple[SessionViews, list[str]]:
    dropped: list[str] = []
    return SessionViews(dropped.append, connect=connect), dropped


def _run(views: SessionViews, sql: str, made: list[str], *, fail: bool = False) -> None:
    with views.statement():
        views.classify(DIALECT.parse(sql)[0])
        views.add(made)
        if fail:
            raise RuntimeError("the statement failed")


def test_a_query_drops_its_views_when_it_ends():
    views, dropped = _views()
    _run(views, "SELECT * FROM v1 JOIN v2", ["v1", "v2"])
    assert dropped == ["v1", "v2"] and views.held() == {}


def test_a_temporary_view_holds_its_views_until_dropped_or_redefined():
    views, dropped = _views()
    _run(views, "CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM v1", ["v1"])
    assert dropped == [] and views.held() == {"recent": ["v1"]}
    _run(views, "CREATE OR REPLACE TEMPORARY VIEW Recent AS SELECT * FROM v2", ["v2"])
    assert dropped == ["v1"] and views.held() == {"recent": ["v2"]}
    _run(views, "CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT 1", [])
    assert dropped == ["v1", "v2"] and views.held() == {}
    _run(views, "CACHE TABLE cached AS SELECT * FROM v3", ["v3"])
    views.release(DIALECT.parse("DROP VIEW `cached`")[0].args["tables"][0])
    assert dropped[-1] == "v3" and views.held() == {}


def test_a_failed_statement_drops_its_views_and_keeps_what_was_held():
    views, dropped = _views()
    _run(views, "CREATE TEMPORARY VIEW recent AS SELECT * FROM v1", ["v1"])
    with pytest.raises(RuntimeError):
        _run(views, "CREATE TEMPORARY VIEW recent AS SELECT * FROM v2", ["v2"], fail=True)
    assert dropped == ["v2"] and views.held() == {"recent": ["v1"]}


def test_nested_statements_settle_their_own_views():
    views, dropped = _views()
    with views.statement():
        views.classify(DIALECT.parse("CREATE TEMPORARY VIEW outer_v AS SELECT * FROM v1")[0])
        views.add(["v1"])
        _run(views, "SELECT * FROM v2", ["v2"])
        assert dropped == ["v2"]
    assert views.held() == {"outer_v": ["v1"]}


def test_spark_connect_queries_keep_their_views_other_statements_do_not():
    views, dropped = _views(connect=True)
    _run(views, "SELECT * FROM v1", ["v1"])
    _run(views, "INSERT INTO t SELECT * FROM v2", ["v2"])
    assert dropped == ["v2"] and views.held() == {None: ["v1"]}

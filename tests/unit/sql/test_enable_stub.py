"""enable() rebinds sql/table on the session instance and returns it; disable() restores (no Spark)."""

from __future__ import annotations

from sql_ext import disable, enable
from sql_ext.session import SqlLayer, layer_of


class FakeSession:
    def __init__(self):
        self.seen = []

    def sql(self, sqlQuery, args=None, **kwargs):
        self.seen.append(("sql", sqlQuery, args, kwargs))
        return "df"

    def table(self, tableName):
        self.seen.append(("table", tableName))
        return "tdf"


def test_enable_returns_the_same_session_and_routes_sql():
    session = FakeSession()
    assert enable(session) is session
    assert isinstance(layer_of(session), SqlLayer)
    layer_of(session).catalog.lookup = lambda name: None  # no catalog behind a fake session
    assert session.sql("SHOW TABLES") == "df"
    assert session.seen == [("sql", "SHOW TABLES", None, {})]


def test_enable_is_idempotent_and_disable_restores():
    session = FakeSession()
    enable(session)
    first = session.sql
    enable(session)
    assert session.sql is first and layer_of(session) is not None
    disable(session)
    assert "sql" not in vars(session) and "table" not in vars(session) and layer_of(session) is None
    assert session.sql("SELECT 1") == "df"
    disable(session)  # a no-op

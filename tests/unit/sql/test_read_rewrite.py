"""Reads of hoodpy tables are rewritten to snapshot DataFrame parameters; nothing else changes (no Spark)."""

from __future__ import annotations

import pytest

from hoodpy.errors import InvalidInstantError
from hoodpy.errors import UnsupportedStatementError
from sql_stubs import stub_layer


def _only_call(spy):
    assert len(spy.calls) == 1
    (text, *rest), kwargs = spy.calls[0]
    return text, rest, kwargs


def test_reference_is_replaced_by_a_snapshot_parameter():
    layer, spy = stub_layer({"db.trips"})
    layer.sql("SELECT t.id, p.s FROM db.trips AS t JOIN pq p ON t.id = p.id WHERE t.city = 'sf'")
    text, rest, kwargs = _only_call(spy)
    assert text == "SELECT t.id, p.s FROM {__hoodpy_0} AS t JOIN pq p ON t.id = p.id WHERE t.city = 'sf'"
    assert rest == [] and kwargs == {"__hoodpy_0": ("snapshot", "/lake/trips", None)}


def test_unaliased_reference_keeps_its_name_and_braces_are_escaped():
    layer, spy = stub_layer({"db.trips"})
    layer.sql("/* {\"app\": \"dbt\"} */ select trips.id, '{x}' from   trips\nwhere id > 0;")
    text, _, kwargs = _only_call(spy)
    assert text == "/* {{\"app\": \"dbt\"}} */ select trips.id, '{{x}}' from   {__hoodpy_0} AS trips\nwhere id > 0;"
    assert list(kwargs) == ["__hoodpy_0"]


@pytest.mark.parametrize(("clause", "as_of"), [
    ("TIMESTAMP AS OF '20240102030405123'", "20240102030405123"),
    ("TIMESTAMP AS OF '20240102030405'", "20240102030405000"),
    ("VERSION AS OF '20240102030405123'", "20240102030405123"),
    ("VERSION AS OF 20240102030405123", "20240102030405123"),
])
def test_time_travel_clause_is_part_of_the_span(clause, as_of):
    layer, spy = stub_layer({"db.trips"})
    layer.sql(f"SELECT * FROM db.trips {clause} AS x WHERE x.id = 1")
    text, _, kwargs = _only_call(spy)
    assert text == "SELECT * FROM {__hoodpy_0} AS x WHERE x.id = 1"
    assert kwargs["__hoodpy_0"] == ("snapshot", "/lake/trips", as_of)


def test_timestamp_strings_are_converted_by_the_session():
    layer, spy = stub_layer({"db.trips"})
    layer.timestamp_to_instant = lambda text: {"2024-01-02 03:04:05": "20240102030405000"}[text]
    layer.reads.timestamp_to_instant = layer.timestamp_to_instant
    layer.sql("SELECT * FROM trips TIMESTAMP AS OF '2024-01-02 03:04:05'")
    _, _, kwargs = _only_call(spy)
    assert kwargs["__hoodpy_0"] == ("snapshot", "/lake/trips", "20240102030405000")


def test_bad_time_travel_values_are_rejected():
    layer, _ = stub_layer({"db.trips"})
    with pytest.raises(InvalidInstantError, match="takes a literal"):
        layer.sql("SELECT * FROM trips TIMESTAMP AS OF current_timestamp()")
    with pytest.raises(InvalidInstantError, match="VERSION AS OF"):
        layer.sql("SELECT * FROM trips VERSION AS OF '2024-01-01'")


def test_ctes_subqueries_and_self_joins():
    layer, spy = stub_layer({"db.trips"})
    layer.sql("WITH recent AS (SELECT * FROM trips WHERE ts > 5) "
              "SELECT * FROM recent r JOIN db.trips t ON r.id = t.id WHERE r.id IN (SELECT id FROM trips)")
    text, _, kwargs = _only_call(spy)
    assert text == ("WITH recent AS (SELECT * FROM {__hoodpy_0} AS trips WHERE ts > 5) "
                    "SELECT * FROM recent r JOIN {__hoodpy_1} t ON r.id = t.id "
                    "WHERE r.id IN (SELECT id FROM {__hoodpy_2} AS trips)")
    assert len(kwargs) == 3


def test_a_cte_shadows_a_hoodpy_table_of_the_same_name():
    layer, spy = stub_layer({"db.trips"})
    statement = "WITH trips AS (SELECT 1 AS id) SELECT * FROM trips"
    layer.sql(statement)
    assert spy.calls == [((statement,), {})]


def test_insert_into_another_table_from_a_hoodpy_table():
    layer, spy = stub_layer({"db.trips"})
    layer.sql("INSERT INTO pq SELECT id, name FROM trips")
    text, _, kwargs = _only_call(spy)
    assert text == "INSERT INTO pq SELECT id, name FROM {__hoodpy_0} AS trips"


def test_persistent_views_over_hoodpy_tables_are_stored_as_written():
    # Expanded when read (tests/unit/sql/test_views.py), so they show the current snapshot.
    layer, spy = stub_layer({"db.trips"})
    layer.sql("CREATE VIEW v AS SELECT * FROM trips")
    assert spy.calls == [(("CREATE VIEW v AS SELECT * FROM trips",), {})]
    with pytest.raises(UnsupportedStatementError, match="persistent view cannot time-travel"):
        layer.sql("CREATE VIEW v AS SELECT * FROM trips VERSION AS OF '20240101000000'")


def test_an_unparsable_statement_naming_a_hoodpy_table_is_refused_clearly():
    layer, spy = stub_layer({"db.trips"})
    with pytest.raises(UnsupportedStatementError, match="could not parse this statement, which uses hoodpy table"):
        layer.sql("SELECT then.id FROM trips AS then")
    assert spy.calls == []
    layer.sql("SELECT then.id FROM pq AS then")  # not hoodpy's: Spark decides
    assert len(spy.calls) == 1


def test_drop_of_a_hoodpy_table_is_handled_by_hoodpy(monkeypatch):
    from sql_ext import ddl

    layer, spy = stub_layer({"db.trips"})
    dropped = []
    monkeypatch.setattr(ddl, "drop_table", lambda layer, entry, purge: dropped.append((str(entry.name), purge)))
    layer.sql("DROP TABLE IF EXISTS trips PURGE")
    layer.sql("DROP TABLE db.trips")
    layer.sql("DROP TABLE other")
    assert dropped == [("db.trips", True), ("db.trips", False)]
    assert spy.calls == [(("DROP TABLE other",), {})]

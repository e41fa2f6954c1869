"""hudi_table_changes arguments and Hudi's incremental read options, without Spark."""

from __future__ import annotations

import pytest

from hoodpy.errors import InvalidConfigError, InvalidInstantError, UnsupportedStatementError
from sql_ext.dialect import DIALECT
from sql_ext.table_changes import EARLIEST_INSTANT, find_calls, option_window, parse_instant
from sql_stubs import stub_layer


def _never(text: str) -> str:
    raise AssertionError(f"no timestamp conversion expected for {text!r}")


def test_calls_are_found_with_their_whole_span_in_the_order_written():
    text = ("SELECT * FROM hudi_table_changes('db.t', 'latest_state', 'earliest') c "
            "JOIN HUDI_TABLE_CHANGES('/lake/u', 'cdc', '20240101000000', concat('2024', ')')) d ON c.id = d.id")
    calls = find_calls(DIALECT.parse(text)[0], text)
    assert [text[c.span[0]:c.span[1] + 1] for c in calls] == [
        "hudi_table_changes('db.t', 'latest_state', 'earliest')",
        "HUDI_TABLE_CHANGES('/lake/u', 'cdc', '20240101000000', concat('2024', ')'))"]
    assert (calls[0].table, calls[0].format, calls[0].start, calls[0].end) == \
        ("db.t", "latest_state", "earliest", None)
    assert (calls[1].table, calls[1].end) == ("/lake/u", "2024)")  # adjacent-literal concat as Spark joins them


@pytest.mark.parametrize(("value", "instant"), [
    ("earliest", EARLIEST_INSTANT), ("EARLIEST", EARLIEST_INSTANT),
    ("20240102030405", "20240102030405000"), ("20240102030405123", "20240102030405123"),
])
def test_start_instants(value, instant):
    assert parse_instant(value, "start", _never) == instant


def test_timestamps_go_through_the_session_conversion_and_bad_values_are_named():
    assert parse_instant("2024-01-02 03:04:05.5", "end", lambda t: "20240102030405500") == "20240102030405500"
    for bad in ("2024010203040", "yesterday", "2024-1-2", "202401020304051234"):
        with pytest.raises(InvalidInstantError, match=repr(bad)):
            parse_instant(bad, "start", _never)
    with pytest.raises(InvalidInstantError, match="end instant 'earliest'"):
        parse_instant("earliest", "end", _never)


def test_option_window():
    q, b, e = ("hoodie.datasource.query.type", "hoodie.datasource.read.begin.instanttime",
               "hoodie.datasource.read.end.instanttime")
    assert option_window({}) is None
    assert option_window({q: "snapshot", b: "20240101000000"}) is None
    assert option_window({q: "incremental", b: "000"}) == (EARLIEST_INSTANT, None)
    assert option_window({q: "incremental", b: "20240101000000", e: "20240102000000123"}) == \
        ("20240101000000000", "20240102000000123")
    with pytest.raises(InvalidConfigError, match=b):
        option_window({q: "incremental"})
    with pytest.raises(InvalidConfigError, match="2024-01-01"):
        option_window({q: "incremental", b: "20240101000000", e: "2024-01-01"})


def test_session_incremental_options_make_hoodpy_reads_incremental_and_table_options_win():
    layer, spy = stub_layer({"db.trips"})
    layer.spark.conf.values.update({"hoodie.datasource.query.type": "incremental",
                                    "hoodie.datasource.read.begin.instanttime": "20240101000000"})
    layer.sql("SELECT * FROM db.trips JOIN pq ON trips.id = pq.id")
    (_, kwargs), = spy.calls
    assert kwargs == {"__hoodpy_0": ("incremental", "/lake/trips", "20240101000000000", None)}
    layer.spark.conf.values["hoodie.datasource.query.type"] = "snapshot"
    layer.sql("SELECT * FROM db.trips")
    assert spy.calls[-1][1] == {"__hoodpy_1": ("snapshot", "/lake/trips", None)}


def test_a_persistent_view_over_the_function_is_refused_before_anything_is_read():
    layer, spy = stub_layer({"db.trips"})
    with pytest.raises(UnsupportedStatementError, match="TEMPORARY VIEW"):
        layer.sql("CREATE VIEW v AS SELECT * FROM hudi_table_changes('db.trips', 'latest_state', 'earliest')")
    assert spy.calls == []

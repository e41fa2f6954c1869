"""Pure helpers behind the rows that the procedures and the command line share: Dropwizard percentiles,
Java's DecimalFormat, time normalisation, partition globs (no Spark)."""

from __future__ import annotations

import pytest

from hoodpy.errors import ProcedureArgumentError
from hoodpy.inspect.file_slices import partition_matches
from hoodpy.inspect.stats import decimal_format_2, histogram_row, snapshot_value, write_amplification
from hoodpy.inspect.timeline import normalize_time
from sql_ext.procedures.show_timeline import ShowTimelineProcedure
from sql_ext.procedures.show_timeline import normalize_time as procedure_normalize_time


def test_uniform_snapshot_percentiles():
    values = [10, 20, 30, 40]
    assert snapshot_value(values, 0.5) == 25.0  # pos 2.5 -> between 20 and 30
    assert snapshot_value(values, 0.1) == 10.0  # pos 0.5 < 1 -> first value
    assert snapshot_value(values, 0.95) == 40.0  # pos 4.75 >= n -> last value
    assert snapshot_value([], 0.5) == 0.0


def test_histogram_row():
    assert histogram_row("ALL", [3, 1, 2]) == ("ALL", 1, 1.0, 2.0, 2.0, 3.0, 3, 3, 1.0)
    assert histogram_row("c", []) == ("c", 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0)


@pytest.mark.parametrize(("value", "text"), [(2.0, "2.00"), (0.5, ".50"), (1.005, "1.00"), (1.125, "1.12"),
                                             (12.3456, "12.35"), (3.0 / 1.0, "3.00")])
def test_java_decimal_format(value, text):
    assert decimal_format_2(value) == text


def test_write_amplification():
    assert write_amplification(6, 2) == "3.00"
    assert write_amplification(5, 0) == "0"


@pytest.mark.parametrize(("text", "end", "instant"), [
    ("20240102030405123", False, "20240102030405123"),
    ("20240102030405", False, "20240102030405000"),
    ("20240102030405", True, "20240102030405999"),
    ("2024-01-02", False, "20240102000000000"),
    ("2024-01-02", True, "20240102235959999"),
    ("2024/01/02", True, "20240102235959999"),
    ("20240102", False, "20240102000000000"),
    ("", False, None),
])
def test_normalize_time(text, end, instant):
    assert normalize_time(text, end=end) == instant
    assert procedure_normalize_time(text, end=end, procedure=ShowTimelineProcedure, arg="startTime") == instant


def test_normalize_time_rejects_other_forms():
    with pytest.raises(ValueError, match="must be yyyyMMddHHmmss"):
        normalize_time("yesterday", end=False)
    with pytest.raises(ProcedureArgumentError, match="argument 'startTime' must be yyyyMMddHHmmss.*'yesterday'"):
        procedure_normalize_time("yesterday", end=False, procedure=ShowTimelineProcedure, arg="startTime")


@pytest.mark.parametrize(("partition", "glob", "match"), [
    ("2024/01/02", "ALL_PARTITIONS", True),
    ("2024/01/02", "2024/*/*", True),
    ("2024/01/02", "2024/*", False),
    ("city=sf", "city=*", True),
    ("city=sf", "city=s?", True),
    ("", "ALL_PARTITIONS", True),
])
def test_partition_globs(partition, glob, match):
    assert partition_matches(partition, glob) is match

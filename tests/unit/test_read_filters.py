"""Read filters bound to their column's type (pure: pyspark types only, no session)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from hoodpy.read.data_skipping import _decidable
from hoodpy.errors import InvalidConfigError
from hoodpy.read.filters import bind_filters

SCHEMA = StructType([
    StructField("id", LongType()), StructField("n", IntegerType()), StructField("fare", DoubleType()),
    StructField("f", FloatType()), StructField("amount", DecimalType(10, 2)), StructField("city", StringType()),
    StructField("flag", BooleanType()), StructField("day", DateType()), StructField("ts", TimestampType()),
    StructField("s", StructType([StructField("Inner", LongType())])),
])


@pytest.mark.parametrize(("given", "bound"), [
    (("id", "in", [9.0, "20"]), ("id", "in", [9, 20])),
    (("ID", "=", " 9.0 "), ("id", "=", 9)),
    (("id", "in", [9.5, 6, Decimal("7.00"), None]), ("id", "in", [6, 7, None])),
    (("id", "<", 9.5), ("id", "<", 9.5)),
    (("n", "=", Decimal("1.5")), ("n", "=", Decimal("1.5"))),
    (("fare", "=", 10), ("fare", "=", 10.0)),
    (("fare", "in", ["NaN", "1e3", Decimal("0.5")]), ("fare", "in", [pytest.approx(float("nan"), nan_ok=True),
                                                                    1000.0, 0.5])),
    (("f", "=", 16777217), ("f", "=", 16777217.0)),
    (("f", "=", 1.1), ("f", "=", 1.1)),
    (("amount", "in", [1, 2.5, "3.25"]), ("amount", "in", [Decimal(1), Decimal("2.5"), Decimal("3.25")])),
    (("city", "in", ["sf", 9, True]), ("city", "in", ["sf", "9", "true"])),
    (("flag", "=", " TRUE"), ("flag", "=", True)),
    (("day", ">=", "2024-01-31"), ("day", ">=", dt.date(2024, 1, 31))),
    (("day", "=", dt.datetime(2024, 1, 31)), ("day", "=", dt.date(2024, 1, 31))),
    (("ts", ">", "2024-01-01"), ("ts", ">", "2024-01-01")),          # timestamps: left to Spark
    (("s.inner", "=", "4"), ("s.Inner", "=", 4)),
    (("missing", "=", "x"), ("missing", "=", "x")),
    (("id", "IS NULL", None), ("id", "is null", None)),
    (("id", "=", None), ("id", "=", None)),
])
def test_values_become_values_of_the_column_type(given, bound):
    assert bind_filters([given], SCHEMA) == [bound]


@pytest.mark.parametrize(("given", "message"), [
    (("id", "=", "abc"), r"'abc' is not a number \(column id is bigint\)"),
    (("id", "in", [1, "x"]), r"'x' is not a number"),
    (("id", "=", True), "is a boolean"),
    (("id", "=", float("nan")), "is NaN"),
    (("amount", "=", "inf"), "not a finite number"),
    (("fare", "=", "ten"), "is not a number"),
    (("city", "=", 1.5), r"1.5 is not a string"),
    (("flag", "=", 1), "is not a boolean"),
    (("day", "=", "31/01/2024"), "is not an ISO date"),
    (("day", "=", dt.datetime(2024, 1, 31, 10)), "is a timestamp"),
    (("id", "in", 5), "takes a list"),
    (("id", "like", 5), "expected"),
])
def test_values_without_a_reading_are_rejected(given, message):
    with pytest.raises(InvalidConfigError, match=message):
        bind_filters([given], SCHEMA)


def test_filters_statistics_cannot_decide_read_no_footers():
    schema = pa.schema([("id", pa.int64()), ("fare", pa.float64()), ("tags", pa.list_(pa.string()))])
    assert _decidable(("id", ">", 5), schema)
    assert _decidable(("fare", "<", 5.0), schema)
    assert not _decidable(("fare", ">=", 5.0), schema)      # NaN sorts above every number in Spark
    assert not _decidable(("fare", "in", [float("nan")]), schema)
    assert not _decidable(("tags", "is null", None), schema)
    assert not _decidable(("other", "=", 1), schema)
    assert _decidable(("_hoodie_commit_time", ">", "2024"), schema)

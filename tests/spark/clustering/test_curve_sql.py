"""Z-order outputs computed by Spark expressions agree row for row with layout.assign_ranges."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

from hoodpy.services.clustering import curve_sql, layout

pytestmark = pytest.mark.spark

_DDL = "d date, k bigint, s smallint, big bigint, key string"


def _table(rng: np.random.Generator, n: int) -> pa.Table:
    days = rng.integers(-400, 9000, n)
    dates = [None if i % 37 == 0 else datetime.date(1970, 1, 1) + datetime.timedelta(days=int(d))
             for i, d in enumerate(days)]
    big = rng.integers(-(1 << 62), 1 << 62, n)  # beyond 2**53: only DIRECT computes these in Spark
    return pa.table({
        "d": pa.array(dates, pa.date32()),
        "k": pa.array([None if i % 53 == 0 else int(v) for i, v in enumerate(rng.integers(-50, 200_000, n))],
                      pa.int64()),
        "s": pa.array(rng.integers(-3, 4, n), pa.int16()),
        "big": pa.array(big, pa.int64()),
        "key": pa.array([f"r{i:05d}" for i in rng.permutation(n)], pa.string()),
    })


def _spec(table: pa.Table, columns: tuple[str, ...], method: str) -> layout.LayoutSpec:
    spec = layout.LayoutSpec(layout.ZORDER, columns, method, None, "key")
    if method != layout.SAMPLE:
        return spec
    sample = table.slice(0, 500)
    bounds = tuple(layout.column_boundaries(layout.direct_keys(sample.column(c)), 64) for c in columns)
    return layout.LayoutSpec(layout.ZORDER, columns, method, bounds, "key")


@pytest.mark.parametrize("columns,method,snap", [
    (("d", "k"), layout.SAMPLE, 0.1),
    (("d", "k"), layout.SAMPLE, 0.0),
    (("k", "s", "d"), layout.SAMPLE, 0.1),
    (("d", "big"), layout.DIRECT, 0.1),
    (("s", "k"), layout.DIRECT, 0.0),
])
def test_spark_outputs_match_python_ranges(spark, columns, method, snap):
    table = _table(np.random.default_rng(5), 3000)
    spec = _spec(table, columns, method)
    cuts = layout.range_boundaries(layout.sort_keys(table.slice(0, 800), spec), 9, snap=snap)
    df = spark.createDataFrame(table.to_pylist(), schema=_DDL)
    assert curve_sql.supports(spec, df.schema, cuts)
    got = curve_sql.with_outputs(df, spec, cuts, 4, "out").select("key", "out").toArrow()
    expected = dict(zip(table.column("key").to_pylist(),
                        (4 + layout.assign_ranges(layout.sort_keys(table, spec), cuts)).tolist(), strict=True))
    assert dict(zip(got.column("key").to_pylist(), got.column("out").to_pylist(), strict=True)) == expected
    assert len(set(expected.values())) > 5  # the rows spread over the outputs


def test_python_path_where_spark_cannot_be_exact(spark):
    table = _table(np.random.default_rng(6), 1000)
    df = spark.createDataFrame(table.to_pylist(), schema=_DDL)
    huge = _spec(table, ("d", "big"), layout.SAMPLE)  # boundaries beyond 2**53 are not exact doubles
    cuts = layout.range_boundaries(layout.sort_keys(table, huge), 4)
    assert not curve_sql.supports(huge, df.schema, cuts)
    hilbert = layout.LayoutSpec(layout.HILBERT, ("d", "k"), layout.DIRECT, None, "key")
    assert not curve_sql.supports(hilbert, df.schema, layout.range_boundaries(layout.sort_keys(table, hilbert), 4))
    by_name = layout.LayoutSpec(layout.ZORDER, ("d", "key"), layout.DIRECT, None, "key")
    assert not curve_sql.supports(by_name, df.schema, layout.range_boundaries(layout.sort_keys(table, by_name), 4))

"""hudi-rs reads the decimals of a bulk_insert (shipped to the tasks as doubles up to precision 15 and rebuilt
there, Spark's own path above) as exactly the values written, negatives, extremes and nulls included."""

from __future__ import annotations

from decimal import Context, Decimal

import pytest

import hudi_rs
from hoodpy.table import HoodieTable

EXACT = Context(prec=60)  # scaleb rounds to the context's precision (28 by default)
pytestmark = [pytest.mark.compat, pytest.mark.spark]

SHAPES = [(15, 2), (15, 0), (15, 15), (9, 4), (1, 0), (18, 2), (38, 10)]


@pytest.mark.parametrize("mode", ["NONE", "GLOBAL_SORT"])
def test_hudi_rs_reads_bulk_inserted_decimals(spark, tmp_path, mode):
    from pyspark.sql.types import DecimalType, IntegerType, LongType, StructField, StructType

    columns = [f"d_{p}_{s}" for p, s in SHAPES]
    rows = []
    for i, sign in enumerate([1, -1, 1, -1, 0, None]):
        values = []
        for p, s in SHAPES:
            units = None if sign is None else sign * (10 ** p - 1 - i)
            values.append(None if units is None else Decimal(units).scaleb(-s, EXACT))
        rows.append((i, 1, *values))
    schema = StructType([StructField("id", IntegerType(), False), StructField("ts", LongType(), False)]
                        + [StructField(c, DecimalType(p, s)) for c, (p, s) in zip(columns, SHAPES)])
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name=f"dec_{mode.lower()}", record_key_fields=["id"],
                           precombine_field="ts", options={"hoodie.bulkinsert.sort.mode": mode})
    t.bulk_insert(spark.createDataFrame(rows, schema).repartition(2))
    theirs = {r["id"]: tuple(r[c] for c in columns) for r in hudi_rs.snapshot(path)}
    assert theirs == {r[0]: tuple(r[2:]) for r in rows}

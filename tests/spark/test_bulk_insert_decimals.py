"""bulk_insert ships decimal columns of precision <= 15 to its tasks as doubles and rebuilds them there
(hoodpy.write.decimal_transfer): every precision 1..18 and scale 0..precision, with the extremes, negatives and
nulls, reads back exactly through pyarrow, Spark and hudi-rs, in the parquet types a decimal always had
(FIXED_LEN_BYTE_ARRAY, DECIMAL(p,s)); wider decimals take Spark's own path and read back as exactly."""

from __future__ import annotations

import json
import random
from decimal import Context, Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hoodpy_spark_helpers import latest_files

from hoodpy.table import HoodieTable

EXACT = Context(prec=60)  # scaleb rounds to the context's precision (28 by default)
pytestmark = pytest.mark.spark

SHAPES = [(p, s) for p in range(1, 19) for s in range(p + 1)] + [(19, 0), (20, 4), (38, 10), (38, 0)]
ROWS = 24


def _column(p: int, s: int) -> str:
    return f"d_{p}_{s}"


def _expected() -> dict[int, dict[str, Decimal | None]]:
    rng = random.Random(16)
    out: dict[int, dict[str, Decimal | None]] = {i: {} for i in range(ROWS)}
    for p, s in SHAPES:
        top = 10 ** p - 1
        units = [top, -top, top - 1, -(top - 1), 0, 1, -1, None] + [rng.randint(-top, top) for _ in range(ROWS - 8)]
        rng.shuffle(units)
        for i, u in enumerate(units):
            out[i][_column(p, s)] = None if u is None else Decimal(u).scaleb(-s, EXACT)
    return out


def _batch(spark, expected):
    from pyspark.sql.types import DecimalType, IntegerType, LongType, StructField, StructType

    schema = StructType([StructField("id", IntegerType(), False), StructField("ts", LongType(), False)]
                        + [StructField(_column(p, s), DecimalType(p, s)) for p, s in SHAPES])
    data = [(i, 1, *(expected[i][_column(p, s)] for p, s in SHAPES)) for i in range(ROWS)]
    return spark.createDataFrame(data, schema).repartition(3)


@pytest.mark.parametrize("mode", ["NONE", "GLOBAL_SORT"])
def test_every_decimal_shape_round_trips_exactly(spark, tmp_path, mode):
    expected = _expected()
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name=f"dec_{mode.lower()}", record_key_fields=["id"],
                           precombine_field="ts", options={"hoodie.bulkinsert.sort.mode": mode})
    t.bulk_insert(_batch(spark, expected))

    files = list(latest_files(t).values())
    got: dict[int, dict] = {}
    for rel in files:
        f = pq.ParquetFile(t.storage.full_path(rel))
        for p, s in SHAPES:
            name = _column(p, s)
            assert f.schema_arrow.field(name).type == pa.decimal128(p, s)
            column = f.schema.column(f.schema_arrow.get_field_index(name))
            assert (column.physical_type, json.loads(column.logical_type.to_json())) == \
                ("FIXED_LEN_BYTE_ARRAY", {"Type": "Decimal", "precision": p, "scale": s}), name
        for row in f.read().to_pylist():
            got[row["id"]] = {_column(p, s): row[_column(p, s)] for p, s in SHAPES}
    assert got == expected

    spark_rows = {r["id"]: {_column(p, s): r[_column(p, s)] for p, s in SHAPES} for r in t.read().collect()}
    assert spark_rows == expected


def test_only_decimals_a_double_holds_cross_as_doubles(spark):
    from hoodpy.write.decimal_transfer import ship

    shipped_df, shipped = ship(_batch(spark, _expected()))
    assert shipped == tuple((_column(p, s), p, s) for p, s in SHAPES if p <= 15)
    types = dict(shipped_df.dtypes)
    assert types[_column(15, 2)] == "double" and types[_column(16, 2)] == "decimal(16,2)"
    assert shipped_df.columns[:3] == ["id", "ts", _column(1, 0)]

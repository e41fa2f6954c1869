"""Decimal columns of precision <= 15 cross from the JVM to a bulk_insert task as doubles and are rebuilt
exactly (hoodpy.write.decimal_transfer): every precision and scale, the extremes, negatives, nulls, sliced
input; wider decimals are refused rather than rounded."""

from __future__ import annotations

import random
from decimal import Decimal

import pyarrow as pa
import pytest

from hoodpy.write.decimal_transfer import MAX_PRECISION, decimal_from_doubles, restored, restored_batches


def _values(precision: int, scale: int, rng: random.Random) -> list[Decimal | None]:
    top = 10 ** precision - 1
    units = [top, -top, top - 1, -(top - 1), 0, 1, -1, 5, -5] + [rng.randint(-top, top) for _ in range(300)]
    out: list[Decimal | None] = [Decimal(u).scaleb(-scale) for u in units]
    return out[:4] + [None] + out[4:] + [None]


def _as_doubles(values: list[Decimal | None]) -> pa.Array:
    # float(Decimal) is the nearest double, as Spark's cast of a decimal to double gives
    return pa.array([None if v is None else float(v) for v in values], pa.float64())


@pytest.mark.parametrize("precision", range(1, MAX_PRECISION + 1))
def test_every_scale_round_trips_exactly(precision):
    rng = random.Random(precision)
    for scale in range(precision + 1):
        values = _values(precision, scale, rng)
        for offset in (0, 3):  # a sliced array: its validity bitmap starts mid-byte
            got = decimal_from_doubles(_as_doubles(values).slice(offset), precision, scale)
            got.validate(full=True)
            assert got.type == pa.decimal128(precision, scale)
            assert got.to_pylist() == values[offset:], (precision, scale, offset)
            assert got.null_count == values[offset:].count(None)


def test_no_nulls_has_no_validity_buffer():
    got = decimal_from_doubles(pa.array([1.25, -0.05], pa.float64()), 5, 2)
    assert got.buffers()[0] is None and got.to_pylist() == [Decimal("1.25"), Decimal("-0.05")]


def test_wider_than_a_double_is_refused():
    with pytest.raises(ValueError, match="decimal\\(16,2\\)"):
        decimal_from_doubles(pa.array([1.0]), 16, 2)


def test_restored_replaces_only_the_shipped_columns_in_place():
    table = pa.table({"id": pa.array([1, 2], pa.int32()), "price": pa.array([12.34, None], pa.float64()),
                      "ratio": pa.array([0.5, 0.25], pa.float64()), "name": ["a", "b"]})
    got = restored(table, (("price", 15, 2),))
    assert got.schema.names == ["id", "price", "ratio", "name"]
    assert got.schema.field("price").type == pa.decimal128(15, 2)
    assert got.column("price").to_pylist() == [Decimal("12.34"), None]
    assert got.column("ratio").type == pa.float64() and got.column("id").equals(table.column("id"))
    batches = list(restored_batches(iter(table.to_batches(max_chunksize=1)), (("price", 15, 2),)))
    assert [b.schema.field("price").type for b in batches] == [pa.decimal128(15, 2)] * 2
    assert list(restored_batches(iter(table.to_batches()), ())) == table.to_batches()

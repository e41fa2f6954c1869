"""Decimal columns shipped from the JVM to a write task as doubles and rebuilt exactly in the task.

Spark's Arrow writer turns every decimal value into a Java BigDecimal and sets the Arrow vector from it
(unscaled BigInteger, byte array, byte reversal): measured on SF 0.25 lineitem's four decimal(15,2) columns,
about 0.7 JVM CPU s more than shipping them as doubles (as cheap as shipping a bare long; issue #16). A
decimal of precision <= 15 survives the round trip exactly: its unscaled value ``u`` (|u| < 10^15 < 2^53)
becomes the double nearest ``u / 10^s``, and ``rint(d * 10^s)`` is off from ``u`` by at most
|u| * 2^-52 < 0.25 before rounding, so it gives ``u`` back, negatives and every scale 0..15 included. The
task rebuilds the decimal128 column from those int64 unscaled values as a buffer (16-byte little-endian two's
complement: the value, then its sign word), no per-value Python.

Precision 16..18 keeps Spark's own path: a double no longer holds every value, and the exact cheap
expressions measured (a long integer part plus the fraction as a double: compact decimal arithmetic only)
cost the JVM more than the BigDecimal conversion they replace. Nested decimals (in structs, lists, maps)
keep it too.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType

# The widest decimal whose every value a double holds exactly enough to give its unscaled value back.
MAX_PRECISION = 15

# (column name, precision, scale) of each decimal column shipped as a double.
Shipped = tuple[tuple[str, int, int], ...]


def ship(rows: DataFrame) -> tuple[DataFrame, Shipped]:
    """``rows`` with each top-level decimal column of precision <= :data:`MAX_PRECISION` cast to double (same
    name and position), and the columns so cast, for :func:`restored` in the task."""
    shipped = tuple((f.name, f.dataType.precision, f.dataType.scale) for f in rows.schema.fields
                    if isinstance(f.dataType, DecimalType) and f.dataType.precision <= MAX_PRECISION)
    if not shipped:
        return rows, ()
    # withColumns names only the cast columns: a select of every column cost ~350 driver->JVM calls (each
    # column expression is several), about what the cast saves the JVM on a 360k-row upsert batch.
    return rows.withColumns({name: F.col("`" + name.replace("`", "``") + "`").cast("double")
                             for name, _, _ in shipped}), shipped


def restored(table: pa.Table, shipped: Shipped) -> pa.Table:
    """``table`` (a task's rows as :func:`ship` sent them) with its shipped columns decimal again."""
    for name, precision, scale in shipped:
        i = table.schema.get_field_index(name)
        table = table.set_column(i, pa.field(name, pa.decimal128(precision, scale), table.schema.field(i).nullable),
                                 decimal_from_doubles(table.column(i).combine_chunks(), precision, scale))
    return table


def restored_batches(batches: Iterator[pa.RecordBatch], shipped: Shipped) -> Iterator[pa.RecordBatch]:
    """:func:`restored` over a task's batches."""
    if not shipped:
        yield from batches
        return
    for batch in batches:
        yield from restored(pa.Table.from_batches([batch]), shipped).to_batches() if batch.num_rows else [batch]


def decimal_from_doubles(doubles: pa.Array, precision: int, scale: int) -> pa.Array:
    """The decimal128(``precision``, ``scale``) values whose nearest doubles are ``doubles`` (precision <=
    :data:`MAX_PRECISION`); nulls stay null."""
    if precision > MAX_PRECISION:
        raise ValueError(f"decimal({precision},{scale}) does not survive a double: precision > {MAX_PRECISION}")
    n = len(doubles)
    # Without nulls the doubles are read in place (no filled copy).
    values = (pc.fill_null(doubles, 0.0) if doubles.null_count else doubles).to_numpy(zero_copy_only=False)
    scaled = values * float(10 ** scale)
    words = np.empty((n, 2), dtype=np.int64)
    words[:, 0] = np.rint(scaled, out=scaled)
    words[:, 1] = words[:, 0] >> 63  # the sign word of the 128-bit two's complement value
    validity = pc.is_valid(doubles).buffers()[1] if doubles.null_count else None
    return pa.Array.from_buffers(pa.decimal128(precision, scale), n, [validity, pa.py_buffer(words)],
                                 null_count=doubles.null_count)

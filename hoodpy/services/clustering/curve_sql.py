"""Z-order output assignment as Spark SQL expressions, so the rows being clustered cross into Python once.

Executing a curve layout needs each row's output file: the number of output boundaries at or below the row's
curve key (``layout.assign_ranges``). Computed in Python, every column of every row crosses from the JVM to
Python and back before the shuffle, and again to be written. Here the same key is built from Spark column
expressions, for the sort column types whose DIRECT keys (``layout.direct_keys``) Spark computes exactly:
integers and dates (epoch milliseconds). Unsigned 64-bit values are held in Spark longs with the sign bit
flipped, so that Spark's signed order is their unsigned order. SAMPLE ranks (``layout.sample_coordinates``)
come from Spark's ``Bucketizer`` (a binary search over the column boundaries in the JVM); it compares doubles,
so the boundaries must be exact doubles (below 2**53 in magnitude), or the Python path is taken. Rows keep
the same outputs as ``layout.assign_ranges`` gives them; the writer still orders each file in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, DateType, IntegerType, LongType, ShortType, StringType, StructType

from hoodpy.services.clustering import layout

_SIGN = 1 << 63
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_EXACT_DOUBLE = 1 << 53
_MILLIS_PER_DAY = 86_400_000
_KEY_TYPES = (ByteType, ShortType, IntegerType, LongType, DateType)
_TEMP = "__hoodpy_sql_"


def _signed(u: int) -> int:
    """The Spark long holding unsigned ``u`` with its sign bit flipped (signed order = unsigned order)."""
    s = int(u) ^ _SIGN
    return s - (1 << 64) if s >= _SIGN else s


def supports(spec: layout.LayoutSpec, schema: StructType, boundaries: pa.Table) -> bool:
    """Whether :func:`with_outputs` computes ``spec``'s outputs exactly for rows of ``schema``."""
    if not (spec.uses_curve and spec.strategy == layout.ZORDER):
        return False
    fields = {f.name: f.dataType for f in schema.fields}
    if spec.tiebreak is None or not isinstance(fields.get(spec.tiebreak), StringType):
        return False
    if not all(isinstance(fields.get(c), _KEY_TYPES) for c in spec.columns):
        return False
    if boundaries.column(boundaries.num_columns - 1).null_count:
        return False  # null record keys (virtual keys) sort last in Arrow; Spark's comparisons skip them
    if spec.build_method == layout.SAMPLE:
        for b in spec.boundaries or ():
            finite = [_signed(v) for v in b.tolist() if _signed(v) != _LONG_MAX]  # the null key: handled apart
            if any(abs(v) >= _EXACT_DOUBLE for v in finite):
                return False
    return True


def _signed_key(column: str, dtype) -> Column:
    """The DIRECT key of ``column`` as a sign-flipped long: the value itself (dates: epoch milliseconds);
    nulls take the largest key, as in ``layout.direct_keys``."""
    c = F.col(column)
    value = F.unix_date(c).cast("long") * F.lit(_MILLIS_PER_DAY) if isinstance(dtype, DateType) else c.cast("long")
    return F.coalesce(value, F.lit(_LONG_MAX))


def _interleave(coordinates: Sequence[Column], bits: int) -> list[Column]:
    """``layout.interleave_bits`` over unsigned coordinates held in longs: per 64-bit word, the word
    sign-flipped (a long whose signed order is the word's unsigned order)."""
    n = len(coordinates)
    words = -(-n * bits // 64)
    terms: list[list[Column]] = [[] for _ in range(words)]
    for level in range(bits):
        for d, c in enumerate(coordinates):
            offset = level * n + d
            bit = F.shiftrightunsigned(c, bits - 1 - level).bitwiseAND(F.lit(1))
            terms[offset // 64].append(F.shiftleft(bit, 63 - offset % 64))
    return [reduce(lambda a, b: a.bitwiseOR(b), t).bitwiseXOR(F.lit(_LONG_MIN)) for t in terms]


def _coordinates(df: DataFrame, spec: layout.LayoutSpec, keys: list[str], prefix: str) -> tuple[DataFrame, list[Column], int]:
    if spec.build_method != layout.SAMPLE:
        return df, [F.col(k).bitwiseXOR(F.lit(_LONG_MIN)) for k in keys], layout.DIRECT_BITS
    from pyspark.ml.feature import Bucketizer

    coords = []
    for d, (k, b) in enumerate(zip(keys, spec.boundaries or (), strict=True)):
        finite = sorted({_signed(v) for v in b.tolist()} - {_LONG_MAX})
        rank = f"{prefix}rank{d}"
        as_double = f"{prefix}double{d}"
        df = df.withColumn(as_double, F.col(k).cast("double"))
        df = Bucketizer(splits=[-np.inf, *map(float, finite), np.inf], inputCol=as_double,
                        outputCol=rank).transform(df)
        # Rank = boundaries at or below the key; the null key (the largest) is at or above all of them.
        ranks = F.when(F.col(k) == F.lit(_LONG_MAX), F.lit(len(b))).otherwise(F.col(rank).cast("long"))
        coords.append(F.floor(F.shiftleft(ranks, layout.SAMPLE_BITS) / F.lit(len(b) + 1)).cast("long"))
    return df, coords, layout.SAMPLE_BITS


def _at_or_above(row: Sequence[Column], boundary: Sequence[object]) -> Column:
    """Lexicographic ``row >= boundary``."""
    *heads, last = list(zip(row, boundary, strict=True))
    out = last[0] >= F.lit(last[1])
    for c, v in reversed(heads):
        out = (c > F.lit(v)) | ((c == F.lit(v)) & out)
    return out


def with_outputs(df: DataFrame, spec: layout.LayoutSpec, boundaries: pa.Table, first_output: int,
                 output_column: str) -> DataFrame:
    """``df`` with ``output_column``: ``first_output`` plus the row's range among ``boundaries`` (as
    ``layout.assign_ranges`` numbers them). Requires :func:`supports`."""
    types = {f.name: f.dataType for f in df.schema.fields}
    original = df.columns
    keys = [f"{_TEMP}key{d}" for d in range(len(spec.columns))]
    for k, c in zip(keys, spec.columns, strict=True):
        df = df.withColumn(k, _signed_key(c, types[c]))
    df, coords, bits = _coordinates(df, spec, keys, _TEMP)
    words = _interleave(coords, bits)
    word_names = [f"{_TEMP}w{w}" for w in range(len(words))]
    df = df.select(*original, *[w.alias(n) for w, n in zip(words, word_names, strict=True)])
    row = [F.col(n) for n in word_names] + [F.col(spec.tiebreak)]
    cut_words = [boundaries.column(f"{layout.KEY_PREFIX}w{w}").to_pylist() for w in range(len(words))]
    cut_ties = boundaries.column(boundaries.num_columns - 1).to_pylist()
    output = F.lit(first_output)
    for i in range(boundaries.num_rows):
        cut = [_signed(w[i]) for w in cut_words] + [cut_ties[i]]
        output = output + _at_or_above(row, cut).cast("int")
    return df.select(*original, output.cast("int").alias(output_column))

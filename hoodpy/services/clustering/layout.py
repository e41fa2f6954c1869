"""Record layouts for clustering: linear order, Z-order and Hilbert curves over the sort columns.

Pure numpy / pyarrow, so the same code runs on the driver (over a sample) and inside Spark tasks.

A curve orders rows by a *key* built from the sort columns:

1. Each column maps to an order-preserving unsigned 64-bit integer (:func:`direct_keys`), with the values
   Hudi's DIRECT build maps (SpaceCurveSortingHelper): integers as they are, dates and timestamps as epoch
   milliseconds (java.sql.Date/Timestamp.getTime), decimals truncated to integers (longValue), each offset
   to unsigned (sign bit flipped); floats through the IEEE-754 order-preserving transform; strings and
   binaries by their first 8 bytes, big-endian. Nulls map to the largest key, so they sort last as in Hudi.
2. ``DIRECT`` (Hudi's default build method) uses those 64 bits as they are. ``SAMPLE`` (hoodpy's default)
   replaces each key by its rank among boundaries sampled from that column (:func:`column_boundaries`),
   scaled to 32 bits, so that every column spreads over the whole coordinate range. With DIRECT, a column
   whose values only differ in their low bits (part numbers next to epoch-millisecond dates, say)
   contributes nothing to the top of the curve and the curve degenerates into a sort by the other column.
3. ``ZORDER`` interleaves the coordinates' bits, most significant first; ``HILBERT`` maps the
   n-dimensional point to its distance along the Hilbert curve (Skilling's transpose algorithm). Both
   return ``(rows, words)`` uint64 arrays, compared word by word (:func:`curve_keys`).

Output files are cut at boundary rows of the ordered key (:func:`range_boundaries`,
:func:`assign_ranges`), so each file covers one contiguous stretch of the curve.

Example:
    >>> import pyarrow as pa
    >>> spec = LayoutSpec(ZORDER, ("x", "y"))
    >>> t = pa.table({"x": [3, 0, 1], "y": [0, 3, 1]})
    >>> order_indices(sort_keys(t, spec)).tolist()
    [2, 1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

LINEAR = "LINEAR"
ZORDER = "ZORDER"
HILBERT = "HILBERT"
DIRECT = "DIRECT"
SAMPLE = "SAMPLE"

SAMPLE_BITS = 32  # bits per coordinate after SAMPLE ranking
DIRECT_BITS = 64
_U64 = np.uint64
_SIGN = _U64(1 << 63)
_ALL_ONES = _U64(0xFFFFFFFFFFFFFFFF)
_MILLIS_PER_DAY = 86_400_000
_UNITS_PER_MILLI = {"ms": 1, "us": 1_000, "ns": 1_000_000}
# Column boundaries a SAMPLE curve ranks each sort column against (at most).
MAX_COLUMN_BOUNDARIES = 4096
# Curve layouts move each cut between output files by up to this share of a file's rows to the start of the
# nearest large curve cell (see range_boundaries).
CELL_SNAP = 0.1
KEY_PREFIX = "__hoodpy_key_"
_MIN_ROWS_PER_PART = 65536  # rows per slice when curve keys are computed in parallel
_MARKER = "__hoodpy_boundary"


@dataclass(frozen=True)
class LayoutSpec:
    """How one clustering run orders rows.

    Attributes:
        strategy: LINEAR, ZORDER or HILBERT.
        columns: sort columns (dotted paths reach into structs for LINEAR).
        build_method: DIRECT or SAMPLE (curves only).
        boundaries: SAMPLE only, per column the sorted DIRECT-key boundaries (see column_boundaries).
        tiebreak: a column appended to the key so that keys are unique (the record key).
    """

    strategy: str
    columns: tuple[str, ...]
    build_method: str = DIRECT
    boundaries: tuple[np.ndarray, ...] | None = field(default=None, compare=False)
    tiebreak: str | None = None

    @property
    def uses_curve(self) -> bool:
        """Z-order / Hilbert over two or more columns; one column is a linear sort, as in Hudi."""
        return self.strategy in (ZORDER, HILBERT) and len(self.columns) > 1

    @property
    def needs_boundaries(self) -> bool:
        return self.uses_curve and self.build_method == SAMPLE


# ----------------------------------------------------------------------------------------------------
# Columns to order-preserving unsigned integers
# ----------------------------------------------------------------------------------------------------


def resolve_column(table: pa.Table | pa.RecordBatch, path: str) -> pa.Array:
    """The column ``path`` of ``table``: a top-level name, or a dotted path into struct columns."""
    names = table.schema.names
    if path in names:
        col = table.column(path)
    else:
        head, *rest = path.split(".")
        if head not in names:
            raise KeyError(path)
        col = table.column(head)
        for part in rest:
            col = pc.struct_field(col, part)
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _valid_mask(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _signed_to_unsigned(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int64).view(_U64) ^ _SIGN


def _float_keys(values: np.ndarray) -> np.ndarray:
    bits = values.astype(np.float64).view(_U64)
    negative = (bits & _SIGN) != 0
    return np.where(negative, ~bits, bits | _SIGN)


def _prefix_keys(arr: pa.Array) -> np.ndarray:
    """First 8 bytes of each string / binary value, big-endian, zero padded."""
    t = arr.type
    if pa.types.is_fixed_size_binary(t):
        arr = arr.cast(pa.binary())
        t = arr.type
    if pa.types.is_string(t) or pa.types.is_binary(t):
        offset_type = np.int32
    elif pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        offset_type = np.int64
    elif pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return _prefix_keys(arr.cast(pa.large_binary()))
    else:
        raise TypeError(f"not a string or binary type: {t}")
    n = len(arr)
    out = np.zeros(n, dtype=_U64)
    if n == 0:
        return out
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=offset_type)[arr.offset: arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    for j in range(8):
        has = lengths > j
        if not has.any():
            break
        byte = np.zeros(n, dtype=_U64)
        byte[has] = data[starts[has] + j]
        out |= byte << _U64(8 * (7 - j))
    return out


def direct_keys(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Map a column to uint64 keys with a < b implying key(a) <= key(b); nulls map to the maximum.

    Raises:
        TypeError: a type without a natural order (lists, maps, structs).
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    valid = _valid_mask(arr)
    if pa.types.is_boolean(t):
        keys = pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(_U64)
    elif pa.types.is_unsigned_integer(t):
        keys = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(_U64)
    elif pa.types.is_signed_integer(t):
        keys = _signed_to_unsigned(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False))
    elif pa.types.is_floating(t):
        keys = _float_keys(pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False))
    elif pa.types.is_decimal(t):
        # Hudi: BigDecimal.longValue(), the integer part (monotone, so order is kept up to ties).
        keys = _signed_to_unsigned(pc.fill_null(pc.trunc(arr).cast(pa.int64(), safe=False), 0)
                                   .to_numpy(zero_copy_only=False))
    elif pa.types.is_date32(t):
        days = pc.fill_null(arr.view(pa.int32()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        keys = _signed_to_unsigned(days * _MILLIS_PER_DAY)
    elif pa.types.is_timestamp(t):
        raw = pc.fill_null(arr.view(pa.int64()), 0).to_numpy(zero_copy_only=False)
        millis = raw * 1000 if t.unit == "s" else np.floor_divide(raw, _UNITS_PER_MILLI[t.unit])
        keys = _signed_to_unsigned(millis)
    elif pa.types.is_time32(t):
        keys = _signed_to_unsigned(pc.fill_null(arr.view(pa.int32()), 0).to_numpy(zero_copy_only=False))
    elif pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        keys = _signed_to_unsigned(pc.fill_null(arr.view(pa.int64()), 0).to_numpy(zero_copy_only=False))
    elif (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
          or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
          or pa.types.is_string_view(t) or pa.types.is_binary_view(t)):
        keys = _prefix_keys(arr)
    else:
        raise TypeError(f"cannot order values of type {t}")
    keys = np.asarray(keys, dtype=_U64)
    if not valid.all():
        keys = np.where(valid, keys, _ALL_ONES)
    return keys


def is_orderable(t: pa.DataType) -> bool:
    """Types a sort column may have (the ones direct_keys maps)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    return not (pa.types.is_nested(t) or pa.types.is_null(t))


# ----------------------------------------------------------------------------------------------------
# SAMPLE: ranks over sampled boundaries
# ----------------------------------------------------------------------------------------------------


def column_boundaries(sample_keys: np.ndarray, max_boundaries: int) -> np.ndarray:
    """Up to ``max_boundaries`` sorted, distinct DIRECT-key quantiles of a sample of one column."""
    keys = np.sort(np.asarray(sample_keys, dtype=_U64))
    if len(keys) == 0 or max_boundaries <= 0:
        return np.zeros(0, dtype=_U64)
    count = min(max_boundaries, len(keys))
    positions = (np.arange(1, count + 1, dtype=np.float64) * len(keys) / (count + 1)).astype(np.int64)
    return np.unique(keys[np.clip(positions, 0, len(keys) - 1)])


def sampled_spec(spec: LayoutSpec, sample: pa.Table | pa.RecordBatch) -> LayoutSpec:
    """``spec`` with the column boundaries a SAMPLE curve needs, placed from ``sample`` (a sample of the rows
    with the sort columns); ``spec`` itself when it needs none."""
    if not spec.needs_boundaries:
        return spec
    count = min(MAX_COLUMN_BOUNDARIES, max(1, sample.num_rows))
    bounds = tuple(column_boundaries(direct_keys(resolve_column(sample, c)), count) for c in spec.columns)
    return LayoutSpec(spec.strategy, spec.columns, spec.build_method, bounds, spec.tiebreak)


def sampled_layout(spec: LayoutSpec, sample: pa.Table, num_ranges: int) -> tuple[LayoutSpec, pa.Table]:
    """``spec`` with its column boundaries (:func:`sampled_spec`) and the boundaries of ``num_ranges`` output
    files, both placed from ``sample``: the one placement the driver (groups Spark rewrites) and a group's own
    task (:mod:`group_rewrite`) share, so both cut the same layout from the same sample."""
    spec = sampled_spec(spec, sample)
    return spec, range_boundaries(sort_keys(sample, spec), num_ranges, snap=CELL_SNAP)


def sample_coordinates(keys: np.ndarray, boundaries: np.ndarray, bits: int = SAMPLE_BITS) -> np.ndarray:
    """Rank of each key among ``boundaries`` (number of boundaries <= key), spread over ``bits`` bits."""
    ranks = np.searchsorted(boundaries, keys, side="right").astype(_U64)
    buckets = _U64(len(boundaries) + 1)
    return (ranks << _U64(bits)) // buckets


# ----------------------------------------------------------------------------------------------------
# Curves
# ----------------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _spread_table(n: int) -> np.ndarray:
    """For each byte value, its bits moved to positions 0, n, 2n, ... (bit j -> bit j*n)."""
    table = np.zeros(256, dtype=_U64)
    for v in range(256):
        out = 0
        for j in range(8):
            if v >> j & 1:
                out |= 1 << (j * n)
        table[v] = out
    return table


def _put_bits(out: np.ndarray, value: np.ndarray, offset: int, width: int) -> None:
    """OR ``width``-bit values into the bit stream ``out`` (rows, words) at ``offset`` (0 = most significant)."""
    word, pos = divmod(offset, 64)
    room = 64 - pos
    if width <= room:
        shift = room - width
        out[:, word] |= value << _U64(shift) if shift else value
    else:
        spill = width - room
        out[:, word] |= value >> _U64(spill)
        out[:, word + 1] |= (value & _U64((1 << spill) - 1)) << _U64(64 - spill)


def interleave_bits(coordinates: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Z-order: bit ``bits-1`` of every coordinate, then bit ``bits-2``, ...; returns (rows, words) uint64."""
    n = len(coordinates)
    rows = len(coordinates[0]) if n else 0
    words = -(-n * bits // 64)
    out = np.zeros((rows, words), dtype=_U64)
    coords = [np.asarray(c, dtype=_U64) for c in coordinates]
    if n <= 8 and bits % 8 == 0:
        spread = _spread_table(n)
        for chunk in range(bits // 8):
            shift = _U64(bits - 8 * (chunk + 1))
            value = np.zeros(rows, dtype=_U64)
            for d, c in enumerate(coords):
                value |= spread[((c >> shift) & _U64(0xFF)).astype(np.intp)] << _U64(n - 1 - d)
            _put_bits(out, value, chunk * 8 * n, 8 * n)
        return out
    for level in range(bits):
        shift = _U64(bits - 1 - level)
        for d, c in enumerate(coords):
            _put_bits(out, (c >> shift) & _U64(1), level * n + d, 1)
    return out


def hilbert_transpose(coordinates: Sequence[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's AxestoTranspose: the Hilbert index in transposed form (interleave it to get the index)."""
    x = [np.array(c, dtype=_U64, copy=True) for c in coordinates]
    n = len(x)
    m = 1 << (bits - 1)
    q = m
    while q > 1:
        p = _U64(q - 1)
        qq = _U64(q)
        for i in range(n):
            high = (x[i] & qq) != 0
            if i == 0:
                x[0] = np.where(high, x[0] ^ p, x[0])
            else:
                t = np.where(high, _U64(0), (x[0] ^ x[i]) & p)
                x[0] = np.where(high, x[0] ^ p, x[0] ^ t)
                x[i] = x[i] ^ t
        q >>= 1
    for i in range(1, n):
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0]) if n else np.zeros(0, dtype=_U64)
    q = m
    while q > 1:
        t = np.where((x[n - 1] & _U64(q)) != 0, t ^ _U64(q - 1), t)
        q >>= 1
    return [xi ^ t for xi in x]


def hilbert_index(coordinates: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Distance along the n-dimensional Hilbert curve of ``bits`` bits per axis, as (rows, words) uint64."""
    return interleave_bits(hilbert_transpose(coordinates, bits), bits)


def curve_coordinates(columns: Sequence[pa.Array], spec: LayoutSpec) -> tuple[list[np.ndarray], int]:
    """Per sort column its curve coordinate, and the number of bits each coordinate has."""
    keys = [direct_keys(c) for c in columns]
    if spec.build_method != SAMPLE:
        return keys, DIRECT_BITS
    if spec.boundaries is None or len(spec.boundaries) != len(keys):
        raise ValueError("SAMPLE curves need one boundary array per sort column")
    return [sample_coordinates(k, b) for k, b in zip(keys, spec.boundaries, strict=True)], SAMPLE_BITS


def curve_keys(columns: Sequence[pa.Array], spec: LayoutSpec) -> np.ndarray:
    """(rows, words) uint64 positions along the spec's curve; compare rows word by word."""
    coords, bits = curve_coordinates(columns, spec)
    if spec.strategy == HILBERT:
        return hilbert_index(coords, bits)
    return interleave_bits(coords, bits)


# ----------------------------------------------------------------------------------------------------
# Sort keys, ordering, cutting into ranges
# ----------------------------------------------------------------------------------------------------


def sort_keys(table: pa.Table | pa.RecordBatch, spec: LayoutSpec, pool: Executor | None = None,
              parts: int = 1) -> pa.Table:
    """The columns that order ``table``'s rows under ``spec``, first to last (tiebreak last).

    LINEAR: the sort columns themselves. Curves: one uint64 column per 64 bits of the curve position,
    computed over ``parts`` slices of the rows on ``pool`` when given (numpy releases the GIL).
    """
    arrays: list[pa.Array] = []
    names: list[str] = []
    columns = [resolve_column(table, c) for c in spec.columns]
    if spec.uses_curve:
        n = table.num_rows
        parts = max(1, min(parts, n // _MIN_ROWS_PER_PART)) if pool is not None else 1
        if parts > 1:
            cuts = [n * i // parts for i in range(parts + 1)]
            words = np.concatenate(list(pool.map(
                lambda i: curve_keys([c.slice(cuts[i], cuts[i + 1] - cuts[i]) for c in columns], spec),
                range(parts))))
        else:
            words = curve_keys(columns, spec)
        for w in range(words.shape[1]):
            arrays.append(pa.array(words[:, w], pa.uint64()))
            names.append(f"{KEY_PREFIX}w{w}")
    else:
        for i, col in enumerate(columns):
            arrays.append(col.dictionary_decode() if pa.types.is_dictionary(col.type) else col)
            names.append(f"{KEY_PREFIX}c{i}")
    if spec.tiebreak is not None:
        arrays.append(resolve_column(table, spec.tiebreak))
        names.append(f"{KEY_PREFIX}tiebreak")
    return pa.Table.from_arrays(arrays, names=names)


def _sort_order(keys: pa.Table, extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    return [(name, "ascending") for name in keys.column_names if name != _MARKER] + (extra or [])


def order_indices(keys: pa.Table) -> np.ndarray:
    """Row positions of ``keys`` in ascending key order (nulls last, pyarrow's default; stable)."""
    if keys.num_columns == 0:
        return np.arange(keys.num_rows)
    return pc.sort_indices(keys, sort_keys=_sort_order(keys)).to_numpy()


def range_boundaries(keys: pa.Table, num_ranges: int, *, snap: float = 0.0) -> pa.Table:
    """The ``num_ranges - 1`` key rows that cut ``keys`` (a sample) into equally populated ranges.

    With ``snap`` > 0 and curve keys, each cut may move by up to ``snap`` of a range's rows to the
    curve position with the most trailing zero bits in that window: the start of the largest aligned
    curve cell (a quadtree / Hilbert sub-cube) nearby. An exact-quantile cut usually lands a few rows
    into the next cell, and for Z-order that cell can be far away in space, which stretches the file's
    min/max box over both; cell-aligned cuts keep every file's box tight at the cost of sizes within
    ``snap`` of even.
    """
    n = keys.num_rows
    if num_ranges <= 1 or n == 0:
        return keys.slice(0, 0)
    order = order_indices(keys)
    positions = sorted({(i * n) // num_ranges for i in range(1, num_ranges)} - {0})
    cuts = keys.take(pa.array(order[positions], pa.int64()))
    words = [c for c in keys.column_names if c.startswith(f"{KEY_PREFIX}w")]
    window = int(snap * n / num_ranges)
    if not words or window <= 0:
        return cuts
    width = 64 * len(words)
    sorted_words = [keys.column(c).to_numpy()[order] for c in words]

    def value(rank: int) -> int:
        out = 0
        for w in sorted_words:
            out = (out << 64) | int(w[rank])
        return out

    snapped: list[int] = []
    for p in positions:
        lo = value(max(0, p - window - 1))
        hi = value(min(n - 1, p + window))
        if lo >= hi:
            snapped.append(value(p))
            continue
        bit = (lo ^ hi).bit_length() - 1  # highest bit where the window's ends differ
        snapped.append((hi >> bit) << bit)  # the value in (lo, hi] with the most trailing zeros
    columns = {}
    for i, c in enumerate(words):
        shift = width - 64 * (i + 1)
        columns[c] = pa.array([(v >> shift) & 0xFFFFFFFFFFFFFFFF for v in snapped], pa.uint64())
    for c in keys.column_names:
        if c not in columns:  # the tiebreak: its smallest value, so the cell's first row starts the range
            t = keys.schema.field(c).type
            low = "" if pa.types.is_string(t) or pa.types.is_large_string(t) else (
                b"" if pa.types.is_binary(t) or pa.types.is_large_binary(t) else pc.min(keys.column(c)).as_py())
            columns[c] = pa.array([low] * len(snapped), t)
    return pa.table([columns[c] for c in keys.column_names], names=keys.column_names)


def assign_ranges(keys: pa.Table, boundaries: pa.Table) -> np.ndarray:
    """For each row of ``keys``, the number of boundary rows at or below it (its range, 0-based).

    Without sorting the rows when the first key column is integral (curve words, integers, dates) and has no
    nulls: a row whose first value differs from every boundary's is placed by that value alone (a binary
    search among the boundaries' first values); only rows sharing a first value with a boundary are compared
    on the later columns, by sorting them with the boundaries.
    """
    n = keys.num_rows
    if boundaries.num_rows == 0 or n == 0:
        return np.zeros(n, dtype=np.int64)
    boundaries = boundaries.cast(keys.schema)
    first, edges = _integral_values(keys.column(0)), _integral_values(boundaries.column(0))
    if first is None or edges is None:
        order, ranges = _sorted_ranges(keys, boundaries)
        out = np.empty(n, dtype=np.int64)
        out[order] = ranges
        return out
    edges = np.sort(edges)
    out = np.searchsorted(edges, first, side="left").astype(np.int64)  # boundaries with a smaller first value
    ties = np.nonzero(np.searchsorted(edges, first, side="right") != out)[0]
    if len(ties):
        order, ranges = _sorted_ranges(keys.take(pa.array(ties, pa.int64())), boundaries)
        out[ties[order]] = ranges
    return out


def _integral_values(column: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """An integral, null-free column as numpy integers ordered as Arrow orders it; None for other columns."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if column.null_count or not (pa.types.is_integer(t) or (
            pa.types.is_temporal(t) and t.bit_width in (32, 64))):
        return None
    if pa.types.is_integer(t):
        return column.to_numpy()
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    return column.view(width).to_numpy()


def range_members(ranges: np.ndarray, num_ranges: int) -> list[np.ndarray]:
    """Per range, the positions of its rows, ascending (a stable bucketing of ``ranges``)."""
    small = ranges.astype(np.uint16) if num_ranges <= 1 << 16 else ranges
    by_range = np.argsort(small, kind="stable")  # a radix sort for 16-bit values
    cuts = np.concatenate([[0], np.cumsum(np.bincount(ranges, minlength=num_ranges))])
    return [by_range[cuts[k]:cuts[k + 1]] for k in range(num_ranges)]


def ordered_ranges(keys: pa.Table, boundaries: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """``keys``' row positions in :func:`order_indices`'s order, and each of those rows' range (as
    :func:`assign_ranges` gives it, so ascending)."""
    n = keys.num_rows
    if boundaries.num_rows == 0 or n == 0:
        return order_indices(keys), np.zeros(n, dtype=np.int64)
    ranges = assign_ranges(keys, boundaries)
    members = range_members(ranges, boundaries.num_rows + 1)
    # A range's rows are a contiguous stretch of the whole order: sorting each range's rows (taken in
    # input order, so ties keep it) gives that stretch.
    order = np.concatenate([m[order_indices(keys.take(pa.array(m, pa.int64())))] for m in members])
    return order, ranges[order]


def _sorted_ranges(keys: pa.Table, boundaries: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ordered_ranges` by one sort of the rows together with the boundaries (``boundaries`` cast to
    ``keys``' schema)."""
    n = keys.num_rows
    combined = pa.concat_tables([
        boundaries.append_column(_MARKER, pa.array(np.ones(boundaries.num_rows, dtype=np.int8))),
        keys.append_column(_MARKER, pa.array(np.zeros(n, dtype=np.int8))),
    ])
    # Boundaries sort before equal rows, so a row equal to a boundary starts the boundary's range.
    order = pc.sort_indices(combined, sort_keys=_sort_order(combined, [(_MARKER, "descending")])).to_numpy()
    marker = combined.column(_MARKER).to_numpy()[order]
    seen = np.cumsum(marker)
    is_row = marker == 0
    return order[is_row] - boundaries.num_rows, seen[is_row].astype(np.int64)

"""Data skipping: drop base files whose parquet footer column statistics rule a filter out.

Each file's per-row-group min / max / null counts are folded into one range per column and cached by
path (base files never change once written). A file is skipped when one filter of the conjunction can
match none of its rows. Filters are ``(column, op, value)`` with op ``=``/``==``, ``<``, ``<=``, ``>``,
``>=``, ``in``, ``is null``, ``is not null`` (value ignored); a range (between) is two filters on one
column. ``!=`` and ``not in`` only prune a file whose column holds a single value. Columns may be dotted
paths into structs. Anything the statistics cannot decide (no statistics, a column missing from the
file, values of another type) keeps the file, and so does ``>``/``>=`` on a floating-point column:
footers leave NaN out of min/max while Spark orders NaN above every number.

When the table's metadata table has a ``column_stats`` partition (:mod:`hoodpy.metadata_table.column_stats`)
and ``timeline`` is given, a file's ranges come from it instead, so no footer is opened; a file the index
lacks a record for (or a column it does not index) is judged from its footer as before. Merge-on-read slices
with log files are pruned from it too (:func:`prune_slices_by_column_stats`): only when every file of the slice
is ruled out.

Example:
    >>> kept = prune_by_column_stats(storage, base_files, [("x", ">=", 10), ("x", "<", 20)])
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import MetadataTableError
from hoodpy.file_group.file_group import BaseFile, FileSlice
from hoodpy.metadata_table.column_stats import (
    column_stats_key, file_key_prefix, has_column_stats, read_column_stats, stats_by_file, unwrap_value,
)
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)

Filter = tuple[str, str, Any]


class ColumnRange(NamedTuple):
    """A column's value range over one file; ``min``/``max`` are None when no non-null value exists or
    statistics are missing (``complete`` tells the two apart). A named tuple: one per file and column,
    thousands per query."""

    min: Any
    max: Any
    null_count: int
    num_values: int
    complete: bool  # every row group had statistics

    @property
    def all_null(self) -> bool:
        return self.complete and self.num_values > 0 and self.null_count == self.num_values


@lru_cache(maxsize=65536)
def _file_ranges(base_uri: str, rel_path: str) -> dict[str, ColumnRange]:
    storage = Storage(base_uri)
    with storage.fs.open_input_file(storage.full_path(rel_path)) as f:
        meta = pq.read_metadata(f)
    acc: dict[str, list] = {}
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for ci in range(group.num_columns):
            col = group.column(ci)
            name = col.path_in_schema
            entry = acc.setdefault(name, [None, None, 0, 0, True])
            entry[3] += group.num_rows
            stats = col.statistics
            if stats is None or not stats.has_null_count:
                entry[4] = False
                continue
            entry[2] += stats.null_count
            if stats.has_min_max:
                lo, hi = stats.min, stats.max
                entry[0] = lo if entry[0] is None or _lt(lo, entry[0]) else entry[0]
                entry[1] = hi if entry[1] is None or _lt(entry[1], hi) else entry[1]
            elif stats.null_count < group.num_rows:
                entry[4] = False  # non-null values without min/max
    return {name: ColumnRange(e[0], e[1], e[2], e[3], e[4]) for name, e in acc.items()}


def _lt(a: Any, b: Any) -> bool:
    try:
        return a < b
    except TypeError:
        return False


def column_ranges(storage: Storage, base_files: Sequence[BaseFile]) -> list[dict[str, ColumnRange]]:
    """Per file, its column ranges by parquet column path (``a``, ``s.b``); cached by path."""
    if len(base_files) <= 1:
        return [_file_ranges(storage.base_uri, bf.path) for bf in base_files]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda bf: _file_ranges(storage.base_uri, bf.path), base_files))


_AS_IS = (int, str, float)  # a value of the statistics' own type: nothing to coerce


def _coerce(value: Any, sample: Any) -> Any:
    """``value`` in the Python type parquet statistics use for the column (sample: its min)."""
    if value is None or sample is None or (type(value) is type(sample) and type(sample) in _AS_IS):
        return value
    if isinstance(sample, dt.datetime):
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            value = dt.datetime(value.year, value.month, value.day)
        if isinstance(value, dt.datetime):
            if sample.tzinfo is not None and value.tzinfo is None:
                value = value.replace(tzinfo=dt.timezone.utc)
            elif sample.tzinfo is None and value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value
    if isinstance(sample, dt.date):
        if isinstance(value, str):
            return dt.date.fromisoformat(value[:10])
        if isinstance(value, dt.datetime):
            return value.date() if value.time() == dt.time() else value
        return value
    if isinstance(sample, Decimal) and isinstance(value, (int, float, str)):
        try:
            return Decimal(str(value))
        except ArithmeticError:
            return value
    if isinstance(sample, bytes) and isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(sample, str) and isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _may_match(r: ColumnRange, op: str, value: Any) -> bool:
    """False only when no row of the file can satisfy ``column <op> value``."""
    if op in ("is null", "is not null"):
        if not r.complete:
            return True
        return r.null_count > 0 if op == "is null" else r.null_count < r.num_values
    if r.all_null:
        return False  # a comparison with null is never true
    if not r.complete or r.min is None or r.max is None:
        return True
    lo, hi = r.min, r.max
    if isinstance(lo, float) and (op in (">", ">=") or _has_nan(value)):
        return True  # statistics leave NaN out, and Spark orders NaN above every number
    try:
        if op in ("=", "=="):
            v = _coerce(value, lo)
            return v is not None and lo <= v <= hi
        if op == "in":
            values = [_coerce(v, lo) for v in value]
            return any(v is not None and lo <= v <= hi for v in values)
        if op == "<":
            return lo < _coerce(value, lo)
        if op == "<=":
            return lo <= _coerce(value, lo)
        if op == ">":
            return hi > _coerce(value, lo)
        if op == ">=":
            return hi >= _coerce(value, lo)
        if op in ("!=", "<>"):
            v = _coerce(value, lo)
            return not (lo == hi == v and r.null_count == 0)
        if op == "not in":
            values = {_coerce(v, lo) for v in value}
            return not (lo == hi and lo in values and r.null_count == 0)
    except TypeError:
        return True
    return True


def _has_nan(value: Any) -> bool:
    values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
    return any(isinstance(v, float) and v != v for v in values)


def file_may_match(ranges: dict[str, ColumnRange], filters: Sequence[Filter]) -> bool:
    """Whether a file with these column ranges can hold a row passing every filter."""
    for name, op, value in filters:
        r = ranges.get(name)
        if r is None:
            continue  # not a column of this file (or a struct / list column): cannot decide
        if not _may_match(r, str(op).lower(), value):
            return False
    return True


def _decidable(f: Filter, schema: pa.Schema) -> bool:
    """Whether statistics can ever rule ``f`` out, judged from the table schema alone: not for a column the
    schema lacks or a nested one, nor for ``>`` / ``>=`` (or NaN) on a floating-point column."""
    name, op, value = f
    if "." in name or name.startswith("_hoodie_"):
        return True  # a struct path (the footers decide) or a meta column (not in the data schema)
    index = schema.get_field_index(name)
    if index < 0:
        return False
    t = schema.field(index).type
    if pa.types.is_nested(t):
        return False
    return not (pa.types.is_floating(t) and (op in (">", ">=") or _has_nan(value)))


def index_ranges(storage: Storage, timeline: Timeline, base_files: Sequence[BaseFile], columns: Sequence[str],
                 schema: pa.Schema | None = None) -> list[dict[str, ColumnRange] | None] | None:
    """Per file, the ranges of ``columns`` from the metadata table's column_stats (None for a file it lacks a
    column of); None when the table has no column_stats or it cannot be read."""
    if not has_column_stats(load_table_properties(storage)):
        return None
    try:
        stats = read_column_stats(storage, timeline, columns)
    except MetadataTableError as e:
        _log.warning("Not using column_stats of %s (%s): reading parquet footers", storage.base_uri, e)
        return None
    types = {c: schema.field(c).type if schema is not None and c in schema.names else
             pa.string() if c.startswith("_hoodie_") else None for c in columns}  # once, not per file
    by_file = stats_by_file(stats)
    prefixes: dict[str, dict[str, str]] = {}  # partition -> column -> key prefix
    out = []
    for bf in base_files:
        partition = bf.partition_path
        of_partition = prefixes.get(partition)
        if of_partition is None:
            of_partition = prefixes[partition] = {c: file_key_prefix(c, partition) for c in types}
        out.append(_ranges_of(stats, by_file, of_partition, bf, types))
    return out


def _ranges_of(stats: Mapping[str, Mapping[str, Any]], by_file: Mapping[tuple[str, str], Mapping[str, Any]],
               prefixes: Mapping[str, str], bf: BaseFile, types: Mapping[str, pa.DataType | None],
               ) -> dict[str, ColumnRange] | None:
    out = {}
    name = bf.file_name
    for column, arrow_type in types.items():
        # By the record's fileName first; by its key (the name's hash) for a record without one.
        s = by_file.get((prefixes[column], name)) or stats.get(column_stats_key(column, bf.partition_path, name))
        if s is None:
            return None
        value_type = s.get("valueType")
        lo = unwrap_value(s.get("minValue"), value_type, arrow_type)
        hi = unwrap_value(s.get("maxValue"), value_type, arrow_type)
        values, nulls = s.get("valueCount") or 0, s.get("nullCount") or 0
        out[column] = ColumnRange(lo, hi, nulls, values, lo is not None or (values > 0 and nulls == values))
    return out


def prune_by_column_stats(storage: Storage, base_files: Sequence[BaseFile], filters: Sequence[Filter],
                          schema: pa.Schema | None = None, timeline: Timeline | None = None) -> list[BaseFile]:
    """The base files that may hold rows matching all ``filters`` (a conjunction), in input order. With the
    table's ``schema``, filters statistics can never decide are dropped first, so footers are only read
    when one can prune; with its ``timeline``, the metadata table's column_stats answer first."""
    filters = _normalized(filters, schema)
    if not filters or not base_files:
        return list(base_files)
    indexed = None
    if timeline is not None:
        indexed = index_ranges(storage, timeline, base_files, sorted({f[0] for f in filters}), schema)
    if indexed is None:
        indexed = [None] * len(base_files)
    missing = [bf for bf, ranges in zip(base_files, indexed, strict=True) if ranges is None]
    from_footers = dict(zip(missing, column_ranges(storage, missing), strict=True))
    return [bf for bf, ranges in zip(base_files, indexed, strict=True)
            if file_may_match(ranges if ranges is not None else from_footers[bf], filters)]


def _normalized(filters: Sequence[Filter], schema: pa.Schema | None) -> list[Filter]:
    """Filters with lower-case operators; with the table's ``schema``, those statistics can decide only."""
    out = [(f[0], str(f[1]).lower(), f[2]) for f in filters]
    return out if schema is None else [f for f in out if _decidable(f, schema)]


def prune_slices_by_column_stats(storage: Storage, slices: Sequence[FileSlice], filters: Sequence[Filter],
                                 schema: pa.Schema | None = None, timeline: Timeline | None = None,
                                 ) -> list[FileSlice]:
    """The merge-on-read slices (with log files) that may hold rows matching all ``filters``, in input order. A
    merged row takes its values from one of the slice's files, so a slice goes only when its base file and every
    log file are ruled out: log files by their column_stats records (a log file the index lacks keeps its
    slice), the base file by the index or its footer. Without the table's column_stats every slice stays."""
    filters = _normalized(filters, schema)
    if not filters or not slices or timeline is None:
        return list(slices)
    columns = sorted({f[0] for f in filters})
    files = [f for s in slices for f in (s.base_file, *s.log_files) if f is not None]
    indexed = index_ranges(storage, timeline, files, columns, schema)
    if indexed is None:
        return list(slices)
    ranges = dict(zip(files, indexed, strict=True))

    def logs_ruled_out(s: FileSlice) -> bool:
        # A log file of delete blocks only (no values in any column) adds no row.
        return all(ranges[lf] is not None and (not file_may_match(ranges[lf], filters) or all(
            r.num_values == 0 for r in ranges[lf].values())) for lf in s.log_files)

    # Footers only of the base files whose logs are all ruled out (the rest keep their slice anyway).
    unindexed = [s.base_file for s in slices if s.base_file is not None and ranges[s.base_file] is None
                 and logs_ruled_out(s)]
    ranges.update(zip(unindexed, column_ranges(storage, unindexed), strict=True))
    return [s for s in slices if not logs_ruled_out(s) or (s.base_file is not None and file_may_match(
        ranges[s.base_file], filters))]


def clear_cache() -> None:
    _file_ranges.cache_clear()

"""hudi-rs (the ``hudi`` 0.5.0 package) as the oracle, plus row normalization shared by the compat tests.

Rows from every source (hudi-rs record batches, hoodpy DataFrames via ``toArrow``, the Python models) are
turned into plain dicts of comparable Python values: timestamps as UTC-aware datetimes, maps as lists of
(key, value) pairs, structs as dicts. Lists of rows are sorted by (partition path, record key), which is
unique in every table these tests build or read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

from hoodpy.meta_fields import COMMIT_SEQNO as SEQNO
from hoodpy.meta_fields import COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.meta_fields import META_COLUMNS as META
# The meta columns a model can predict (sequence numbers and file names are writer choices).
MODEL_META = (RECORD_KEY, COMMIT_TIME, PARTITION_PATH)

Row = dict[str, Any]


# -- hudi-rs --------------------------------------------------------------------------------------------
def table(path: str, options: Mapping[str, str] | None = None):
    """A freshly built hudi-rs table (it caches the timeline, so build one per read)."""
    builder = HudiTableBuilder.from_base_uri(str(path))
    for key, value in (options or {}).items():
        builder = builder.with_option(key, value)
    return builder.build()


def _to_table(batches: list[pa.RecordBatch]) -> pa.Table | None:
    return pa.Table.from_batches(batches) if batches else None


def snapshot(path: str, as_of: str | None = None) -> list[Row]:
    opts = HudiReadOptions()
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    return rows_of(_to_table(table(path).read(opts)))


def read_optimized(path: str, as_of: str | None = None) -> list[Row]:
    """Base files only (merge-on-read tables): hudi-rs's read-optimized mode."""
    opts = HudiReadOptions()
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    return rows_of(_to_table(table(path, {"hoodie.read.use.read_optimized.mode": "true"}).read(opts)))


def snapshot_tuples(path: str, columns: Sequence[str]) -> list[tuple]:
    """``columns`` of every row of a hudi-rs snapshot read, as sorted tuples (raw values)."""
    batches = table(path).read(HudiReadOptions())
    if not batches:
        return []
    return sorted(tuple(r.values()) for r in pa.Table.from_batches(batches).select(list(columns)).to_pylist())


def incremental(path: str, start: str, end: str) -> list[Row]:
    """Records committed in (start, end]."""
    opts = (HudiReadOptions().with_query_type(HudiQueryType.Incremental)
            .with_start_timestamp(start).with_end_timestamp(end))
    return rows_of(_to_table(table(path).read(opts)))


def completed_instants(path: str) -> list[str]:
    """Completed commit, deltacommit and replacecommit times, oldest first (hudi-rs lists the actions
    apart)."""
    tl = table(path).get_timeline()
    times = [i.timestamp for i in tl.get_completed_commits()]
    times += [i.timestamp for i in tl.get_completed_deltacommits()]
    times += [i.timestamp for i in tl.get_completed_replacecommits()]
    return sorted(times)


def file_slices(path: str, as_of: str | None = None) -> set[tuple[str, str]]:
    """(partition path, base file name) of each file slice a snapshot (as of ``as_of``) reads."""
    opts = HudiReadOptions()
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    return {(s.partition_path, s.base_file_name) for s in table(path).get_file_slices(opts)}


def schema(path: str) -> pa.Schema:
    return table(path).get_schema()


# -- normalization --------------------------------------------------------------------------------------
def normalize(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value.astimezone(dt.timezone.utc)
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(normalize(v) for v in value)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def rows_of(t: pa.Table | None, columns: Sequence[str] | None = None) -> list[Row]:
    """Sorted, normalized rows of an Arrow table (None: no rows)."""
    if t is None:
        return []
    if columns is not None:
        t = t.select(list(columns))
    return sort_rows(normalize(r) for r in t.to_pylist())


def df_rows(df, columns: Sequence[str] | None = None) -> list[Row]:
    """Sorted, normalized rows of a Spark DataFrame."""
    if columns is not None:
        df = df.select(*columns)
    return rows_of(df.toArrow())


def df_rows_like(df, theirs: list[Row]) -> list[Row]:
    """hoodpy's rows, on the columns hudi-rs returned (it leaves out absent meta columns)."""
    ours = df_rows(df)
    return project(ours, list(theirs[0])) if theirs else ours


def project(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> list[Row]:
    return sort_rows({c: r.get(c) for c in columns} for r in rows)


def sort_rows(rows: Iterable[Mapping[str, Any]]) -> list[Row]:
    return sorted((dict(r) for r in rows),
                  key=lambda r: (str(r.get(PARTITION_PATH)), str(r.get(RECORD_KEY)), repr(sorted(r.items()))))


def keys_and_times(rows: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    return {(r[RECORD_KEY], r[COMMIT_TIME]) for r in rows}

"""Reads as native Spark DataFrames over the chosen base files: snapshot, as of an instant, incremental.

The file-system view picks the files; partition values and footer key ranges prune them; Spark's own
parquet reader does the rest (vectorized reads, column pruning, row-group statistics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sql_ext.data_skipping import prune_by_column_stats
from sql_ext.errors import InvalidConfigError
from sql_ext.file_group.file_group import BaseFile
from sql_ext.file_scan import read_parquet_files
from sql_ext.index.bloom import key_ranges
from sql_ext.timeline.instant import validate_instant_time

if TYPE_CHECKING:
    from sql_ext.table import HoodieTable

Filter = tuple[str, str, Any]
_OPS = {"=", "==", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"}


def _check_filters(filters: Sequence[Filter]) -> list[Filter]:
    out = []
    for f in filters:
        if not (isinstance(f, (tuple, list)) and len(f) == 3) or str(f[1]).lower() not in _OPS:
            raise InvalidConfigError("filters", f, f"expected (column, op, value) with op in {sorted(_OPS)}")
        out.append((f[0], str(f[1]).lower(), f[2]))
    return out


def filter_column(f: Filter) -> Column:
    name, op, value = f
    c = F.col(name)
    if op in ("=", "=="):
        return c == F.lit(value)
    if op in ("!=", "<>"):
        return c != F.lit(value)
    if op == "in":
        return c.isin(list(value))
    if op == "not in":
        return ~c.isin(list(value))
    if op in ("is null", "is not null"):  # the value is ignored
        return c.isNull() if op == "is null" else c.isNotNull()
    return {"<": c < value, "<=": c <= value, ">": c > value, ">=": c >= value}[op]


def _compare(left: Any, op: str, right: Any) -> bool:
    if op in ("=", "=="):
        return left == right
    if op in ("!=", "<>"):
        return left != right
    if op == "in":
        return left in right
    if op == "not in":
        return left not in right
    if op in ("is null", "is not null"):
        return (left is None) == (op == "is null")
    if left is None:
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _as_text(value: Any) -> Any:
    if isinstance(value, (list, tuple, set)):
        return [_as_text(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def _typed(text: str | None, sample: Any) -> Any:
    """A partition value string in the type of the filter value, so 10 < 9 is not compared as text."""
    if text is None or isinstance(sample, str) or sample is None:
        return text
    try:
        return type(sample)(text)
    except (TypeError, ValueError):
        return text


def prune_partitions(table: HoodieTable, files: list[BaseFile], filters: list[Filter]) -> list[BaseFile]:
    part_filters = [f for f in filters if f[0] in table.keygen.partition_fields]
    if not part_filters:
        return files
    keep = []
    for bf in files:
        values = table.keygen.partition_values(bf.partition_path)
        ok = True
        for name, op, value in part_filters:
            sample = next(iter(value), None) if op in ("in", "not in") else value
            left = _typed(values.get(name), sample)
            right = [_typed(_as_text(v), v) for v in value] if op in ("in", "not in") else value
            if not _compare(left, op, right):
                ok = False
                break
        if ok:
            keep.append(bf)
    return keep


def _key_text_is_exact(value: Any, key_type: pa.DataType | None) -> bool:
    """Whether str(value) is the stored record key of every row Spark's ``key = value`` matches.

    Only same-kind literals qualify: 9.0 or '09' against an int key match id 9 in Spark, yet read '9.0'
    and '09' as text, so they must not prune.
    """
    if key_type is None:
        return False
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return pa.types.is_integer(key_type)
    if isinstance(value, str):
        return pa.types.is_string(key_type) or pa.types.is_large_string(key_type)
    return False


def prune_by_key_range(table: HoodieTable, files: list[BaseFile], filters: list[Filter]) -> list[BaseFile]:
    """Skip files whose footer [min, max] record key holds none of the keys an equality filter asks for."""
    keygen = table.keygen
    if keygen.composite_record_key or not files:
        return files
    field = keygen.record_key_fields[0]
    schema = table.arrow_schema()
    key_type = schema.field(field).type if schema is not None and field in schema.names else None
    wanted: set[str] | None = None
    for name, op, value in filters:
        if name == field and op in ("=", "==", "in"):
            values = list(value) if op == "in" else [value]
            if not all(_key_text_is_exact(v, key_type) for v in values):
                continue
            keys = {keygen.record_key_of({field: v}) for v in values}
            wanted = keys if wanted is None else wanted & keys
    if wanted is None:
        return files
    keep = []
    for bf, (lo, hi) in zip(files, key_ranges(table.storage, files), strict=True):
        if lo is None or hi is None or any(lo <= k <= hi for k in wanted):
            keep.append(bf)
    return keep


def read_base_files(table: HoodieTable, files: list[BaseFile], schema_instant: str | None = None) -> DataFrame:
    schema = table.spark_schema(as_of=schema_instant)
    return read_parquet_files(table.spark, table.storage, [bf.path for bf in files], schema)


def snapshot(table: HoodieTable, *, as_of: str | None = None, filters: Sequence[Filter] = (),
             apply_filters: bool = True) -> DataFrame:
    """The files ``filters`` may match, read; with ``apply_filters`` False the rows are not filtered (the
    SQL layer's caller applies its whole WHERE anyway)."""
    if as_of is not None:
        validate_instant_time(as_of)
    checked = _check_filters(filters)
    files = table.file_system_view(as_of=as_of).latest_base_files()
    files = prune_by_key_range(table, prune_partitions(table, files, checked), checked)
    files = prune_by_column_stats(table.storage, files, checked)
    df = read_base_files(table, files, as_of)
    for f in checked if apply_filters else ():
        df = df.filter(filter_column(f))
    return df


def incremental(table: HoodieTable, start: str, end: str | None = None) -> DataFrame:
    """Records written by commits in (start, end]: the latest versions of the touched file groups as of
    ``end``, filtered by commit time."""
    validate_instant_time(start)
    if end is not None:
        validate_instant_time(end)
    timeline = table.timeline
    commits = timeline.completed_commits_in_range(start, end)
    end = end or (commits[-1].timestamp if commits else start)
    touched = {(s.partition_path, s.file_id) for i in commits for s in timeline.commit_metadata(i).write_stats}
    view = table.file_system_view(as_of=end)
    # A start before the active timeline (archived commits): every file group, the commit-time filter decides.
    active = timeline.completed_commits()
    archived = not active or start < active[0].timestamp
    files = [bf for bf in view.latest_base_files() if archived or (bf.partition_path, bf.file_id) in touched]
    df = read_base_files(table, files, end)
    commit_time = F.col("_hoodie_commit_time")
    return df.filter((commit_time > F.lit(start)) & (commit_time <= F.lit(end)))

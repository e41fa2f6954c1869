"""Reads as native Spark DataFrames over the chosen file slices: snapshot, as of an instant, incremental;
read-optimized (base files only) for merge-on-read tables.

The file-system view picks the files; partition values, footer key ranges and column statistics prune them
(filters as :mod:`hoodpy.read.filters` binds them); Spark's own parquet reader does the rest (vectorized
reads, column pruning, row-group statistics). A merge-on-read slice with log files is merged in Spark tasks
(:mod:`hoodpy.read.slice_scan`); partition values prune it, and column_stats when the metadata table indexes
its base and log files (not key ranges: its logs may add or change any key).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from hoodpy.config import HoodieConfig, ordering_fields
from hoodpy.config.read import INCREMENTAL, READ_OPTIMIZED, ReadConfig
from hoodpy.config.write import event_time_ordering_field
from hoodpy.errors import ChangesNotReadableError, InvalidConfigError, InvalidInstantError
from hoodpy.file_group.file_group import BaseFile, FileSlice
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.index.bloom import key_ranges
from hoodpy.keygen import KeyGenerator, virtual_keys
from hoodpy.meta_fields import COMMIT_TIME, RECORD_KEY
from hoodpy.read.data_skipping import prune_by_column_stats, prune_slices_by_column_stats
from hoodpy.read.file_scan import read_parquet_files
from hoodpy.read.filters import Filter, bind_filters, check_filters, filter_column
from hoodpy.read.slice_scan import read_file_slices
from hoodpy.read.written_types import written_schemas
from hoodpy.storage import Storage
from hoodpy.timeline.archived import newest_archived_write
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, validate_instant_time
from hoodpy.timeline.timeline import CommittedInstants, Timeline

__all__ = ["CommitWindow", "Filter", "IncrementalPlan", "ReadableTable", "bind_filters", "check_filters", "filter_column",
           "incremental", "plan_incremental", "query_type", "select_files", "snapshot"]


def query_type(value: str | None) -> str:
    """``snapshot`` (None too) or ``read_optimized`` (Hudi's hoodie.datasource.query.type values);
    incremental reads have their own call."""
    normal = HoodieConfig.of({ReadConfig.QUERY_TYPE.key: value}).get(ReadConfig.QUERY_TYPE)
    if normal == INCREMENTAL:
        raise InvalidConfigError(ReadConfig.QUERY_TYPE.key, value,
                                 "an incremental read takes start and end instants: use read_incremental")
    return normal


class ReadableTable(Protocol):
    """What reads use of a table; :class:`hoodpy.table.HoodieTable` is one. Reads sit below the table facade
    (which calls them), so they state what they need instead of importing it."""

    spark: SparkSession
    storage: Storage
    keygen: KeyGenerator
    config: HoodieConfig
    properties: Mapping[str, str]  # hoodie.properties

    @property
    def timeline(self) -> Timeline: ...

    def file_system_view(self, as_of: str | None = None) -> FileSystemView:
        """The view as of an instant, checked against cleaning (raises InstantNotRetainedError)."""

    def arrow_schema(self, timeline: Timeline | None = None, as_of: str | None = None) -> pa.Schema | None:
        """The data schema as of an instant."""

    def spark_schema(self, as_of: str | None = None, timeline: Timeline | None = None) -> StructType:
        """Meta columns then data columns, as reads return them."""


def _compare(left: Any, op: str, right: Any) -> bool:
    if op in ("is null", "is not null"):
        return (left is None) == (op == "is null")
    if left is None:
        return False  # a comparison with NULL is never true
    if op in ("in", "not in"):
        return (left in right) == (op == "in")
    if op in ("=", "=="):
        return left == right
    if op in ("!=", "<>"):
        return left != right
    return {"<": lambda: left < right, "<=": lambda: left <= right, ">": lambda: left > right,
            ">=": lambda: left >= right}[op]()


def _as_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


def _typed(text: str | None, sample: Any) -> Any:
    """A partition value string in the type of the (bound) filter value, so 10 < 9 is not compared as
    text; raises ValueError (or another error) when it has no such reading."""
    if text is None or sample is None or isinstance(sample, str):
        return text
    if isinstance(sample, bool):
        return {"true": True, "false": False}[text.strip().lower()]
    if isinstance(sample, float):
        return float(text)
    if isinstance(sample, (int, Decimal)):
        value = Decimal(text.strip())
        return int(value) if value == value.to_integral_value() else value
    if isinstance(sample, dt.date) and not isinstance(sample, dt.datetime):
        return dt.date.fromisoformat(text.strip())
    return type(sample)(text)


def prune_partitions(table: ReadableTable, files: list, filters: list[Filter]) -> list:
    """The files (base files or file slices) whose partition values may pass ``filters`` (bound); a value
    that cannot be compared keeps the file."""
    part_filters = [f for f in filters if f[0] in table.keygen.value_partition_fields]
    if not part_filters:
        return files
    keep = []
    for bf in files:
        values = table.keygen.partition_values(bf.partition_path)
        if all(_partition_may_match(values.get(name), op, value) for name, op, value in part_filters):
            keep.append(bf)
    return keep


def _partition_may_match(text: str | None, op: str, value: Any) -> bool:
    try:
        if op in ("in", "not in"):
            sample = next((v for v in value if v is not None), None)
            right = [_typed(_as_text(v), v) for v in value if v is not None]
            if op == "not in" and len(right) < len(value):
                return False  # x NOT IN (..., NULL) is never true
        else:
            sample, right = value, value
        if value is None and op not in ("is null", "is not null"):
            return False
        return _compare(_typed(text, sample), op, right)
    except Exception:  # noqa: BLE001 -- values Python cannot compare: Spark decides, keep the file
        return True


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


def prune_by_key_range(table: ReadableTable, files: list[BaseFile], filters: list[Filter],
                       schema: pa.Schema | None = None) -> list[BaseFile]:
    """Skip files whose footer [min, max] record key holds none of the keys an equality filter asks for
    (``schema``: the table's data schema, loaded when not given)."""
    keygen = table.keygen
    if keygen.auto_keys or keygen.composite_record_key or not files:
        return files
    field = keygen.record_key_fields[0]
    if not any(name == field for name, _, _ in filters):
        return files
    schema = schema if schema is not None else table.arrow_schema()
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


def select_files(table: ReadableTable, files: list[BaseFile], filters: list[Filter],
                 schema: pa.Schema | None = None, timeline: Timeline | None = None) -> list[BaseFile]:
    """The base files that may hold rows passing ``filters`` (bound, :func:`bind_filters`): partition
    values, then record-key ranges, then column statistics (``schema``: the data schema; with ``timeline``,
    from the metadata table's column_stats when the table has it, else from footers)."""
    if not filters:
        return files
    files = prune_by_key_range(table, prune_partitions(table, files, filters), filters, schema)
    return prune_by_column_stats(table.storage, files, filters, schema, timeline)


def _read_slices(table: ReadableTable, timeline: Timeline, slices: list[FileSlice], schema: StructType,
                 committed: CommittedInstants, window: CommitWindow | None = None) -> DataFrame:
    """``window``: an incremental read's, whose rows alone are kept: a base file older than every commit of the
    window holds none of them (a row's commit time is at most its file's instant), so a slice of one is read
    only for the keys its logs name (merged with their base rows), and without logs not at all."""
    ordering = event_time_ordering_field(table.config)
    older = frozenset(s.base_file.path for s in slices if window is not None and s.base_file is not None
                      and window.after(s.base_file.instant_time))
    slices = [s for s in slices if s.log_files or s.base_file is None or s.base_file.path not in older]
    written = written_schemas(timeline, [s.base_file for s in slices if s.base_file is not None], schema)
    return read_file_slices(table.spark, table.storage, slices, schema, committed, ordering, written,
                            virtual=virtual_keys(table.config), logged_keys_only=older)


def snapshot(table: ReadableTable, *, as_of: str | None = None, filters: Sequence[Filter] = (),
             apply_filters: bool = True, query: str | None = None,
             columns: Sequence[str] | None = None) -> DataFrame:
    """The files ``filters`` may match, read; with ``apply_filters`` False the rows are not filtered (the
    SQL layer's caller applies its whole WHERE anyway). Filter values are bound to their columns' types
    (:mod:`hoodpy.read.filters`), so pruning and Spark's filter agree under either ANSI setting.
    ``query``: ``snapshot`` (base files merged with their log files) or ``read_optimized`` (base files
    only). ``columns``: only these columns, in this order (None: all). Spark prunes the base-file scans'
    columns itself, but not through the Python tasks that merge log records: told the columns, those decode
    and return only them (and the record key and ordering fields the merge compares)."""
    read_optimized = query_type(query) == READ_OPTIMIZED
    if as_of is not None:
        validate_instant_time(as_of)
    view = table.file_system_view(as_of=as_of)
    full_schema = table.spark_schema(as_of=as_of, timeline=view.timeline)
    wanted = selected_columns(full_schema, columns)
    bound = bind_filters(filters, full_schema)  # before any listing of footers: bad values fail first
    schema = full_schema if wanted is None else read_schema(
        full_schema, [*wanted, *(f[0] for f in bound if apply_filters)],
        merge_fields=None if virtual_keys(table.config) is not None
        else (RECORD_KEY, *ordering_fields(event_time_ordering_field(table.config))))
    slices = view.latest_file_slices()
    plain = [s.base_file for s in slices if s.base_file is not None and (read_optimized or not s.log_files)]
    arrow_schema = table.arrow_schema(view.timeline, as_of)
    files = select_files(table, plain, bound, arrow_schema, view.timeline)
    with_logs = [] if read_optimized else prune_slices_by_column_stats(
        table.storage, prune_partitions(table, [s for s in slices if s.log_files], bound), bound, arrow_schema,
        view.timeline)
    if with_logs:
        chosen = set(files)
        plain_slices = [s for s in slices if not s.log_files and s.base_file in chosen]
        df = _read_slices(table, view.timeline, [*with_logs, *plain_slices], schema,
                          view.timeline.committed(as_of))
    else:
        df = read_parquet_files(table.spark, table.storage, [bf.path for bf in files], schema,
                                written=written_schemas(view.timeline, files, schema))
    for f in bound if apply_filters else ():
        df = df.filter(filter_column(f))
    return df if wanted is None else df.select(*wanted)


def selected_columns(schema: StructType, columns: Sequence[str] | None) -> list[str] | None:
    """``columns`` in the schema's spelling (Spark resolves names ignoring case), each once; None for None.
    InvalidConfigError naming a column the table does not have, or for no column at all."""
    if columns is None:
        return None
    if isinstance(columns, str) or not columns:
        raise InvalidConfigError("columns", columns, "expected a non-empty list of column names")
    out: list[str] = []
    for name in columns:
        match = next((f.name for f in schema.fields if f.name == name), None) or \
            next((f.name for f in schema.fields if isinstance(name, str) and f.name.lower() == name.lower()), None)
        if match is None:
            raise InvalidConfigError("columns", name, f"the table has no such column (it has "
                                     f"{', '.join(schema.fieldNames())})")
        if match not in out:
            out.append(match)
    return out


def read_schema(schema: StructType, names: Sequence[str], merge_fields: Sequence[str] | None) -> StructType:
    """The columns of ``schema`` a read of ``names`` (top-level names or dotted paths) needs, in the
    schema's order: also ``merge_fields`` (the record key and ordering fields merging log records compares)
    where the schema has them; ``merge_fields`` None (virtual keys: the merge computes keys from any
    fields) keeps every column."""
    if merge_fields is None:
        return schema
    tops = {n.split(".")[0].lower() for n in [*names, *merge_fields]}
    return StructType([f for f in schema.fields if f.name.lower() in tops])


@dataclass(frozen=True)
class CommitWindow:
    """Which rows an incremental query over (start, end] keeps, by their ``_hoodie_commit_time``: those of the
    commits that completed in the window, plus, when the start is before the active timeline, rows of archived
    commits whose instant time is in (start, end] and before the earliest recorded write (unrecorded: archived
    in version 6, whose completion times are not read). Small and picklable:
    Spark tasks filter with it."""

    start: str
    end: str
    commit_times: frozenset[str]
    archived: bool
    archived_before: str | None  # the earliest recorded write (None: none is recorded)

    def column(self):
        """The window as a Spark column over ``_hoodie_commit_time``: one SQL predicate, parsed by one call to the
        JVM (built from Column objects it took one call per literal and operator, ~30 for a one-commit window).
        Spark pushes it into the parquet scan, which skips row groups by the column's statistics."""
        return F.expr(self.sql())

    def sql(self) -> str:
        """The window as a Spark SQL predicate over ``_hoodie_commit_time`` (instant times are digits: quoted
        as they are)."""
        def text(value: str) -> str:
            if not value.isascii() or not value.isdigit():  # "000" (earliest) included
                raise InvalidInstantError(f"instant time {value!r} of a commit window is not digits")
            return f"'{value}'"

        column = f"`{COMMIT_TIME}`"
        times = sorted(self.commit_times)
        in_window = f"{column} IN ({', '.join(map(text, times))})" if times else "false"
        if self.archived:  # rows of archived commits: no completion time is known, their instant time decides
            older = f"{column} > {text(self.start)} AND {column} <= {text(self.end)}"
            if self.archived_before is not None:
                older += f" AND {column} < {text(self.archived_before)}"
            in_window = f"({in_window}) OR ({older})"
        return in_window

    def after(self, instant_time: str) -> bool:
        """Whether every commit time the window keeps is after ``instant_time``."""
        return not self.archived and bool(self.commit_times) and instant_time < min(self.commit_times)

    def mask(self, commit_times: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
        """The window over an Arrow column of commit times (null: not kept)."""
        keep = pc.is_in(commit_times, value_set=pa.array(sorted(self.commit_times), pa.string()))
        if self.archived:
            older = pc.and_(pc.greater(commit_times, self.start), pc.less_equal(commit_times, self.end))
            if self.archived_before is not None:
                older = pc.and_(older, pc.less(commit_times, self.archived_before))
            keep = pc.or_(keep, older)
        return pc.fill_null(keep, False)


@dataclass(frozen=True)
class IncrementalPlan:
    """What an incremental query reads: the latest slices (as of the window's end) of the file groups its
    commits touched, filtered by :class:`CommitWindow`. Spark-free, so a streaming source plans with it in a
    Python worker that has no session."""

    window: CommitWindow
    slices: tuple[FileSlice, ...]
    committed: CommittedInstants  # which log blocks count (merge-on-read slices)
    timeline: Timeline


def commit_window(timeline: Timeline, start: str, end: str, commits: Sequence[Instant]) -> CommitWindow:
    """The rows (start, end] keeps: those of ``commits``, and, for a start before every write the timeline
    records (commits archived in version 6, whose completion times and metadata are not read), rows of such
    writes by their instant time."""
    recorded = timeline.earliest_recorded_write()
    unrecorded = recorded is None or start < recorded
    return CommitWindow(start, end, frozenset(i.timestamp for i in commits), unrecorded, recorded)


def window_commits(table: ReadableTable, start: str, end: str | None) -> tuple[Timeline, list[Instant], str]:
    """The timeline, the writes that completed in (start, end] and the window's end (the last of them when
    ``end`` is None). Completion is by completion time in table versions 8 and 9 (as Hudi 1.x selects
    incremental windows), by instant time in version 6."""
    validate_instant_time(start)
    if end is not None:
        validate_instant_time(end)
    timeline = table.timeline
    # Archived commits of versions 8 and 9 are in the history, with completion time and metadata.
    commits = timeline.completed_commits_in_range(start, end, archived=True)
    end = end or (commits[-1].completed_at if commits else start)
    return timeline, commits, end


def plan_incremental(table: ReadableTable, start: str, end: str | None = None) -> IncrementalPlan:
    """The plan of an incremental query over the commits and deltacommits that completed in (start, end]
    (``end`` None: the latest): the latest slices of the file groups they touched. Spark-free (the streaming
    source plans with it); unlike :func:`incremental`, it does not check for cleaned file versions."""
    timeline, commits, end = window_commits(table, start, end)
    touched = {(s.partition_path, s.file_id) for i in commits for s in timeline.commit_metadata(i).write_stats}
    view = table.file_system_view(as_of=end)
    # A start before every recorded write (commits archived in version 6, whose completion times and
    # metadata are not read): every file group, the commit-time filter decides.
    window = commit_window(timeline, start, end, commits)
    slices = [s for s in view.latest_file_slices() if window.archived or (s.partition_path, s.file_id) in touched]
    return IncrementalPlan(window, tuple(slices), view.timeline.committed(end), view.timeline)


def incremental(table: ReadableTable, start: str, end: str | None = None) -> DataFrame:
    """Records written by commits and deltacommits that completed in (start, end]: the slices as of ``end``
    of the file groups those commits wrote (merged with their log files), filtered by commit time. Completion
    is by completion time in table versions 8 and 9 (as Hudi 1.x selects incremental windows), by instant
    time in version 6.

    As Hudi's incremental relation does, the read refuses a window it cannot read completely: one reaching
    commits archived off the active timeline (their file groups are unknown), or whose file versions the
    cleaner removed (:class:`ChangesNotReadableError`, naming the earliest start still readable). With
    ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` such a window is read by a full scan of the
    latest snapshot instead, keeping the rows whose commit is in the window (Hudi's fallback)."""
    timeline, commits, end = window_commits(table, start, end)
    window = commit_window(timeline, start, end, commits)
    fallback = table.config.get(ReadConfig.INCR_FALLBACK_FULL_TABLE_SCAN)
    archived = _archived_in_window(table.storage, timeline, start)
    if archived is not None:
        if fallback:
            return _full_scan(table, window)
        reason = (f"commits up to {archived} are archived (the active timeline starts at "
                  f"{_first_write(timeline)}), so the file groups they wrote are unknown")
        raise ChangesNotReadableError(table.storage.base_uri, start, end, reason, archived)
    written = last_writes(timeline, commits)
    view = FileSystemView.load(table.storage, timeline, as_of=end, partitions={p for p, _ in written})
    missing = missing_versions(view, written)
    if missing:
        if fallback:
            return _full_scan(table, window)
        (partition, file_id), (path, _) = missing[0]
        reason = (f"the cleaner removed {len(missing)} file version(s) the window's commits wrote, e.g. {path} "
                  f"of file group {file_id} (partition {partition!r})")
        raise ChangesNotReadableError(table.storage.base_uri, start, end, reason,
                                      earliest_readable_start(table.storage, timeline, end))
    slices = [g.latest_slice() for key in written if not view.is_replaced(*key)
              and (g := view.file_group(*key)) is not None and g.latest_slice() is not None]
    df = _read_slices(table, view.timeline, slices, table.spark_schema(as_of=end), view.timeline.committed(end),
                      window)
    return df.filter(window.column())


def _first_write(timeline: Timeline) -> str | None:
    active = timeline.completed_commits()
    return active[0].timestamp if active else None


def _archived_in_window(storage: Storage, timeline: Timeline, start: str) -> str | None:
    """The newest archived write when it is after ``start`` and the timeline does not record it (the window
    reaches archived commits whose file groups are unknown), else None. Versions 8 and 9 record archived
    writes in the LSM history (completion time and metadata): those windows read. The archive is read only
    for a start before the first recorded write."""
    first = timeline.earliest_recorded_write()
    if (first is not None and start >= first) or timeline.layout == LAYOUT_2:
        return None
    newest = newest_archived_write(storage, timeline.layout)
    return newest if newest is not None and newest > start else None


def last_writes(timeline: Timeline, commits: Sequence[Instant]) -> dict[tuple[str, str], tuple[str, str]]:
    """(partition, file id) -> (path, completion) of the last file each file group got from ``commits``
    (in completion order): the base file, or log file, a read as of the last of them finds in its slice."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for instant in commits:
        for stat in timeline.commit_metadata(instant).write_stats:
            if stat.path:
                out[(stat.partition_path, stat.file_id)] = (stat.path, instant.completed_at)
    return out


def missing_versions(view: FileSystemView, written: Mapping[tuple[str, str], tuple[str, str]],
                     ) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """The entries of :func:`last_writes` whose file is not in its group's latest slice of ``view``: the
    cleaner removed it (the listing then shows an older version, or none). Groups the view counts as
    replaced are not read, so not checked."""
    out = []
    for key, (path, when) in written.items():
        if view.is_replaced(*key):
            continue
        group = view.file_group(*key)
        latest = group.latest_slice() if group is not None else None
        files = set() if latest is None else {f.path for f in (latest.base_file, *latest.log_files) if f is not None}
        base_gone = latest is not None and latest.base_file is None and \
            view.timeline.find(latest.base_instant_time, Action.COMMIT) is not None  # a base file's slice, cleaned
        if path not in files or base_gone:
            out.append((key, (path, when)))
    return out


def earliest_readable_start(storage: Storage, timeline: Timeline, end: str) -> str | None:
    """The earliest start from which (start, end] reads incrementally: after every file group whose version
    as of ``end`` was cleaned was last written, and after the newest archived write."""
    writes = [i for i in timeline.completed_commits() if i.completed_at <= end]
    written = last_writes(timeline, sorted(writes, key=lambda i: i.completed_at))
    view = FileSystemView.load(storage, timeline, as_of=end, partitions={p for p, _ in written})
    bounds = [when for _, (_, when) in missing_versions(view, written)]
    archived = newest_archived_write(storage, timeline.layout)
    return max([*bounds, *([archived] if archived is not None else [])], default=None)


def _full_scan(table: ReadableTable, window: CommitWindow) -> DataFrame:
    """Hudi's fallback for a window it cannot read incrementally: the latest snapshot's rows whose commit is
    in the window (a row updated after its end has a later commit, so it is left to the next window)."""
    return snapshot(table).filter(window.column())

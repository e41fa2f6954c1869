"""Change data capture queries (``hoodie.datasource.query.incremental.format=cdc``) over tables with
``hoodie.table.cdc.enabled``: one row per change committed in (start, end], with Hudi's columns ``op``
(``i``, ``u``, ``d``), ``ts_ms`` (the commit's instant time), ``before`` and ``after`` (JSON strings of the
record images, null where absent), as Hudi's Spark CDC relation (HoodieCDCExtractor + its CDC RDD) returns them.

Per commit (commit, deltacommit and replacecommit instants whose operation changes data: not clustering nor
compaction, whose rows a reader already saw as the deltacommits that wrote them) and file group written, what
the changes are read from (Hudi's HoodieCDCInferenceCase):

* AS_IS: the write stat names CDC log files (``cdcStats``): their records, with the images the supplemental
  logging mode did not log read from the file versions before (``prevCommit``) and after (the written file);
* BASE_FILE_INSERT: a base file of inserts only and no CDC log (a new file group): every row is an ``i``;
* BASE_FILE_DELETE: a delete that emptied a file group and logged nothing: every row of the version before
  is a ``d``;
* LOG_FILE: a merge-on-read log file a deltacommit appended (no CDC log: Hudi's append handle writes none):
  its records against the file slice before it (the base file and the other log files the write stat
  lists): a delete of a present key is a ``d``, a record of an absent key an ``i``, a record whose merge with
  the present row changes it a ``u`` (a stale record that loses the merge is no change); before and after
  are the merged rows, meta columns included;
* REPLACE_COMMIT: every row of a file group a replacecommit replaced (insert_overwrite) is a ``d`` (its latest
  slice before the commit, log files merged).

Images are printed as Hudi prints them (:mod:`hoodpy.read.cdc_images`): logged images (table columns only)
as Avro's ``GenericData.toString``, rows read from base and log files (meta columns included) as its
InternalRowToJsonStringConverter.

The changes are planned on the driver (commit metadata and file listings) and read in Spark tasks: a split per
(commit, file group), a DATA_BEFORE_AFTER CDC log of ``PART_BYTES`` or more split into record ranges, one per core;
at most one task per core, the heaviest splits spread first. Images are printed a column at a time
(:mod:`hoodpy.read.cdc_columns`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.config.table import DATA_BEFORE, DATA_BEFORE_AFTER, TableConfig, cdc_mode
from hoodpy.config.write import event_time_ordering_field
from hoodpy.errors import ChangesNotReadableError, HoodieIOError, InvalidConfigError
from hoodpy.file_group.cdc_log import BEFORE, OP, OP_DELETE, OP_INSERT, OP_UPDATE, RECORD_KEY
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import FileSystemView, list_base_files
from hoodpy.file_group.log_file import cdc_blocks, cdc_records, effective_blocks
from hoodpy.file_group.log_writer import avro_records
from hoodpy.file_group.naming import join_partition, parse_base_file_name
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.meta_fields import RECORD_KEY as KEY_COLUMN
from hoodpy.read.cdc_columns import logged_changes, row_texts
from hoodpy.read.cdc_images import avro_text, row_text
from hoodpy.read.file_scan import spark_cores
from hoodpy.read.query import window_commits
from hoodpy.read.slice_merge import decode_blocks, merge_decoded
from hoodpy.read.slice_scan import slice_rows
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, Action
from hoodpy.timeline.metadata import NULL_COMMIT, OperationType
from hoodpy.timeline.timeline import CommittedInstants, Timeline

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hoodpy.read.query import ReadableTable

CDC_COLUMNS_DDL = "op string, ts_ms string, before string, after string"
AS_IS, BASE_FILE_INSERT, BASE_FILE_DELETE, LOG_FILE, REPLACE_COMMIT = \
    "AS_IS", "BASE_FILE_INSERT", "BASE_FILE_DELETE", "LOG_FILE", "REPLACE_COMMIT"
_WRITES = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT)
# WriteOperationType.isDataChange: table services rewrite files without changing records (a compaction's rows
# were reported as the deltacommits that logged them).
_NOT_DATA_CHANGES = {OperationType.CLUSTER, OperationType.COMPACT, "LOG_COMPACT", "INDEX"}
PART_BYTES = 4 << 20  # a logged CDC file splits over the cores from this size up (read_cdc)
_OUTPUT = pa.schema([(n, pa.string()) for n in ("op", "ts_ms", "before", "after")])


@dataclass(frozen=True)
class CdcSplit:
    """The changes one commit made to one file group, and the files they are read from (relative paths)."""

    instant_time: str
    case: str
    mode: str
    cdc_files: tuple[str, ...] = ()
    before_file: str | None = None  # the file version before the commit (its base file)
    after_file: str | None = None  # the file version the commit wrote
    before_logs: tuple[str, ...] = ()  # merge-on-read: the log files of the slice before the commit
    cdc_bytes: int = 0  # the CDC log files' size (write stats)
    part: int = 0  # DATA_BEFORE_AFTER CDC logs: the part-th of ``parts`` equal record ranges, read by one task
    parts: int = 1


@dataclass(frozen=True)
class CdcReadContext:
    """What the tasks reading splits need: the rows' schema (meta columns first), the merge's ordering field
    and the log blocks that count (merge-on-read slices)."""

    schema: pa.Schema
    ordering_field: str | None
    committed: CommittedInstants

    @property
    def image_type(self) -> pa.DataType:
        """The type of logged images: the table columns."""
        return pa.struct([f for f in self.schema if f.name not in META_COLUMNS])


def check_cdc_table(table: ReadableTable) -> str:
    """The table's supplemental logging mode; a clear error when the table does not capture changes."""
    props = table.properties
    mode = cdc_mode(props)
    if mode is None:
        raise InvalidConfigError(TableConfig.CDC_ENABLED.key, props.get(TableConfig.CDC_ENABLED.key, "false"),
                                 f"It isn't a CDC hudi table on {table.storage.base_uri}: change data capture "
                                 f"queries read tables created with {TableConfig.CDC_ENABLED.key}=true")
    if props.get(TableConfig.POPULATE_META_FIELDS.key, "true").lower() == "false":
        raise InvalidConfigError(TableConfig.POPULATE_META_FIELDS.key, "false",
                                 "change data capture queries match images by the stored record key")
    return mode


class _Versions:
    """The committed base files of the partitions a CDC query touches, listed once per partition."""

    def __init__(self, storage: Storage, timeline: Timeline):
        self.storage, self.timeline = storage, timeline
        self._listed: dict[str, list[BaseFile]] = {}
        self._views: dict[tuple[str, str], FileSystemView] = {}  # (partition, as of) -> its view

    def of(self, partition: str, file_id: str, *, at: str | None = None, before: str | None = None) -> str | None:
        """The base file of a file group written at instant ``at``, or the newest committed one before
        ``before``."""
        if partition not in self._listed:
            first = self.timeline.earliest_instant_time()
            self._listed[partition] = [
                bf for bf in list_base_files(self.storage, [partition])
                if self.timeline.is_completed_write(bf.instant_time) or (first is not None and bf.instant_time < first)]
        return _version_on(self._listed[partition], file_id, at=at, before=before)

    def slice_before(self, partition: str, file_id: str, instant_time: str) -> tuple[str | None, tuple[str, ...]]:
        """The base file and log files of a file group's latest slice before ``instant_time`` (merge-on-read:
        the rows a replacecommit removed)."""
        earlier = [i for i in self.timeline.completed_commits() if i.timestamp < instant_time]
        if not earlier:
            return None, ()
        key = (partition, max(earlier, key=lambda i: i.timestamp).completed_at)  # a view's as_of: a completion time
        if key not in self._views:
            self._views[key] = FileSystemView.load(self.storage, self.timeline, as_of=key[1], partitions=[partition])
        group = self._views[key].file_group(partition, file_id)
        latest = group.latest_slice() if group is not None else None
        if latest is None:
            return None, ()
        return (latest.base_file.path if latest.base_file is not None else None,
                tuple(lf.path for lf in latest.log_files))


def _version_on(files: list[BaseFile], file_id: str, *, at: str | None = None, before: str | None = None,
                ) -> str | None:
    found = [bf for bf in files if bf.file_id == file_id]
    if at is not None:
        found = [bf for bf in found if bf.instant_time == at]
    if before is not None:
        found = [bf for bf in found if bf.instant_time < before]
    return max(found, key=lambda bf: bf.instant_time).path if found else None


def plan_cdc(table: ReadableTable, start: str, end: str | None = None) -> list[CdcSplit]:
    """The splits of a CDC query over the commits in (start, end] (``end`` None: the latest)."""
    mode = check_cdc_table(table)
    timeline, commits, end = window_commits(table, start, end)
    storage = table.storage
    versions = _Versions(storage, timeline)
    merge_on_read = table.properties.get(TableConfig.TYPE.key) == "MERGE_ON_READ"
    splits: list[CdcSplit] = []

    def need(path: str | None, what: str) -> str:
        if path is None or not storage.exists(path):
            raise ChangesNotReadableError(storage.base_uri, start, end, f"{what} is gone (cleaned)", None)
        return path

    for instant in commits:
        if instant.action not in _WRITES:
            continue
        metadata = timeline.commit_metadata(instant)
        if metadata.operation_type in _NOT_DATA_CHANGES:
            continue
        ts = instant.timestamp
        for stat in metadata.write_stats:
            if not stat.path:
                continue
            where = f"file group {stat.file_id} (partition {stat.partition_path!r})"
            prev = stat.prev_commit if stat.prev_commit not in (None, "", NULL_COMMIT) else None
            if stat.cdc_stats:
                before = after = None
                if mode != DATA_BEFORE_AFTER:
                    after = need(stat.path, f"the version {ts} of {where}")
                    if mode != DATA_BEFORE and prev is not None:
                        before = need(versions.of(stat.partition_path, stat.file_id, at=prev),
                                      f"the version {prev} of {where}")
                files = tuple(need(p, f"the CDC log {p}") for p in sorted(stat.cdc_stats))
                splits.append(CdcSplit(ts, AS_IS, mode, files, before, after,
                                       cdc_bytes=sum(int(n or 0) for n in stat.cdc_stats.values())))
            elif parse_base_file_name(stat.path.rsplit("/", 1)[-1]) is None:  # a log file a deltacommit appended
                name = stat.path.rsplit("/", 1)[-1]
                if timeline.layout >= LAYOUT_2:  # versions 8 and 9: a log write's stat names no earlier file
                    base, earlier = versions.slice_before(stat.partition_path, stat.file_id, ts)
                    logs = tuple(need(p, f"the log file {p} of {where}") for p in earlier
                                 if p.rsplit("/", 1)[-1] != name)
                else:
                    base = join_partition(stat.partition_path, stat.base_file) if stat.base_file else None
                    logs = tuple(need(join_partition(stat.partition_path, n), f"the log file {n} of {where}")
                                 for n in stat.log_files or () if n != name)
                splits.append(CdcSplit(ts, LOG_FILE, mode, (need(stat.path, f"the log file {stat.path}"),),
                                       need(base, f"the base file of {where}") if base else None,
                                       before_logs=logs))
            elif metadata.operation_type == OperationType.DELETE and stat.num_writes == 0 and stat.num_deletes:
                before = versions.of(stat.partition_path, stat.file_id, at=prev)
                splits.append(CdcSplit(ts, BASE_FILE_DELETE, mode, before_file=need(
                    before, f"the version {prev} of {where}")))
            elif stat.num_update_writes == 0 and stat.num_deletes == 0 and stat.num_writes == stat.num_inserts:
                splits.append(CdcSplit(ts, BASE_FILE_INSERT, mode, after_file=need(stat.path, f"{stat.path}")))
            else:
                raise HoodieIOError(stat.path, f"commit {ts} changed {where} but logged no CDC file (it was "
                                    "written without change data capture)")
        for partition, file_id in sorted(metadata.replaced_file_ids()):
            if merge_on_read:
                replaced, logs = versions.slice_before(partition, file_id, ts)
            else:
                replaced, logs = versions.of(partition, file_id, before=ts), ()
            if replaced is not None or logs:  # an empty file group has nothing to delete
                splits.append(CdcSplit(ts, REPLACE_COMMIT, mode, before_file=replaced, before_logs=logs))
    return splits


# -- executors ---------------------------------------------------------------------------------------------
def _keyed(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r[KEY_COLUMN]: r for r in rows}


def _slice(storage: Storage, split: CdcSplit, ctx: CdcReadContext | None) -> pa.Table:
    """The rows of the slice before a merge-on-read split's commit: its base file merged with its log files."""
    if ctx is None:
        raise ValueError("a merge-on-read CDC split needs its read context")
    return slice_rows(storage, split.before_file, split.before_logs, ctx.schema, ctx.committed, ctx.ordering_field)


def split_changes(storage: Storage, split: CdcSplit, ctx: CdcReadContext | None = None,
                  ) -> list[tuple[str, str, str | None, str | None]]:
    """The (op, ts_ms, before, after) rows of one split (``ctx``: for merge-on-read splits)."""
    batch = split_batch(storage, split, ctx)
    return list(zip(*(c.to_pylist() for c in batch.columns), strict=True))


def split_batch(storage: Storage, split: CdcSplit, ctx: CdcReadContext | None = None) -> pa.RecordBatch:
    """The changes of one split as a batch of ``op``, ``ts_ms``, ``before``, ``after`` (``ctx``: for
    merge-on-read splits and the decimals of logged images)."""
    ts = split.instant_time
    if split.case == BASE_FILE_INSERT:
        return _batch(OP_INSERT, ts, None, row_texts(_table(storage, split.after_file)))
    if split.case in (BASE_FILE_DELETE, REPLACE_COMMIT):
        before = _slice(storage, split, ctx) if split.before_logs else _table(storage, split.before_file)
        return _batch(OP_DELETE, ts, row_texts(before), None)
    if split.case == LOG_FILE:
        return _rows_batch(_log_file_changes(storage, split, ctx))
    if split.mode == DATA_BEFORE_AFTER:
        blocks = [b for path in split.cdc_files for b in cdc_blocks(storage.read_bytes(path), path)]
        ops, before, after = logged_changes(blocks, ctx.image_type if ctx is not None else None,
                                            split.part, split.parts)
        return _batch(ops, ts, before, after)
    records = [r for path in split.cdc_files for r in cdc_records(storage.read_bytes(path), path)]
    named = pa.array(list(dict.fromkeys(r[RECORD_KEY] for r in records)), pa.string())
    # Only the rows of the keys the records name leave Arrow: the after version's printed column-wise, the
    # version before's (OP_KEY_ONLY) as records; a file version holds every row of its file group.
    after = _named_rows(storage, split.after_file, named)
    after_at = {k: i for i, k in enumerate(after.column(KEY_COLUMN).to_pylist())} if after.num_rows else {}
    after_texts = row_texts(after).to_pylist() if after.num_rows else []
    before = _keyed(avro_records(_named_rows(storage, split.before_file, named))) \
        if split.mode != DATA_BEFORE and split.before_file is not None else {}
    out = []
    for r in records:
        op, key = r[OP], r[RECORD_KEY]
        image = r[BEFORE] if split.mode == DATA_BEFORE else before.get(key) if op != OP_INSERT else None
        out.append((op, ts, _avro_or_none(image, ctx),
                    after_texts[after_at[key]] if op in (OP_INSERT, OP_UPDATE) and key in after_at else None))
    return _rows_batch(out)


def _named_rows(storage: Storage, path: str | None, keys: pa.Array) -> pa.Table:
    """The rows of a base file whose record key is one of ``keys`` (an empty table without a file)."""
    if path is None:
        return pa.table({})
    rows = _table(storage, path)
    return rows.filter(pc.is_in(rows.column(KEY_COLUMN), value_set=keys))


def _table(storage: Storage, path: str | None) -> pa.Table:
    return pq.read_table(storage.full_path(path), filesystem=storage.fs) if path is not None else pa.table({})


def _batch(op: str | pa.Array, ts: str, before: pa.Array | None, after: pa.Array | None) -> pa.RecordBatch:
    """A batch of changes: ``op`` (one for all, or per change) and the absent image over the present one's rows."""
    n = len(op) if isinstance(op, pa.Array) else len(before if before is not None else after)
    absent = pa.nulls(n, pa.string())
    return pa.RecordBatch.from_arrays(
        [op if isinstance(op, pa.Array) else pa.array([op] * n, pa.string()), pa.array([ts] * n, pa.string()),
         absent if before is None else before, absent if after is None else after], schema=_OUTPUT)


def _rows_batch(rows: list[tuple[str, str, str | None, str | None]]) -> pa.RecordBatch:
    columns = list(zip(*rows, strict=True)) if rows else [()] * 4
    return pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in columns], schema=_OUTPUT)


def _log_file_changes(storage: Storage, split: CdcSplit, ctx: CdcReadContext | None,
                      ) -> list[tuple[str, str, str | None, str | None]]:
    """A deltacommit's log file against the slice before it: each key it names whose merged row appears,
    disappears or changes, in the order the log names them (Hudi's LOG_FILE case; the merge is the snapshot
    read's, so the changes add up to what snapshots show)."""
    before = _slice(storage, split, ctx)
    assert ctx is not None
    logs = effective_blocks(((storage.full_path(p), storage.read_bytes(p)) for p in split.cdc_files), ctx.committed)
    decoded = decode_blocks(logs.blocks, ctx.schema)
    named = list(dict.fromkeys(k for e in decoded for k in (
        [d.record_key for d in e] if isinstance(e, list) else e.column(KEY_COLUMN).to_pylist())))
    touched = before.filter(pc.is_in(before.column(KEY_COLUMN), value_set=pa.array(named, pa.string())))
    merged, _ = merge_decoded(touched, decoded, ctx.schema, ctx.ordering_field)
    old, new = _keyed(avro_records(touched)), _keyed(avro_records(merged))
    out = []
    for key in named:
        b, a = old.get(key), new.get(key)
        if a == b:  # absent before and after, or a stale record that lost the merge
            continue
        op = OP_INSERT if b is None else OP_DELETE if a is None else OP_UPDATE
        out.append((op, split.instant_time, None if b is None else row_text(b), None if a is None else row_text(a)))
    return out


def _avro_or_none(image: dict | None, ctx: CdcReadContext | None) -> str | None:
    return None if image is None else avro_text(image, ctx.image_type if ctx is not None else None)


def _run_splits(base_uri: str, ctx: CdcReadContext | None, tasks: list[list[str]],
                batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    storage = Storage(base_uri)
    for batch in batches:
        for task in batch.column(0).to_pylist():
            for text in tasks[task]:
                changes = split_batch(storage, CdcSplit(**{k: tuple(v) if isinstance(v, list) else v
                                                           for k, v in json.loads(text).items()}), ctx)
                if changes.num_rows:
                    yield changes


def _in_parts(split: CdcSplit, parallelism: int) -> list[CdcSplit]:
    """A logged (DATA_BEFORE_AFTER) split of several MB as one split per core, each decoding a record range:
    decoding and printing cost ~10 µs a change in Python, the file one read."""
    parts = min(parallelism, split.cdc_bytes // PART_BYTES) if split.case == AS_IS and \
        split.mode == DATA_BEFORE_AFTER else 1
    return [replace(split, part=i, parts=parts) for i in range(parts)] if parts > 1 else [split]


def _weight(split: CdcSplit) -> int:
    return split.cdc_bytes // split.parts if split.cdc_bytes else PART_BYTES


def _tasks(splits: list[CdcSplit], parallelism: int) -> list[list[str]]:
    """The splits (as JSON) each task reads: at most one task per core, the heaviest splits spread first."""
    tasks: list[list[str]] = [[] for _ in range(min(len(splits), parallelism))]
    loads = [0] * len(tasks)
    for split in sorted(splits, key=_weight, reverse=True):
        i = loads.index(min(loads))
        tasks[i].append(json.dumps(asdict(split)))
        loads[i] += _weight(split)
    return tasks


def read_cdc(table: ReadableTable, start: str, end: str | None = None) -> DataFrame:
    """The CDC query over (start, end]: a DataFrame of ``op``, ``ts_ms``, ``before``, ``after``."""
    parallelism = spark_cores(table.spark)
    splits = [p for s in plan_cdc(table, start, end) for p in _in_parts(s, parallelism)]
    base_uri = table.storage.base_uri
    ctx = read_context(table)
    tasks = _tasks(splits, parallelism)
    # One row per task in a range of as many partitions: Spark runs each task's splits in its own task (a
    # repartition of the splits' rows could put two in one task and leave a core idle).
    # The ids as they come (no cast: a projection is a call to the JVM) and the output as a StructType (a DDL
    # string is parsed by the JVM): each call to the JVM is planning time.
    frame = table.spark.range(0, len(tasks), 1, max(1, len(tasks)))
    return frame.mapInArrow(lambda it: _run_splits(base_uri, ctx, tasks, it), _cdc_struct())


def _cdc_struct():
    from pyspark.sql.types import StringType, StructField, StructType

    return StructType([StructField(f.name, StringType()) for f in _OUTPUT])


def read_context(table: ReadableTable) -> CdcReadContext:
    """The read context of a merge-on-read table's splits: images in the latest schema (as Hudi's CDC relation
    reads them), the writes' merge, every committed write's log blocks."""
    timeline = table.timeline
    data = table.arrow_schema(timeline)
    schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + (list(data) if data is not None else []))
    return CdcReadContext(schema, event_time_ordering_field(table.config), timeline.committed())

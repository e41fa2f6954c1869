"""The per-file-group write of a merge-on-read deltacommit, in executors: updates and deletes appended as log
blocks to a new log file of the group's latest file slice; the groups that take base files (new file groups,
small base-file-only slices receiving inserts) go through the copy-on-write merge (:mod:`hoodpy.write.merge`).

As Hudi's append handle (HoodieAppendHandle) writes them:

* only the incoming (combined) records are written; no base file is read;
* each record carries the meta fields: the deltacommit's instant, ``<instant>_<task partition>_<n>``, its key
  and partition path, and the file id (not a file name) as ``_hoodie_file_name``; with virtual keys
  (``hoodie.populate.meta.fields=false``) the meta columns stay in the block's rows and schema, all null;
* records go into data blocks of at most ``hoodie.logfile.data.block.max.size`` bytes (Avro or parquet,
  ``hoodie.logfile.data.block.format``), then the deletes into one delete block;
* the blocks go into a new log file ``.<fileId>_<baseInstant>.log.<version>_<writeToken>`` (hoodpy never
  appends to an existing file, as Hudi on storage without appends), version one past every log file of the
  slice; a block that would take a non-empty file past ``hoodie.logfile.max.size`` starts the next version;
* table versions 8 and 9 (Hudi 1.x) name the new log file after the deltacommit instead
  (``.<fileId>_<deltacommit>.log.1_<writeToken>``): readers put it in a slice by the deltacommit's completion
  time, so a write during a pending compaction needs nothing special. Its write stat names the deltacommit as
  ``prevCommit``, an empty ``baseFile`` and only the log files it wrote (the Hudi 1.1 samples'
  ``hudi-rs/sample_table/mor/avro/v9_txns_*`` deltacommits);
* each log file is marked (:mod:`hoodpy.file_group.markers`) before it is created, and reports one
  HoodieDeltaWriteStat.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import (add_meta_columns, align, finalize, null_columns, repeated, task_ids, write_stats,
                               write_stats_row)
from hoodpy.config import HoodieConfig, ordering_fields
from hoodpy.config.storage import StorageConfig
from hoodpy.config.table import TableConfig
from hoodpy.file_group import log_writer
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.markers import confirm_marked, create_marker, marker_path
from hoodpy.file_group.naming import LogFileName, join_partition, write_token
from hoodpy.file_group.ordering_wrappers import delete_orderings
from hoodpy.meta_fields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.schema import avro_schema_to_json
from hoodpy.storage import Storage
from hoodpy.write.base_file import encode_parquet
from hoodpy.write.decimal_transfer import Shipped, restored_batches
from hoodpy.write.merge import OP, OP_DELETE, TARGET_FILE_ID, MergeContext, merge_file_group
from hoodpy.write.task_combine import combined_in_task

AVRO, PARQUET = "avro", "parquet"
# The (partition path, file id) all of a task's rows go to, when the rows come without those columns.
OneTarget = tuple[str, str]


@dataclass(frozen=True)
class LogSlice:
    """The latest file slice of a file group that takes log blocks: its base instant, base file name ("" for a
    slice of logs only) and log file names, and the version the write's first new log file gets."""

    base_instant: str  # the instant the new log files are named after (versions 8 and 9: the write's)
    base_file: str = ""
    log_files: tuple[str, ...] = ()
    next_version: int = 1
    new_group: bool = False  # a group this write creates: its records are inserts


@dataclass
class AppendContext:
    """What a deltacommit's file-group task needs, in plain picklable values."""

    merge: MergeContext  # the instant, schema and base-file options; the merge of groups that take base files
    slices: dict[tuple[str, str], LogSlice] = field(default_factory=dict)  # (partition, file id) -> its logs
    schema_json: str = ""  # the log records' Avro writer schema (meta fields first)
    block_format: str = AVRO
    max_file_size: int = 1073741824
    max_block_size: int = 268435456
    hudi_1x: bool = False  # table version 8 or 9: delete blocks in Hudi 1.x's schema (wrapped ordering values)


def log_slices(view: FileSystemView, *, instant_time: str, base_file_groups: set[tuple[str, str]],
               new_groups: set[tuple[str, str]] = frozenset(),
               compacting: Mapping[tuple[str, str], str] | None = None,
               named_by_write: bool = False) -> dict[tuple[str, str], LogSlice]:
    """The file groups a deltacommit appends logs to: the latest slice of every group of ``view`` but those in
    ``base_file_groups`` (small base-file-only slices taking inserts: they are merged into a new base file, as
    Hudi does for small files), plus ``new_groups`` that start as logs only (base instant: this write). Each new
    log version is one past every listed log file of its slice, committed or not (a failed write's file keeps
    its name until rolled back). A group a pending compaction holds (``compacting``: group -> compaction instant)
    takes its logs in the slice the compaction starts (base instant: the compaction's), as Hudi writes them, so
    the compaction, which reads the slice before it, leaves them for the next one. ``named_by_write`` (table
    versions 8 and 9): every group's new logs are named after ``instant_time`` and report no earlier file."""
    latest_version: dict[tuple[str, str, str], int] = {}
    for lf in view.listed_log_files:
        key = (lf.partition_path, lf.file_id, lf.base_instant_time)
        latest_version[key] = max(latest_version.get(key, 0), lf.name.version)
    out: dict[tuple[str, str], LogSlice] = {}
    for s in view.latest_file_slices():
        if (s.partition_path, s.file_id) in base_file_groups:
            continue
        if named_by_write:
            key = (s.partition_path, s.file_id)
            out[key] = LogSlice(instant_time, next_version=latest_version.get((*key, instant_time), 0) + 1)
            continue
        compaction = (compacting or {}).get((s.partition_path, s.file_id))
        if compaction is not None:
            out[(s.partition_path, s.file_id)] = LogSlice(
                compaction, "", tuple(lf.file_name for lf in view.listed_log_files
                                      if (lf.partition_path, lf.file_id, lf.base_instant_time)
                                      == (s.partition_path, s.file_id, compaction)),
                latest_version.get((s.partition_path, s.file_id, compaction), 0) + 1)
            continue
        out[(s.partition_path, s.file_id)] = LogSlice(
            s.base_instant_time, s.base_file.file_name if s.base_file is not None else "",
            tuple(lf.file_name for lf in s.log_files),
            latest_version.get((s.partition_path, s.file_id, s.base_instant_time), 0) + 1)
    for partition, file_id in new_groups:
        version = latest_version.get((partition, file_id, instant_time), 0) + 1
        out[(partition, file_id)] = LogSlice(instant_time, next_version=version, new_group=True)
    return out


def append_context(config: HoodieConfig, merge: MergeContext, view: FileSystemView,
                   base_file_groups: set[tuple[str, str]], new_groups: set[tuple[str, str]],
                   schema_json: str, compacting: Mapping[tuple[str, str], str] | None = None) -> AppendContext:
    """The context of a deltacommit's file-group tasks (``schema_json``: the table's Avro schema;
    ``compacting``: the groups pending compactions hold, see :func:`log_slices`)."""
    return AppendContext(
        merge=merge,
        slices=log_slices(view, instant_time=merge.instant_time, base_file_groups=base_file_groups,
                          new_groups=new_groups, compacting=compacting,
                          named_by_write=config.get(TableConfig.VERSION) >= 8),
        schema_json=avro_schema_to_json(log_writer.log_schema(json.loads(schema_json))),
        block_format=config.get(StorageConfig.LOGFILE_DATA_BLOCK_FORMAT),
        max_file_size=config.get(StorageConfig.LOGFILE_MAX_SIZE),
        max_block_size=config.get(StorageConfig.LOGFILE_DATA_BLOCK_MAX_SIZE),
        hudi_1x=config.get(TableConfig.VERSION) >= 8,
    )


def write_file_group(ctx: AppendContext, incoming: pa.Table) -> pa.Table:
    """One file group's incoming records of a deltacommit: appended as log blocks when the group takes logs,
    else merged into a base file. Returns the write-stats rows."""
    key = (incoming.column(PARTITION_PATH)[0].as_py(), incoming.column(TARGET_FILE_ID)[0].as_py())
    target = ctx.slices.get(key)
    if target is None:
        return merge_file_group(ctx.merge, incoming)
    return append_file_group(ctx, key[0], key[1], target, incoming)


def write_partition(ctx: AppendContext, batches: Iterator[pa.RecordBatch], decimals: Shipped = (),
                    target: OneTarget | None = None) -> Iterator[pa.RecordBatch]:
    """One merge task of a deltacommit (``mapInArrow``): the rows of a Spark partition that holds whole file
    groups (partitioned by their merge bin, or by partition path and file id), written group by group with
    :func:`write_file_group`. Grouping here instead of Spark's ``groupBy().applyInArrow`` spares the JVM a sort
    of the whole batch by group and a per-group Arrow exchange: one pass of the partition's rows, in Arrow.
    ``decimals``: the decimal columns the rows bring as doubles (:func:`hoodpy.write.decimal_transfer.ship`),
    made decimal again first; ``target``: the one file group all rows go to, when the rows come without it."""
    return each_file_group(restored_batches(batches, decimals), partial(write_file_group, ctx), target)


def each_file_group(batches: Iterator[pa.RecordBatch], write: Callable[[pa.Table], pa.Table],
                    target: OneTarget | None = None) -> Iterator[pa.RecordBatch]:
    """The write stats ``write`` returns for each file group of a task's rows (``batches``: a Spark partition
    holding whole file groups), the groups split in Arrow (:func:`split_file_groups`); the task of a
    deltacommit (:func:`write_partition`) and of a copy-on-write merge bin (:func:`targets.merge_bin`).
    ``target``: the (partition path, file id) of every row, when the rows come without those columns (the JVM
    converting a constant string per row to Arrow costs it; see ``Writer._tag_and_assign_on_driver``)."""
    batches = list(batches)  # an empty Spark partition sends none (and from_batches needs one for the schema)
    rows = pa.Table.from_batches(batches) if batches else None
    if rows is None or not rows.num_rows:
        return
    if target is not None:
        for name, value in zip((PARTITION_PATH, TARGET_FILE_ID), target, strict=True):
            rows = rows.append_column(pa.field(name, pa.string(), nullable=False), repeated(value, rows))
        yield from write(rows).to_batches()
        return
    for group in split_file_groups(rows):
        yield from write(group).to_batches()


def split_file_groups(rows: pa.Table) -> Iterator[pa.Table]:
    """``rows`` split by (partition path, target file id), each group in its arrival order (a stable sort)."""
    keys = [PARTITION_PATH, TARGET_FILE_ID]
    if rows.select(keys).group_by(keys).aggregate([]).num_rows == 1:
        yield rows
        return
    ordered = rows.take(pc.sort_indices(rows.select(keys), sort_keys=[(k, "ascending") for k in keys]))
    # Single-threaded grouping lists the groups in order of first appearance: of the sorted rows, in runs.
    runs = ordered.select(keys).group_by(keys, use_threads=False).aggregate([([], "count_all")])
    offset = 0
    for count in runs.column("count_all").to_pylist():
        yield ordered.slice(offset, count)
        offset += count


def append_file_group(ctx: AppendContext, partition_path: str, file_id: str, target: LogSlice,
                      incoming: pa.Table) -> pa.Table:
    started = time.monotonic()
    instant = ctx.merge.instant_time
    if ctx.merge.combine_ordering is not None:  # the batch came uncombined: every record of a key is here
        incoming = combined_in_task(incoming, ctx.merge.combine_ordering)
    is_delete = pc.equal(incoming.column(OP), OP_DELETE)
    if target.new_group and pc.any(is_delete).as_py():
        # A group this write creates holds no record to delete (a key's delete that won combining, or reached
        # a bucket with no file group): nothing of it is written, as when Spark drops such deletes before.
        incoming = incoming.filter(pc.invert(is_delete))
        is_delete = pc.equal(incoming.column(OP), OP_DELETE)
        if not incoming.num_rows:
            return write_stats([])
    if pc.any(is_delete).as_py():
        upserts, deletes = incoming.filter(pc.invert(is_delete)), incoming.filter(is_delete)
    else:  # the common upsert: no copy of every column by an all-true filter
        upserts, deletes = incoming, incoming.slice(0, 0)
    task_partition, stage_id, attempt_id = task_ids()
    rows = add_meta_columns(align(upserts, ctx.merge.data_schema), upserts.column(RECORD_KEY).combine_chunks(),
                            partition_path, instant)
    rows = finalize(rows, pa.repeat(pa.scalar(True), rows.num_rows), instant_time=instant, file_name=file_id,
                    task_partition=task_partition)
    if ctx.merge.options.virtual_keys is not None:  # virtual keys: the meta columns stay, all null, as Java writes
        rows = null_columns(rows, META_COLUMNS)
    # A group this write creates (a new bucket of an index that indexes logs) takes inserts; the records for
    # an existing group were located in it: updates.
    inserts = target.new_group

    files = _LogFiles(Storage(ctx.merge.base_uri), instant, partition_path, file_id, target,
                      write_token(task_partition, stage_id, attempt_id), ctx.max_file_size)
    try:
        for block, count in _data_blocks(ctx, rows):
            files.append(block, writes=count, inserts=count if inserts else 0, updates=0 if inserts else count)
        if deletes.num_rows:
            files.append(_delete_block(ctx, deletes), deletes=deletes.num_rows)
    finally:
        files.close()
    files.confirm()
    elapsed_ms = int((time.monotonic() - started) * 1000)
    return write_stats([{**write_stats_row(partition_path, file_id, f.path, prev_commit=target.base_instant,
                                           num_writes=f.writes, num_inserts=f.inserts, file_size=f.size,
                                           elapsed_ms=elapsed_ms, num_deletes=f.deletes,
                                           num_update_writes=f.updates),
                         "log_version": f.version, "log_offset": 0, "base_file": target.base_file,
                         "log_files": list(f.slice_log_files)}
                        for f in files.written])


def _data_blocks(ctx: AppendContext, rows: pa.Table) -> Iterator[tuple[bytes, int]]:
    """Data blocks of ``rows`` (meta columns first), each at most ``max_block_size`` bytes of Arrow rows, and
    the number of records in each."""
    if not rows.num_rows:
        return
    per_row = max(1, rows.nbytes // rows.num_rows)
    step = max(1, ctx.max_block_size // per_row)
    for start in range(0, rows.num_rows, step):
        chunk = rows.slice(start, step)
        if ctx.block_format == PARQUET:
            sink = io.BytesIO()
            encode_parquet(sink, chunk, ctx.merge.options, {})
            block = log_writer.parquet_data_block(sink.getvalue(), ctx.merge.instant_time, ctx.schema_json)
        else:
            block = log_writer.avro_data_block(chunk, ctx.merge.instant_time, ctx.schema_json)
        yield block, chunk.num_rows


def _delete_block(ctx: AppendContext, deletes: pa.Table) -> bytes:
    """The delete block of ``deletes``: each key with its ordering value under event-time ordering (a delete
    that carries one competes with the records by it), else long 0 (it always wins), as Java writes them.
    Several ordering fields: at table versions 8 and 9 the tuple as Hudi 1.x's ArrayWrapper (a late delete, of
    an older tuple, then loses as in Java); at version 6 long 0, since that orderingVal union has no branch for
    a tuple."""
    keys = deletes.column(RECORD_KEY).to_pylist()
    fields = ordering_fields(ctx.merge.ordering_field)
    present = bool(fields) and all(f in deletes.column_names for f in fields)
    if ctx.hudi_1x:
        orderings = delete_orderings(deletes, fields if present else ())
    elif len(fields) == 1 and present:
        column = deletes.column(fields[0])
        orderings = [log_writer.ordering_value(v, column.type) for v in column.to_pylist()]
    else:
        orderings = [log_writer.NO_ORDERING] * len(keys)
    partitions = deletes.column(PARTITION_PATH).to_pylist()
    return log_writer.delete_block(zip(keys, partitions, orderings), ctx.merge.instant_time, ctx.schema_json,
                                   hudi_1x=ctx.hudi_1x)


@dataclass
class _Written:
    """One log file this task wrote: what a HoodieDeltaWriteStat reports of it."""

    path: str
    version: int
    slice_log_files: tuple[str, ...]  # the slice's log files once this one exists
    size: int = 0
    writes: int = 0
    inserts: int = 0
    updates: int = 0
    deletes: int = 0


class _LogFiles:
    """The new log files of one file group's write, created one version after another: a block goes into the
    current file unless it would take the (non-empty) file past the maximum size."""

    def __init__(self, storage: Storage, instant_time: str, partition_path: str, file_id: str, target: LogSlice,
                 token: str, max_size: int):
        self._storage, self._instant, self._partition = storage, instant_time, partition_path
        self._file_id, self._target, self._token, self._max_size = file_id, target, token, max_size
        self._sink = None
        self.written: list[_Written] = []

    def append(self, block: bytes, *, writes: int = 0, inserts: int = 0, updates: int = 0, deletes: int = 0):
        current = self.written[-1] if self.written else None
        if current is None or (current.size and current.size + len(block) > self._max_size):
            current = self._open()
        self._sink.write(block)
        current.size += len(block)
        current.writes += writes
        current.inserts += inserts
        current.updates += updates
        current.deletes += deletes

    def _open(self) -> _Written:
        self.close()
        version = self._target.next_version + len(self.written)
        name = LogFileName(self._file_id, self._target.base_instant, version, self._token).name
        create_marker(self._storage, self._instant, self._partition, name)  # before the file exists
        full = self._storage.full_path(join_partition(self._partition, name))
        if not self._storage.is_object_store:
            self._storage.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
        self._sink = self._storage.fs.open_output_stream(full)
        previous = self.written[-1].slice_log_files if self.written else self._target.log_files
        written = _Written(join_partition(self._partition, name), version, (*previous, name))
        self.written.append(written)
        return written

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None

    def confirm(self) -> None:
        """Fail, deleting the closed files, when the write was aborted or rolled back meanwhile (the markers
        are gone: no commit will name the files)."""
        for w in self.written:
            marker = marker_path(self._instant, self._partition, w.path.rsplit("/", 1)[-1])
            confirm_marked(self._storage, marker, [w.path, *(f.path for f in self.written if f is not w)])

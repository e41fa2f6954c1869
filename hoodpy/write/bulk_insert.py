"""bulk_insert with ``hoodie.bulkinsert.sort.mode=GLOBAL_SORT`` (the other modes:
:mod:`hoodpy.write.bulk_insert_modes`): the driver plans the files, executors write them. Records are cut, per partition and in
record key order, into files of ``records_per_file`` records and one remainder, at key bounds taken from a
sample of the batch; each record is tagged with its file (a broadcast range join), records go to the
task of that file (:func:`file_task_labels`) and are sorted by key, and each task writes one base file per
tag it holds, streamed row group by row group as its sorted rows arrive (:class:`BaseFileWriter`). No
index lookup and no small-file packing, as in Hudi; sorting gives every file a narrow key range, so
bloom-index range pruning works on the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import add_meta_columns, align, finalize, task_ids, write_stats, write_stats_row
from hoodpy.file_group.naming import base_file_name, join_partition, new_file_id, write_token
from hoodpy.errors import InvalidRecordError
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileWriter
from hoodpy.write.decimal_transfer import Shipped, restored_batches
from hoodpy.write.merge import INVALID_KEY, TARGET_FILE_ID, MergeContext
from hoodpy.write.task_placement import partition_labels

BULK_FILE = "_hoodie_bulk_file"  # working column: the planned file a record goes to


@dataclass(frozen=True)
class PlannedFile:
    """Records of ``partition_path`` with ``low <= key < high`` (None: unbounded) go to file ``index``."""

    index: int
    partition_path: str
    low: str | None
    high: str | None


def plan_files(counts: dict[str, int], sample_keys: pa.Table, records_per_file: int) -> list[PlannedFile]:
    """Per partition (``counts``: records each), files of ``records_per_file`` records in key order and one
    remainder; bounds are the keys of ``sample_keys`` (partition path, record key: a random sample of the
    batch) at those ranks. A partition the sample barely saw gets fewer files, never a wrong one: every key
    falls in exactly one range of its partition."""
    by_partition: dict[str, list[str]] = {}
    if sample_keys.num_rows:
        ordered = sample_keys.sort_by([(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")])
        for p, k in zip(ordered.column(PARTITION_PATH).to_pylist(), ordered.column(RECORD_KEY).to_pylist()):
            by_partition.setdefault(p, []).append(k)
    out: list[PlannedFile] = []
    for partition, count in sorted(counts.items()):
        keys = by_partition.get(partition, [])
        bounds: list[str] = []
        for i in range(1, math.ceil(count / records_per_file)):
            if not keys:
                break
            bound = keys[min(len(keys) - 1, round(i * records_per_file / count * len(keys)))]
            if not bounds or bound > bounds[-1]:
                bounds.append(bound)
        for low, high in zip([None, *bounds], [*bounds, None]):
            out.append(PlannedFile(len(out), partition, low, high))
    return out


def file_task_labels(num_files: int, num_tasks: int) -> list[int]:
    """Per planned file (in plan order), the int label that ``repartition(num_tasks, label)`` sends to its task:
    consecutive files share a task, every task gets files (at most ``num_tasks`` of them are used). Placing
    files exactly needs no range partitioning, whose bounds cost a Spark job reading the whole batch."""
    tasks = max(1, min(num_tasks, num_files))
    labels = partition_labels(tasks)
    return [labels[i * tasks // num_files] for i in range(num_files)]


@dataclass
class BulkInsertContext:
    merge: MergeContext
    # Decimal columns the rows bring as doubles (:mod:`decimal_transfer`), made decimal again first.
    decimals: Shipped = ()


def bulk_insert_partition(ctx: BulkInsertContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Write the task's rows as they stream in: each file row group by row group (:class:`BaseFileWriter`),
    so a task holds one row group of rows, not a file's."""
    # Rows come sorted by (planned file, partition path, record key). (A record no planned range holds,
    # possible only if the batch changed between the driver's look at it and this evaluation, has no planned
    # file and is written with the rest of its partition's such rows.)
    yield from stream_base_files(ctx.merge, restored_batches(batches, ctx.decimals), BULK_FILE,
                                 lambda _: new_file_id())


def new_file_groups_partition(ctx: MergeContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """An insert's task for file groups it creates (no base file to merge with, inserts only): rows come
    clustered by (target file id, partition path) and each file group's base file is written as they stream
    in, as :func:`bulk_insert_partition` does, instead of the whole group being gathered first."""
    yield from stream_base_files(ctx, batches, TARGET_FILE_ID, lambda file_id: file_id)


def stream_base_files(ctx: MergeContext, batches: Iterator[pa.RecordBatch], file_column: str,
                      file_id_of: Callable[[object], str]) -> Iterator[pa.RecordBatch]:
    """Write a task's rows, clustered by (``file_column``, partition path), one new base file per run of one
    value of both (file id ``file_id_of(value)``), row group by row group; yields the files' write stats."""
    storage = Storage(ctx.base_uri)
    task_partition, stage_id, attempt_id = task_ids()
    token = write_token(task_partition, stage_id, attempt_id)
    stats = []
    current: OpenFile | None = None
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            table = checked_rows(batch)
            # A run may span batches.
            for start, end, run in _runs(table, file_column):
                if current is not None and current.run != run:
                    stats.append(current.close())
                    current = None
                if current is None:
                    file_id = file_id_of(run[0])
                    name = base_file_name(file_id, token, ctx.instant_time)
                    rel_path = join_partition(run[1], name)
                    current = OpenFile(run, file_id, name, rel_path, time.monotonic(),
                                       BaseFileWriter(storage, rel_path, ctx.options))
                current.write(ctx, table.slice(start, end - start), task_partition)
        if current is not None:
            stats.append(current.close())
            current = None
    finally:
        if current is not None:
            current.writer.discard()
    if stats:
        yield from write_stats(stats).to_batches()


def checked_rows(batch: pa.RecordBatch | pa.Table) -> pa.Table:
    """A write task's rows as a table, refused if it holds a record with a null or empty key."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    if INVALID_KEY in table.column_names:
        # Validation saw another evaluation of the batch; a key that is null here must not be written.
        invalid = pc.sum(table.column(INVALID_KEY).cast(pa.int64())).as_py() or 0
        if invalid:
            raise InvalidRecordError(f"{invalid} record(s) have a null or empty record key")
    return table


@dataclass
class OpenFile:
    """The base file a task is writing: its run key (planned file, partition path) and writer."""

    run: tuple[object, str]
    file_id: str
    name: str
    rel_path: str
    started: float
    writer: BaseFileWriter

    def write(self, ctx: MergeContext, chunk: pa.Table, task_partition: int) -> None:
        """Append ``chunk`` (rows of this file's partition: record key, partition path, data columns)."""
        rows = add_meta_columns(align(chunk, ctx.data_schema), chunk.column(RECORD_KEY).combine_chunks(),
                                self.run[1], ctx.instant_time)
        self.writer.write(finalize(rows, pa.repeat(pa.scalar(True), rows.num_rows), instant_time=ctx.instant_time,
                                   file_name=self.name, task_partition=task_partition))

    def close(self) -> dict:
        size = self.writer.close()
        n = self.writer.num_rows
        return write_stats_row(self.run[1], self.file_id, self.rel_path, prev_commit=None, num_writes=n,
                               num_inserts=n, file_size=size,
                               elapsed_ms=int((time.monotonic() - self.started) * 1000))


def _runs(table: pa.Table, file_column: str) -> list[tuple[int, int, tuple[object, str]]]:
    """[start, end) and (file, partition path) of each run of rows with one ``file_column`` value and partition."""
    files = table.column(file_column).combine_chunks()
    files = pc.fill_null(files.cast(pa.int64()), -1) if pa.types.is_integer(files.type) else pc.fill_null(files, "")
    partitions = table.column(PARTITION_PATH).combine_chunks()
    n = table.num_rows
    first = (files[0].as_py(), partitions[0].as_py())
    if first == (files[n - 1].as_py(), partitions[n - 1].as_py()):  # rows are clustered: one run
        return [(0, n, first)]
    changed = pc.or_(pc.not_equal(files.slice(1), files.slice(0, n - 1)),
                     pc.not_equal(partitions.slice(1), partitions.slice(0, n - 1)))
    starts = [0, *(pc.indices_nonzero(changed).to_numpy() + 1).tolist()]
    return [(s, e, (files[s].as_py(), partitions[s].as_py())) for s, e in zip(starts, [*starts[1:], n])]

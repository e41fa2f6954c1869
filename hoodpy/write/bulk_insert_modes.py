"""bulk_insert without a global sort: Hudi's ``hoodie.bulkinsert.sort.mode`` NONE, PARTITION_SORT and the
PARTITION_PATH_REPARTITION modes (GLOBAL_SORT is :mod:`hoodpy.write.bulk_insert`'s planned files).

As Hudi's row writer (BulkInsertDataInternalWriterHelper) does, each Spark task writes the rows it holds as
they come: one open file per table partition path, rolled to a new file group once it holds a file's worth
(``records_per_file``: max file size over the bytes per record, as the planned path sizes files; Hudi's handle
rolls on the parquet writer's byte count, which pyarrow does not expose before a row group is flushed). On a
first load each task learns the bytes per record by encoding its own first rows, so the batch is not read a
second time to sample it. File ids are the task's random prefix plus a counter (``<uuid>-0``, ``<uuid>-1``,
...) and every file of a task has the task's write token, as in Hudi. NONE moves no row between tasks: no
sample of keys, no range join, no shuffle; files' key ranges overlap, so bloom-index range pruning prunes less
later.
"""

from __future__ import annotations

import re
import time
import warnings
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PythonException
from pyspark.sql import DataFrame

from hoodpy.arrow_rows import WRITE_STATS_DDL, task_ids, write_stats
from hoodpy.file_group.naming import base_file_name, join_partition, write_token
from hoodpy.errors import InvalidRecordError
from hoodpy.keygen import KeyGenerator
from hoodpy.meta_fields import COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileWriter
from hoodpy.write.bucket_assignment import SizingConfig, with_measured_record_size
from hoodpy.write.bulk_insert import OpenFile, checked_rows
from hoodpy.write.decimal_transfer import Shipped, restored
from hoodpy.write.merge import INVALID_KEY, OP, MergeContext
from hoodpy.write.record_size import encoded_record_size
from hoodpy.write.task_keys import keys_in_task, record_keys

NONE = "NONE"
GLOBAL_SORT = "GLOBAL_SORT"
PARTITION_SORT = "PARTITION_SORT"
PARTITION_PATH_REPARTITION = "PARTITION_PATH_REPARTITION"
PARTITION_PATH_REPARTITION_AND_SORT = "PARTITION_PATH_REPARTITION_AND_SORT"
SORT_MODES = (NONE, GLOBAL_SORT, PARTITION_SORT, PARTITION_PATH_REPARTITION, PARTITION_PATH_REPARTITION_AND_SORT)
_SORTING = (GLOBAL_SORT, PARTITION_SORT, PARTITION_PATH_REPARTITION_AND_SORT)


def sorts_keys(mode: str) -> bool:
    """Whether a task's rows of one partition path reach its files in record key order (the record size
    sample is then encoded sorted, as the files are)."""
    return mode in _SORTING


def arranged(rows: DataFrame, mode: str, parallelism: int) -> DataFrame:
    """``rows`` placed and ordered as ``mode`` (not GLOBAL_SORT) wants them in the write tasks."""
    if mode in (PARTITION_PATH_REPARTITION, PARTITION_PATH_REPARTITION_AND_SORT):
        # 0: Spark's shuffle partition count (``DataFrame.rdd`` is not there over Spark Connect)
        rows = rows.repartition(parallelism, PARTITION_PATH) if parallelism > 0 else rows.repartition(PARTITION_PATH)
    if mode in (PARTITION_SORT, PARTITION_PATH_REPARTITION_AND_SORT):
        rows = rows.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
    return rows


# A task with no record size to go by encodes its first rows, up to this many (or TASK_SAMPLE_BYTES of Arrow
# rows), to learn one: a second read of the batch on the driver (a Spark job) to sample it costs more.
TASK_SAMPLE_ROWS = 50_000
TASK_SAMPLE_BYTES = 32 << 20


@dataclass(frozen=True)
class RollingContext:
    merge: MergeContext
    # Records a file holds; None: each task measures its bytes per record on its first rows and completes
    # ``sizing`` (record size unset) with it, each file's bloom filter (``bloom_overhead``) counted besides.
    records_per_file: int | None
    sizing: SizingConfig | None = None
    bloom_overhead: tuple[tuple[int | None, int], ...] = ()
    # Set when rows come without their record key: the task makes the keys with it (:mod:`task_keys`).
    keygen: KeyGenerator | None = None
    # Set when rows come without their partition path: every row's (an unpartitioned table's "").
    partition_path: str | None = None
    # Decimal columns the rows bring as doubles (:mod:`decimal_transfer`), made decimal again first.
    decimals: Shipped = ()

    def checked_rows(self, rows: pa.Table) -> pa.Table:
        """A task's rows with their record keys, refused if one is null or empty."""
        if self.keygen is None:
            return restored(checked_rows(rows), self.decimals)
        table = restored(rows, self.decimals)
        keys, invalid = record_keys(self.keygen, table)
        bad = pc.sum(invalid.cast(pa.int64())).as_py() or 0
        if bad:  # validation saw another evaluation of the batch; a key that is null here must not be written
            raise InvalidRecordError(f"{bad} record(s) have a null or empty record key")
        return table.append_column(RECORD_KEY, keys)

    def measured_records_per_file(self, first_rows: pa.Table) -> int:
        """Records per file, by the bytes per record of ``first_rows`` (a task's first rows, as they arrive)
        encoded as their files will be."""
        m = self.merge
        if self.partition_path is not None:
            first_rows = first_rows.append_column(
                PARTITION_PATH, pa.repeat(pa.scalar(self.partition_path, pa.string()), first_rows.num_rows))
        size = encoded_record_size(first_rows, m.data_schema, m.options, sort=False, instant_time=m.instant_time)
        return with_measured_record_size(self.sizing, size, self.bloom_overhead).records_per_new_file


def task_columns(rows: DataFrame, mode: str, keygen: KeyGenerator, data_schema: pa.Schema,
                 ) -> tuple[DataFrame, KeyGenerator | None, str | None]:
    """``rows`` as the write tasks need them, the key generator the tasks make keys with (None: the rows keep
    their record key) and the partition path of every row (None: the rows keep theirs): no operation column
    (every row is an insert by now); where the tasks can make them (:func:`task_keys.keys_in_task`) and no sort
    needs them first, no record key or its check, which the JVM would otherwise build and move per row; and
    for an unpartitioned table written in arrival order, no partition path (the same "" on every row)."""
    rows = rows.drop(OP)
    partition_path = None
    if mode == NONE and not keygen.is_partitioned:
        rows, partition_path = rows.drop(PARTITION_PATH), ""
    if sorts_keys(mode) or not keys_in_task(keygen, data_schema):
        return rows, None, partition_path
    return rows.drop(RECORD_KEY, INVALID_KEY), keygen, partition_path


def checks_in_tasks(mode: str, ordering_field: str | None, combines: bool) -> bool:
    """Whether the write tasks alone check the batch (no Spark job reads it first to count and validate it):
    every mode but GLOBAL_SORT writes without counts, and its tasks refuse a null or empty record key
    (:meth:`RollingContext.checked_rows`). Not with an ordering field (whose null values the validation job
    refuses) nor when combining (a shuffle first). On SF1 lineitem the job read the key columns of 6M rows:
    two Spark jobs (AQE), ~1-1.7 JVM CPU s and ~2 s of wall before the write."""
    return mode != GLOBAL_SORT and ordering_field is None and not combines


def write_in_place(rows: DataFrame, mode: str, parallelism: int, ctx: RollingContext,
                   key_fields: tuple[str, ...] | list[str] = ()) -> list:
    """Run the write tasks over ``rows`` arranged for ``mode``; the written files' stats rows. A task that
    refuses a record fails the write with :class:`InvalidRecordError` (the caller aborts the instant, which
    removes the files written)."""
    try:
        return arranged(rows, mode, parallelism).mapInArrow(
            lambda it: rolling_bulk_insert_partition(ctx, it), WRITE_STATS_DDL).collect()
    except PythonException as e:
        refused = invalid_record_in_task(e, key_fields)
        if refused is None:
            raise
        raise refused from e


_TASK_REFUSAL = re.compile(r"InvalidRecordError: ([^\n]*)")


def invalid_record_in_task(error: Exception, key_fields: tuple[str, ...] | list[str] = ()) -> InvalidRecordError | None:
    """The :class:`InvalidRecordError` a write task raised, as Spark reports it (a PythonException whose text
    holds the task's traceback), for the driver to raise; None for any other failure."""
    found = _TASK_REFUSAL.search(str(error))
    if found is None:
        return None
    reason = found.group(1).strip()
    if key_fields and "record key" in reason:
        reason += f" (fields {', '.join(key_fields)}; counted in one write task)"
    return InvalidRecordError(reason)


def rolling_bulk_insert_partition(ctx: RollingContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A task's rows, in arrival order, into files of at most ``records_per_file`` records per partition path;
    yields the files' write stats."""
    m = ctx.merge
    storage = Storage(m.base_uri)
    task_partition, stage_id, attempt_id = task_ids()
    token = write_token(task_partition, stage_id, attempt_id)
    prefix = str(uuid.uuid4())
    open_files: dict[str, OpenFile] = {}
    stats: list[dict] = []
    written = 0
    records_per_file = ctx.records_per_file

    def open_file(partition: str) -> OpenFile:
        nonlocal written
        file_id = f"{prefix}-{written}"
        written += 1
        name = base_file_name(file_id, token, m.instant_time)
        rel_path = join_partition(partition, name)
        # Every row of the file has the commit time, partition path and file name: written as constants.
        constants = {COMMIT_TIME: m.instant_time, PARTITION_PATH: partition, FILE_NAME: name}
        return OpenFile((None, partition), file_id, name, rel_path, time.monotonic(),
                        BaseFileWriter(storage, rel_path, m.options, constants=constants))

    def sized(tables: Iterator[pa.Table]) -> Iterator[pa.Table]:
        """``tables``, the first ones held back until ``records_per_file`` is known."""
        nonlocal records_per_file
        held: list[pa.Table] = []
        for table in tables:
            if records_per_file is not None:
                yield table
                continue
            held.append(table)
            if sum(t.num_rows for t in held) >= TASK_SAMPLE_ROWS or \
                    sum(t.nbytes for t in held) >= TASK_SAMPLE_BYTES:
                records_per_file = ctx.measured_records_per_file(pa.concat_tables(held))
                yield from held
                held = []
        if held:
            records_per_file = ctx.measured_records_per_file(pa.concat_tables(held))
            yield from held

    try:
        for table in sized(ctx.checked_rows(rows) for rows in coalesced(batches)):
            by_partition = [(ctx.partition_path, table)] if ctx.partition_path is not None else _by_partition(table)
            for partition, part in by_partition:
                start = 0
                while start < part.num_rows:
                    current = open_files.get(partition)
                    if current is None:
                        current = open_files[partition] = open_file(partition)
                    take = min(part.num_rows - start, records_per_file - current.writer.num_rows)
                    current.write(m, part.slice(start, take), task_partition)
                    start += take
                    if current.writer.num_rows >= records_per_file:  # full: roll, as Hudi's canWrite does
                        stats.append(open_files.pop(partition).close())
        while open_files:
            stats.append(open_files.pop(next(iter(open_files))).close())
    finally:
        for f in open_files.values():
            f.writer.discard()
    if stats:
        yield from write_stats(stats).to_batches()


# Rows a write task takes at once. Spark hands it Arrow batches of spark.sql.execution.arrow.maxRecordsPerBatch
# (10,000) rows; every step (keys, decimals, meta columns, bloom filter, row-group bookkeeping) costs a little
# per call besides per row: taken 50,000 at a time, a lineitem task costs ~18% less CPU. The bytes bound keeps
# wide rows from piling up.
TASK_BATCH_ROWS = 50_000
TASK_BATCH_BYTES = 16 << 20


def coalesced(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
    """``batches`` (empty ones dropped) as tables of about ``TASK_BATCH_ROWS`` rows, in order, no rows copied."""
    held: list[pa.RecordBatch] = []
    rows = nbytes = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        held.append(batch)
        rows += batch.num_rows
        nbytes += batch.nbytes
        if rows >= TASK_BATCH_ROWS or nbytes >= TASK_BATCH_BYTES:
            yield pa.Table.from_batches(held)
            held, rows, nbytes = [], 0, 0
    if held:
        yield pa.Table.from_batches(held)


def _by_partition(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """The rows of each partition path in ``table``, each in arrival order (one slice, no copy, when the
    batch holds one partition: always so for an unpartitioned table)."""
    partitions = table.column(PARTITION_PATH)
    first = partitions[0].as_py()
    if pc.all(pc.equal(partitions, first)).as_py():
        return [(first, table)]
    order = pc.sort_indices(table, [(PARTITION_PATH, "ascending")])  # stable: arrival order within a path
    ordered = table.take(order)
    column = ordered.column(PARTITION_PATH).combine_chunks()
    n = ordered.num_rows
    changed = pc.not_equal(column.slice(1), column.slice(0, n - 1))
    starts = [0, *(pc.indices_nonzero(changed).to_numpy() + 1).tolist()]
    return [(column[s].as_py(), ordered.slice(s, e - s)) for s, e in zip(starts, [*starts[1:], n])]


USER_SORT_COLUMNS = "hoodie.bulkinsert.user.defined.partitioner.sort.columns"


def warn_unhonoured_sort_columns(config) -> None:
    """Hudi sorts by these columns only through a user-defined partitioner class, which hoodpy has not: say so
    rather than ignore the key silently."""
    if USER_SORT_COLUMNS in set(config):
        warnings.warn(f"{USER_SORT_COLUMNS} is not supported by hoodpy and is ignored; "
                      "use hoodie.bulkinsert.sort.mode (or clustering) to order the written files", stacklevel=3)

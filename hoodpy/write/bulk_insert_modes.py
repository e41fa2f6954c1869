"""bulk_insert without a global sort: Hudi's ``hoodie.bulkinsert.sort.mode`` NONE, PARTITION_SORT and the
PARTITION_PATH_REPARTITION modes (GLOBAL_SORT is :mod:`hoodpy.write.bulk_insert`'s planned files).

As Hudi's row writer (BulkInsertDataInternalWriterHelper) does, each Spark task writes the rows it holds as
they come: one open file per table partition path, rolled to a new file group once it holds a file's worth
(``records_per_file``: max file size over the measured bytes per record, as the planned path sizes files;
Hudi's handle rolls on the parquet writer's byte count, which pyarrow does not expose before a row group is
flushed). File ids are the task's random prefix plus a counter (``<uuid>-0``, ``<uuid>-1``, ...) and every
file of a task has the task's write token, as in Hudi. NONE moves no row between tasks: no sample of keys,
no range join, no shuffle; files' key ranges overlap, so bloom-index range pruning prunes less later.
"""

from __future__ import annotations

import time
import warnings
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from hoodpy.arrow_rows import WRITE_STATS_DDL, task_ids, write_stats
from hoodpy.file_group.naming import base_file_name, join_partition, write_token
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileWriter
from hoodpy.write.bulk_insert import OpenFile, checked_rows
from hoodpy.write.merge import MergeContext

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


@dataclass(frozen=True)
class RollingContext:
    merge: MergeContext
    records_per_file: int


def write_in_place(rows: DataFrame, mode: str, parallelism: int, ctx: RollingContext) -> list:
    """Run the write tasks over ``rows`` arranged for ``mode``; the written files' stats rows."""
    return arranged(rows, mode, parallelism).mapInArrow(
        lambda it: rolling_bulk_insert_partition(ctx, it), WRITE_STATS_DDL).collect()


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

    def open_file(partition: str) -> OpenFile:
        nonlocal written
        file_id = f"{prefix}-{written}"
        written += 1
        name = base_file_name(file_id, token, m.instant_time)
        rel_path = join_partition(partition, name)
        return OpenFile((None, partition), file_id, name, rel_path, time.monotonic(),
                         BaseFileWriter(storage, rel_path, m.options))

    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            table = checked_rows(batch)
            for partition, part in _by_partition(table):
                start = 0
                while start < part.num_rows:
                    current = open_files.get(partition)
                    if current is None:
                        current = open_files[partition] = open_file(partition)
                    take = min(part.num_rows - start, ctx.records_per_file - current.writer.num_rows)
                    current.write(m, part.slice(start, take), task_partition)
                    start += take
                    if current.writer.num_rows >= ctx.records_per_file:  # full: roll, as Hudi's canWrite does
                        stats.append(open_files.pop(partition).close())
        while open_files:
            stats.append(open_files.pop(next(iter(open_files))).close())
    finally:
        for f in open_files.values():
            f.writer.discard()
    if stats:
        yield from write_stats(stats).to_batches()


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

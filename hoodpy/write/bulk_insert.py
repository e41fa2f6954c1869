"""bulk_insert in executors: records arrive range-partitioned and sorted by (partition path, record key);
each task cuts its rows into as few new file groups of at most ``records_per_file`` rows as it can, of
equal size. No index lookup and
no small-file packing, as in Hudi; sorting gives every file a narrow key range, so bloom-index range
pruning works on the result.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import add_meta_columns, align, finalize, task_ids, write_stats, write_stats_row
from hoodpy.file_group.naming import base_file_name, join_partition, new_file_id, write_token
from hoodpy.errors import InvalidRecordError
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.merge import INVALID_KEY, MergeContext


# Share of a file's records each task is planned to get (see Writer._bulk_insert_parallelism).
BULK_INSERT_TASK_FILL = 0.9


@dataclass
class BulkInsertContext:
    merge: MergeContext
    records_per_file: int


def bulk_insert_partition(ctx: BulkInsertContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from hoodpy.write.base_file import write_base_file

    batches = list(batches)
    if not batches or not sum(b.num_rows for b in batches):
        return
    table = pa.Table.from_batches(batches)
    if INVALID_KEY in table.column_names:
        # Validation saw another evaluation of the batch; a key that is null here must not be written.
        invalid = pc.sum(table.column(INVALID_KEY).cast(pa.int64())).as_py() or 0
        if invalid:
            raise InvalidRecordError(f"{invalid} record(s) have a null or empty record key")
    storage = Storage(ctx.merge.base_uri)
    task_partition, stage_id, attempt_id = task_ids()
    token = write_token(task_partition, stage_id, attempt_id)
    partitions = table.column(PARTITION_PATH).combine_chunks()
    stats = []
    # Rows of one partition path are contiguous because the input is sorted by it.
    for partition_path in pc.unique(partitions).to_pylist():
        part = table.filter(pc.equal(partitions, partition_path))
        # As few files as the size allows, of equal row counts: no nearly empty remainder file.
        num_files = math.ceil(part.num_rows / ctx.records_per_file)
        per_file = math.ceil(part.num_rows / num_files)
        for start in range(0, part.num_rows, per_file):
            started = time.monotonic()
            chunk = part.slice(start, per_file)
            file_id = new_file_id()
            name = base_file_name(file_id, token, ctx.merge.instant_time)
            rel_path = join_partition(partition_path, name)
            rows = add_meta_columns(align(chunk, ctx.merge.data_schema), chunk.column(RECORD_KEY).combine_chunks(),
                              partition_path, ctx.merge.instant_time)
            rows = finalize(rows, pa.array([True] * rows.num_rows), instant_time=ctx.merge.instant_time,
                            file_name=name, task_partition=task_partition)
            size = write_base_file(storage, rel_path, rows, ctx.merge.options)
            stats.append(write_stats_row(partition_path, file_id, rel_path, prev_commit=None,
                                         num_writes=rows.num_rows, num_inserts=rows.num_rows, file_size=size,
                                         elapsed_ms=int((time.monotonic() - started) * 1000)))
    yield from write_stats(stats).to_batches()

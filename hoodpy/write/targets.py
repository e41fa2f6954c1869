"""Target file groups decided on the driver, attached to the records in the JVM.

When the batch's keys are on the driver (bloom index, see ``Writer._driver_lookup``), every record's target
is known before the merge: its located file group, or for an insert the bucket it hashes into. The driver
writes the (record key, partition path) -> (target file id, merge bin) table as one parquet file into the
instant's temporary folder (``.hoodie/.temp/<instant>/``, as Hudi keeps its markers) and Spark joins the
records with it (broadcast) and places each target's records in its own merge task (:mod:`task_placement`).
The records never pass through Python before the merge: an Arrow round trip of the whole batch through a
Python worker costs more than the join and the shuffle together (360k TPC-H rows: ~1.8 s against ~0.7 s).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from hoodpy.read.file_scan import read_parquet_files
from hoodpy.index.murmur_hash import MurmurBatch
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.log_append import OneTarget, each_file_group
from hoodpy.write.merge import TARGET_FILE_ID, MergeContext, merge_file_group
from hoodpy.write.bucket_assignment import HASH_SPACE
from hoodpy.write.decimal_transfer import Shipped, restored_batches

TARGETS_FILE = "targets.parquet"
MERGE_BIN = "_hoodie_merge_bin"  # the Spark partition label of a target's merge task
# Above this many keys the targets table is not forced into a broadcast (Spark picks the join).
BROADCAST_MAX_KEYS = 4_000_000
TARGETS_SCHEMA = StructType([StructField(RECORD_KEY, StringType()), StructField(PARTITION_PATH, StringType()),
                             StructField(TARGET_FILE_ID, StringType()), StructField(MERGE_BIN, IntegerType())])


def key_hashes(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A position in ``[0, HASH_SPACE)`` per record key (murmur of its UTF-8 bytes), for spreading inserts
    over buckets in proportion to their ``hash_ranges``."""
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks()
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    binary = keys.cast(pa.large_binary())
    _, offsets_buf, data_buf = binary.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[binary.offset:binary.offset + len(binary) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    hashed = MurmurBatch.from_offsets(offsets, data).hash32(0).view(np.uint32)
    return (hashed % np.uint32(HASH_SPACE)).astype(np.int64)


def assign_by_ranges(keys: pa.Array | pa.ChunkedArray, partitions: pa.Array | pa.ChunkedArray,
                     ranges: list[tuple[str, str, int, int]]) -> pa.Array:
    """The file id of the bucket each insert falls into: ``ranges`` are ``hash_ranges`` (partition, file id,
    low, high), covering ``[0, HASH_SPACE)`` of every partition the inserts name."""
    if not ranges:
        return pa.nulls(len(keys), pa.string())
    ordered = sorted(ranges, key=lambda r: (r[0], r[2]))
    names = pa.array(sorted({r[0] for r in ordered}), pa.string())
    index_of = {p: i for i, p in enumerate(names.to_pylist())}
    # One sorted axis for all partitions: partition index * HASH_SPACE + hash.
    lows = np.array([index_of[p] * HASH_SPACE + low for p, _, low, _ in ordered], dtype=np.int64)
    file_ids = pa.array([r[1] for r in ordered], pa.string())
    part_index = pc.index_in(partitions, value_set=names)
    if part_index.null_count:
        missing = pc.filter(partitions, pc.is_null(part_index))[0].as_py()
        raise AssertionError(f"no insert bucket planned for partition {missing!r}")
    index = part_index.to_numpy(zero_copy_only=False).astype(np.int64)
    # A partition with one bucket takes all its inserts whatever their hash: only keys of partitions the plan
    # spreads over several buckets are hashed (SF 1's 360k keys into one file: 0.7 s of driver CPU saved).
    spread = np.bincount([index_of[r[0]] for r in ordered], minlength=len(index_of)) > 1
    hashes = np.zeros(len(index), dtype=np.int64)
    hashed = spread[index]
    if hashed.all():
        hashes = key_hashes(keys)
    elif hashed.any():
        rows = np.flatnonzero(hashed)
        hashes[rows] = key_hashes(keys.take(pa.array(rows)))
    return file_ids.take(pa.array(np.searchsorted(lows, index * HASH_SPACE + hashes, "right") - 1))


def target_table(keys: pa.Array, partitions: pa.Array, targets: pa.Array, bins: pa.Array) -> pa.Table:
    """The (record key, partition path) -> (target file id, merge bin label) table the records are joined with."""
    return pa.table({
        RECORD_KEY: keys.cast(pa.string()),
        PARTITION_PATH: partitions.cast(pa.string()),
        TARGET_FILE_ID: targets.cast(pa.string()),
        MERGE_BIN: bins.cast(pa.int32()),
    })


def write_targets(storage: Storage, temp_dir: str, targets: pa.Table) -> str:
    """``targets`` written as the instant's targets file; returns its path relative to the table."""
    rel = f"{temp_dir}/{TARGETS_FILE}"
    sink = io.BytesIO()
    pq.write_table(targets, sink, compression="snappy")
    storage.write_bytes(rel, sink.getvalue())
    return rel


def with_targets(rows: pa.Table, targets: pa.Table) -> pa.Table:
    """``rows`` with the TARGET_FILE_ID of their (record key, partition path) in ``targets``, in their order;
    rows without a target (deletes of keys the table lacks) are dropped, as the inner join in Spark drops them."""
    keys = [RECORD_KEY, PARTITION_PATH]
    key_types = [rows.schema.field(k).type for k in keys]
    right = pa.table([targets.column(k).cast(t) for k, t in zip(keys, key_types)]
                     + [targets.column(TARGET_FILE_ID)], names=[*keys, TARGET_FILE_ID])
    left = rows.select(keys).append_column("_row", pa.array(np.arange(rows.num_rows, dtype=np.int64)))
    joined = left.join(right, keys=keys, join_type="inner", use_threads=False)
    order = pc.sort_indices(joined.column("_row"))  # the join does not keep the rows' order
    file_ids = joined.column(TARGET_FILE_ID).take(order)
    if joined.num_rows != rows.num_rows:
        rows = rows.take(joined.column("_row").take(order))
    return rows.append_column(TARGET_FILE_ID, file_ids.cast(pa.string()))


def targeted_task(write: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], base_uri: str, rel: str,
                  batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One task holding the whole batch (``mapInArrow`` over its coalesced partitions): the rows joined with
    the targets file ``rel`` here, in Arrow, then written by ``write`` (a deltacommit's
    :func:`hoodpy.write.log_append.write_partition`). Spares Spark the targets' broadcast job and the hash join."""
    batches = list(batches)
    if not batches:
        return iter(())
    targets = pq.read_table(pa.BufferReader(Storage(base_uri).read_bytes(rel)))
    rows = with_targets(pa.Table.from_batches(batches), targets)
    return write(iter(rows.to_batches()))


def attach_targets(spark: SparkSession, records: DataFrame, targets: pa.Table, storage: Storage, temp_dir: str,
                   num_bins: int, schema: StructType = TARGETS_SCHEMA) -> DataFrame:
    """``records`` joined with their targets (records without one, deletes of keys the table lacks, are
    dropped), in ``num_bins`` partitions: each merge bin in its own. ``schema``: the targets table's (its first
    two columns are the join keys). The merge tasks split their rows by file group themselves (:func:`merge_bin`,
    a deltacommit's :func:`hoodpy.write.log_append.write_partition`), so a single bin is the records' partitions
    gathered into one task, in arrival order, without a shuffle."""
    rel = write_targets(storage, temp_dir, targets)
    # Spark's own reader where it reaches the storage; pyarrow in a task where it has no connector (s3a).
    table = read_parquet_files(spark, storage, [rel], schema)
    if targets.num_rows <= BROADCAST_MAX_KEYS:
        table = F.broadcast(table)
    joined = records.join(table, on=[RECORD_KEY, PARTITION_PATH], how="inner")
    if num_bins <= 1:
        return joined.coalesce(1)  # a write and read of the whole batch fewer than a shuffle (SF 1: 40 MB, ~1 CPU s)
    return joined.repartition(max(1, num_bins), MERGE_BIN)


def merge_bin(ctx: MergeContext, batches: Iterator[pa.RecordBatch], decimals: Shipped = (),
              target: OneTarget | None = None) -> Iterator[pa.RecordBatch]:
    """One copy-on-write merge task (``mapInArrow`` over the records partitioned by :data:`MERGE_BIN`): the
    rows of a bin, split by file group here and merged group by group (:func:`merge_file_group`). Spark's
    ``groupBy().applyInArrow`` would sort the whole batch by group in the JVM first; a bin holds whole file
    groups already, so one pass of its rows in Arrow groups them. ``decimals``: the decimal columns the rows
    bring as doubles (:func:`hoodpy.write.decimal_transfer.ship`), made decimal again first. ``target``: the one
    file group of every row, when the rows come without it (:func:`each_file_group`)."""
    return each_file_group(restored_batches(batches, decimals), partial(merge_file_group, ctx), target)

"""Target file groups decided on the driver, attached to the records in the executors.

When the batch's keys are on the driver (bloom index, see ``Writer._driver_lookup``), every record's target
is known before the merge: its located file group, or for an insert the bucket it hashes into. The driver
builds one (record key, partition path) -> target table and ships it inside a ``mapInArrow`` closure (Spark
broadcasts a large closure once); each task attaches targets with an Arrow join. Compared with broadcast
joins against DataFrames made from driver data, this runs no extra Spark job, reads the batch once and
never converts the table into JVM rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sql_ext.index.murmur_hash import MurmurBatch
from sql_ext.write.merge import PARTITION_PATH, RECORD_KEY, TARGET_FILE_ID
from sql_ext.write.partitioner import HASH_SPACE

_ROW = "_hoodie_row"
_MAX_BATCH_ROWS = 10000  # Spark's spark.sql.execution.arrow.maxRecordsPerBatch default


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
    position = part_index.to_numpy(zero_copy_only=False).astype(np.int64) * HASH_SPACE + key_hashes(keys)
    return file_ids.take(pa.array(np.searchsorted(lows, position, "right") - 1))


def target_table(keys: pa.Array, partitions: pa.Array, targets: pa.Array) -> pa.Table:
    """The (record key, partition path, target file id) table :func:`attach_targets` joins with; dictionary
    encoded where values repeat, so the closure that carries it stays small."""
    return pa.table({
        RECORD_KEY: keys.cast(pa.string()),
        PARTITION_PATH: pc.dictionary_encode(partitions.cast(pa.string())),
        TARGET_FILE_ID: pc.dictionary_encode(targets.cast(pa.string())),
    })


def attach_targets(targets: pa.Table, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: each record with its target file group appended; records without one (deletes
    of keys the table lacks) are dropped."""
    plain = targets.cast(pa.schema([pa.field(RECORD_KEY, pa.string()), pa.field(PARTITION_PATH, pa.string()),
                                    pa.field(TARGET_FILE_ID, pa.string())]))
    # One join per task, not per Arrow batch: the join hashes the whole target table each time.
    collected = list(batches)
    if not collected:
        return
    records = pa.Table.from_batches(collected)
    # Join the keys alone (with the row number) and take the rows: Arrow joins reject nested payloads.
    probe = pa.table({RECORD_KEY: records.column(RECORD_KEY).cast(pa.string()),
                      PARTITION_PATH: records.column(PARTITION_PATH).cast(pa.string()),
                      _ROW: pa.array(np.arange(records.num_rows, dtype=np.int64))})
    # Back in batch order: Arrow's join does not keep it, and uncombined repeats of a key rely on it.
    hits = probe.join(plain, keys=[RECORD_KEY, PARTITION_PATH], join_type="inner").sort_by(_ROW)
    if hits.num_rows == 0:
        return
    out = records.take(hits.column(_ROW))
    out = out.append_column(pa.field(TARGET_FILE_ID, pa.string()), hits.column(TARGET_FILE_ID))
    yield from out.to_batches(max_chunksize=_MAX_BATCH_ROWS)

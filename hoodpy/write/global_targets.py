"""Targets of a global index's upsert decided on the driver (RECORD_INDEX, GLOBAL_BLOOM).

A global index finds a key in whichever partition holds it. With the batch's keys on the driver (as for the
bloom index, see :mod:`hoodpy.write.targets`) and located there (the record index's shards read by threads, or
the bloom index's footers and key columns), each record's target is known before the merge: no Spark join of
the batch against the located keys, no job counting its inserts, no shuffle grouping it by target.

* a key found where the record names it (or a delete of it, or any key when moves are off) updates its file
  group, in the partition the index found it in;
* a key found in another partition, with ``hoodie.*.update.partition.path`` on, moves (as in Hudi): a delete of
  it in its old file group (no ordering value: the old copy goes whatever its own) and an insert where the
  record now belongs;
* a key not found is an insert; a delete of it has nothing to delete.

The records are joined with the targets in the JVM on (record key, the record's partition path); a moving key
has two target rows, its old side marked, so its record leaves the join twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID
from hoodpy.write.targets import MERGE_BIN, TARGETS_SCHEMA

TARGET_PARTITION = "_hoodie_target_partition"  # where the record is written (PARTITION_PATH: where it is named)
MOVED_OUT = "_hoodie_moved_out"  # the old side of a moving key: a delete in the partition it leaves
GLOBAL_TARGETS_SCHEMA = StructType([*TARGETS_SCHEMA.fields, StructField(TARGET_PARTITION, StringType()),
                                    StructField(MOVED_OUT, BooleanType())])


@dataclass
class GlobalSplit:
    """The batch's unique keys by what the write does with them."""

    # Keys found: (RECORD_KEY, PARTITION_PATH as the batch names it, LOC_PARTITION, LOC_FILE_ID, MOVED_OUT).
    located: pa.Table
    # Keys to insert (new ones and moving keys' new side): (RECORD_KEY, PARTITION_PATH).
    new: pa.Table


def split(keys: pa.Table, located: pa.Table, *, moves: bool) -> GlobalSplit:
    """``keys`` (RECORD_KEY, PARTITION_PATH, OP; unique keys) against ``located`` (RECORD_KEY, LOC_PARTITION,
    LOC_FILE_ID: where the index found them); ``moves``: a key found in another partition moves."""
    joined = keys.join(located, keys=RECORD_KEY, join_type="left outer")
    found = pc.is_valid(joined.column(LOC_FILE_ID))
    upsert = pc.equal(joined.column(OP), OP_UPSERT)
    if moves:
        moving = pc.and_(pc.and_(found, upsert), pc.and_(
            pc.is_valid(joined.column(PARTITION_PATH)),
            pc.not_equal(joined.column(PARTITION_PATH), joined.column(LOC_PARTITION))))
        moving = pc.fill_null(moving, False)
    else:
        moving = pc.and_(found, pa.scalar(False))
    hit = joined.filter(found)
    hit = pa.table({RECORD_KEY: hit.column(RECORD_KEY), PARTITION_PATH: hit.column(PARTITION_PATH),
                    LOC_PARTITION: hit.column(LOC_PARTITION), LOC_FILE_ID: hit.column(LOC_FILE_ID),
                    MOVED_OUT: pc.filter(moving, found)})
    new = joined.filter(pc.or_(pc.and_(pc.invert(found), upsert), moving)).select([RECORD_KEY, PARTITION_PATH])
    return GlobalSplit(hit, new)


def global_target_table(keys: Iterable[pa.Array], named: Iterable[pa.Array], partitions: pa.Array,
                        file_ids: pa.Array, bins: pa.Array, moved_out: Iterable[pa.Array]) -> pa.Table:
    """The targets table of GLOBAL_TARGETS_SCHEMA: per target row its record key, the partition the batch names
    it in, its target partition, file id and merge bin, and whether it is a moving key's old side."""
    def joined(arrays: Iterable[pa.Array], type_: pa.DataType) -> pa.Array:
        return pa.concat_arrays([(a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a).cast(type_)
                                 for a in arrays])
    return pa.table({
        RECORD_KEY: joined(keys, pa.string()),
        PARTITION_PATH: joined(named, pa.string()),
        TARGET_FILE_ID: file_ids.cast(pa.string()),
        MERGE_BIN: bins.cast(pa.int32()),
        TARGET_PARTITION: partitions.cast(pa.string()),
        MOVED_OUT: joined(moved_out, pa.bool_()),
    })


def settle(joined: DataFrame, ordering_fields: Iterable[str]) -> DataFrame:
    """Records joined with their global targets, as the merge takes them: each in its target partition, a
    moving key's old side a delete without an ordering value."""
    moved_out = F.col(MOVED_OUT)
    out = joined.withColumn(PARTITION_PATH, F.col(TARGET_PARTITION)).withColumn(
        OP, F.when(moved_out, F.lit(OP_DELETE)).otherwise(F.col(OP)))
    for field in ordering_fields:
        out = out.withColumn(field, F.when(moved_out, F.lit(None)).otherwise(F.col(field))
                             .cast(joined.schema[field].dataType))
    return out.drop(TARGET_PARTITION, MOVED_OUT)

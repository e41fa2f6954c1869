"""RECORD_INDEX index: incoming keys are looked up in the metadata table's record_index partition
(:mod:`hoodpy.metadata_table.record_index`) instead of in base files' footers and key columns.

The keys are sharded as the partition is (Java's String.hashCode of the key, modulo its file group count);
each shard holding incoming keys has its latest slice read for those keys only (the base HFile's blocks that
can hold them, :func:`~hoodpy.metadata_table.record_index.read_slice`). A batch of at most
``hoodie.record.index.driver.lookup.max.keys`` records is looked up on the driver: its keys are collected
(one Spark job over the key column) and the shards read by threads, with no shuffle; a larger batch is
sharded in Spark, one task per shard. The index is global: a key is found in whichever partition holds it
(Hudi's RECORD_INDEX).

A table whose record_index is not built yet (the first write asking for it: the partition is built when that
write completes) is looked up as GLOBAL_SIMPLE would, so that the write still finds every existing key.
"""

from __future__ import annotations

import logging

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from hoodpy.config.properties import load_table_properties
from hoodpy.file_group.file_group import BaseFile
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION, LOCATED_DDL
from hoodpy.index.simple import SimpleIndex
from hoodpy.keygen import KeyGenerator
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.metadata_table.reader import ValidInstants
from hoodpy.metadata_table.record_index import Location, RecordIndex, has_partition, read_slice, shards_of
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)
_SHARD = "_hoodie_index_shard"
_SHARDED_DDL = f"{RECORD_KEY} string, {_SHARD} int"


def _with_shard(count: int):
    def add(batches):
        for batch in batches:
            keys = batch.column(0).fill_null("")  # a null key hashes as no key (its row is dropped later)
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), pa.array(shards_of(keys, count), pa.int32())], [RECORD_KEY, _SHARD])
    return add


def _lookup_shard(meta_uri: str, slices: list[list[str | None]], valid: ValidInstants,
                  live: frozenset[tuple[str, str]], utc: bool):
    def lookup(batch: pa.Table) -> pa.Table:
        shard = batch.column(_SHARD)[0].as_py()
        keys = {k for k in batch.column(RECORD_KEY).to_pylist() if k is not None}
        found = read_slice(Storage(meta_uri), slices[shard], keys, valid, utc)
        return _located(found, live)
    return lookup


def _located(found: dict[str, Location], live: frozenset[tuple[str, str]]) -> pa.Table:
    """LOCATED_DDL rows of the keys found in file groups the write can update."""
    rows = [(k, loc.partition_path, loc.file_id) for k, loc in found.items()
            if (loc.partition_path, loc.file_id) in live]
    return pa.table({RECORD_KEY: pa.array([r[0] for r in rows], pa.string()),
                     LOC_PARTITION: pa.array([r[1] for r in rows], pa.string()),
                     LOC_FILE_ID: pa.array([r[2] for r in rows], pa.string())})


class RecordLevelIndex:
    def __init__(self, *, virtual: KeyGenerator | None = None, driver_max_keys: int = 0):
        self.virtual = virtual
        self.driver_max_keys = driver_max_keys
        self.last_lookup: RecordIndex | None = None  # the snapshot the last locate read (its read counts)

    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        if not base_files:
            return spark.createDataFrame([], LOCATED_DDL)
        if not has_partition(load_table_properties(storage)):
            _log.info("%s has no record_index partition yet (this write builds it): looking keys up in the base "
                      "files", storage.base_uri)
            return SimpleIndex(is_global=True, virtual=self.virtual).locate(spark, records, storage, base_files)
        index = self.last_lookup = RecordIndex(storage)
        data_timeline = Timeline.load(storage)
        # Only file groups the write can update: keys the index places elsewhere are none of the table's now.
        live = frozenset((bf.partition_path, bf.file_id) for bf in base_files)
        if self.driver_max_keys > 0:
            # One job over the key column; a batch past the threshold stops it at threshold + 1 keys.
            keys = records.select(RECORD_KEY).limit(self.driver_max_keys + 1).toArrow().column(RECORD_KEY)
            if len(keys) <= self.driver_max_keys:
                return spark.createDataFrame(self._locate_keys(index, keys, live, data_timeline), LOCATED_DDL)
        valid = ValidInstants.of(index.table.timeline, data_timeline)
        sharded = records.select(RECORD_KEY).mapInArrow(_with_shard(index.file_group_count), _SHARDED_DDL)
        return sharded.groupBy(_SHARD).applyInArrow(
            _lookup_shard(index.storage.base_uri, index.slice_paths(), valid, live, index.utc), LOCATED_DDL)

    def locate_on_driver(self, storage: Storage, keys: pa.Array | pa.ChunkedArray,
                         base_files: list[BaseFile]) -> pa.Table | None:
        """:meth:`locate` for keys the driver holds already (RECORD_KEY, LOC_PARTITION, LOC_FILE_ID), no Spark job;
        None where Spark must look them up: more keys than the driver threshold, or no record_index partition
        yet."""
        if not len(keys) or not base_files:
            return _located({}, frozenset())
        if len(keys) > self.driver_max_keys:
            return None
        if not has_partition(load_table_properties(storage)):
            return None
        index = self.last_lookup = RecordIndex(storage)
        live = frozenset((bf.partition_path, bf.file_id) for bf in base_files)
        return self._locate_keys(index, keys, live, Timeline.load(storage))

    @staticmethod
    def _locate_keys(index: RecordIndex, keys: pa.Array | pa.ChunkedArray, live: frozenset[tuple[str, str]],
                     data_timeline: Timeline) -> pa.Table:
        return _located(index.lookup(set(keys.drop_null().to_pylist()), data_timeline), live)

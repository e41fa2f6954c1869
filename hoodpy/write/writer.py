"""One write, start to finish: prepare and validate the batch, open an instant, locate keys, assign file
groups, merge in executors, commit. Any failure after the instant opens removes what it wrote."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StructType

from hoodpy.arrow_rows import WRITE_STATS_DDL
from hoodpy.config import HoodieConfig, declared_keys, ordering_fields
from hoodpy.config.index import IndexConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.config.table import (
    TableConfig, cdc_mode, check_ordering_field_kept, check_version_writable, writes_merge_on_read,
)
from hoodpy.config.write import WriteConfig, event_time_ordering_field
from hoodpy.config.clustering import REJECT_UPDATE_STRATEGY, ClusteringConfig
from hoodpy.config.concurrency import ConcurrencyConfig
from hoodpy.errors import ClusteringUpdateError, InvalidConfigError, InvalidRecordError, WriteConflictError
from hoodpy.file_group.cdc_log import cdc_schema_json
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION, tag
from hoodpy.index.bloom import key_ranges, lacks_one, locate_on_driver, saturated_files_keys, sorted_unique
from hoodpy.index.bucket import BucketSpec, bucket_file_groups, bucket_id_column, new_bucket_file_id
from hoodpy.index.configured import index_for, require_metadata_table, require_stored_keys
from hoodpy.index.record_index import RecordLevelIndex
from hoodpy.keygen import KeyGenerator, key_generator_for_write, virtual_keys
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json, evolve_schema
from hoodpy.services.rollback import rollback_failed_writes
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, serialize
from hoodpy.timeline.compaction_plan import pending_compaction_file_groups
from hoodpy.timeline.instant import Action, Instant, new_instant_time
from hoodpy.timeline.metadata import CommitMetadata
from hoodpy.timeline.timeline import Timeline, instant_temp_dir
from hoodpy.transaction.conflict import pending_clustering_file_groups
from hoodpy.transaction.transaction import WriteTransaction
from hoodpy.write import commit as commit_step
from hoodpy.write import global_targets
from hoodpy.write import records as rec
from hoodpy.write.base_file import BaseFileOptions
from hoodpy.write.cdc import CdcWrite
from hoodpy.write import bulk_insert_modes as bulk_modes
from hoodpy.write import decimal_transfer
from hoodpy.write.bulk_insert_modes import warn_unhonoured_sort_columns
from hoodpy.write.bulk_insert import (BULK_FILE, BulkInsertContext, bulk_insert_partition, file_task_labels,
                                     new_file_groups_partition, plan_files)
from hoodpy.write.log_append import append_context, write_partition
from hoodpy.write.arrow_batches import batches_by_records
from hoodpy.write.merge import (
    OP,
    OP_DELETE,
    OP_UPSERT,
    TARGET_FILE_ID,
    ExistingFile,
    MergeContext,
    merge_file_group,
)
from hoodpy.write.operation import WriteOperation
from hoodpy.write.projection import conformed
from hoodpy.write.bucket_assignment import BucketAssigner, InsertBucket, hash_ranges
from hoodpy.write.targets import (MERGE_BIN, assign_by_ranges, attach_targets, merge_bin, target_table,
                                  targeted_task, write_targets)
from hoodpy.write.task_placement import partition_labels, place_file_groups, row_labels


_BUCKET_ID = "_hoodie_bucket_id"
# A deltacommit whose file groups but its largest take at most this share of the batch's records writes them all
# in one task (the others' logs or files after the largest's) rather than pay a broadcast and a shuffle of the
# whole batch to write them in parallel (SF 1: 300k updates into one log, 60k inserts into a new file group).
ONE_TASK_MINOR_SHARE = 0.2
# The most base file bytes whose key columns the driver reads before the batch's keys are known (their keys take
# about a third of their bytes in memory; see Writer._prefetch_lookup_keys).
_PREFETCH_MAX_BYTES = 256 << 20
_BUCKET_TARGETS_DDL = "g_partition string, g_bucket int, g_file_id string, g_exists boolean, g_bin int"
# Up to this many partitions in a BUCKET write, each record's slot comes from literal arrays, not a join.
_LITERAL_SLOT_PARTITIONS = 16
# Up to this many buckets, an unpartitioned batch is shuffled by bucket before it is stored (Writer._binned_by_bucket):
# every bucket then has a merge task, so more would run an empty task per bucket a small batch does not touch.
_BINNED_MAX_BUCKETS = 16
# New file groups an insert places on tasks by a literal map from file id to task label (a map of thousands of
# literals is still a small plan); more are hashed (Writer._one_task_per_new_group).
_PLACED_MAX_GROUPS = 1024


def _with_bucket_targets(records: DataFrame, slots: list[tuple[str, int, str, bool, int]], num_buckets: int,
                         ) -> DataFrame | None:
    """``records`` with the g_file_id, g_exists and g_bin of their (partition, bucket) slot among ``slots``
    (partition, bucket, file id, exists, bin label), looked up in literal arrays indexed by the slot's position
    (partition ordinal * buckets + bucket id), when the slots span at most _LITERAL_SLOT_PARTITIONS partitions:
    no table of slots for Spark to broadcast (a Spark job) and join. None when they span more (or name a null
    partition): the caller joins. The records' slots are those the validation counted (or, not counted, every
    bucket of the table's one partition), so every one is there."""
    partitions = sorted({p for p, *_ in slots if p is not None})
    if len(partitions) > _LITERAL_SLOT_PARTITIONS or any(p is None for p, *_ in slots):
        return None
    ordinal = {p: i for i, p in enumerate(partitions)}
    size = len(partitions) * num_buckets
    file_ids, exists, bins = [None] * size, [None] * size, [None] * size
    for p, b, f, e, label in slots:
        at = ordinal[p] * num_buckets + b
        file_ids[at], exists[at], bins[at] = f, e, label
    if len(partitions) == 1:
        position = F.col(_BUCKET_ID)
    else:  # a partition's ordinal from a literal map (few keys), then its bucket's slot
        position = F.create_map(*[F.lit(x) for p in partitions for x in (p, ordinal[p])])[F.col(PARTITION_PATH)] \
            * num_buckets + F.col(_BUCKET_ID)

    def looked_up(values: list, kind: str):
        return F.array(*[F.lit(v).cast(kind) for v in values])[position]

    return records.select("*", looked_up(file_ids, "string").alias("g_file_id"),
                          looked_up(exists, "boolean").alias("g_exists"), looked_up(bins, "int").alias("g_bin"))


def _not_located(keys: pa.Table, located: pa.Table) -> pa.Table:
    """The rows of the collected batch ``keys`` whose key ``located`` lacks: upserts (new records) and deletes."""
    if not located.num_rows:  # no file holds a batch key: no join (SF 1: 15-25 ms of CPU for 360k keys)
        return keys.select([RECORD_KEY, PARTITION_PATH, OP])
    joined = keys.join(located, keys=[RECORD_KEY, PARTITION_PATH], right_keys=[RECORD_KEY, LOC_PARTITION],
                       join_type="left outer")
    return joined.filter(pc.is_null(joined.column(LOC_FILE_ID))).select([RECORD_KEY, PARTITION_PATH, OP])


def _takes_all_inserts(buckets: list[InsertBucket], partition: str, insert_file: BaseFile, rest: pa.Table) -> bool:
    """Whether the insert plan ``buckets`` puts every insert of ``partition`` into ``insert_file`` and the batch
    deletes no key there that no other file holds (``rest``: the batch rows not located elsewhere). Then every
    upsert of ``rest`` goes to that file, an update of one of its rows or not, and looking them up in it would
    change no target."""
    if any(b.file_id != insert_file.file_id for b in buckets if b.partition_path == partition):
        return False
    in_partition = pc.equal(rest.column(PARTITION_PATH), partition)
    return not pc.any(pc.and_(in_partition, pc.equal(rest.column(OP), OP_DELETE))).as_py()


class WritableTable(Protocol):
    """What a write uses of its table; :class:`hoodpy.table.HoodieTable` is one. The write path sits below the
    table facade (which calls it), so it states what it needs instead of importing it."""

    spark: SparkSession
    storage: Storage
    config: HoodieConfig
    keygen: KeyGenerator
    properties: Mapping[str, str]  # hoodie.properties

    @property
    def name(self) -> str: ...

    def arrow_schema(self, timeline: Timeline | None = None, as_of: str | None = None) -> pa.Schema | None:
        """The data schema (no meta columns) of the newest commit at or before ``as_of``."""


@dataclass
class CommitResult:
    """What a write committed."""

    instant_time: str
    operation: WriteOperation
    num_writes: int = 0
    num_inserts: int = 0
    num_update_writes: int = 0
    num_deletes: int = 0
    files_added: int = 0
    files_updated: int = 0
    files_replaced: int = 0
    total_bytes_written: int = 0
    partitions: list[str] = field(default_factory=list)
    metadata: CommitMetadata | None = field(default=None, repr=False)

    @classmethod
    def of(cls, instant_time: str, operation: WriteOperation, metadata: CommitMetadata) -> CommitResult:
        stats = metadata.write_stats
        return cls(
            instant_time=instant_time,
            operation=operation,
            num_writes=sum(s.num_writes for s in stats),
            num_inserts=sum(s.num_inserts for s in stats),
            num_update_writes=sum(s.num_update_writes for s in stats),
            num_deletes=sum(s.num_deletes for s in stats),
            files_added=sum(1 for s in stats if s.prev_commit == "null"),
            files_updated=sum(1 for s in stats if s.prev_commit != "null"),
            files_replaced=len(metadata.replaced_file_ids()),
            total_bytes_written=sum(s.total_write_bytes for s in stats),
            partitions=sorted(metadata.partition_to_write_stats),
            metadata=metadata,
        )


class Writer:
    """Runs one write operation against a table."""

    def __init__(self, table: WritableTable, options: Mapping[str, Any] | None = None):
        self.table = table
        self.spark = table.spark
        self.storage = table.storage
        self.config: HoodieConfig = table.config.with_options(options)
        self.extra_metadata = commit_step.commit_extra_metadata(
            options, self.config.get(WriteConfig.COMMIT_METADATA_KEY_PREFIX))
        # Before anything is written: version 5 tables are read only.
        check_version_writable(self.storage.base_uri, self.config.get(TableConfig.VERSION))
        populate = TableConfig.POPULATE_META_FIELDS
        if self.config.get(populate) != table.config.get(populate):
            # Files with and without keys in one table would not read back: the table decides, once.
            raise InvalidConfigError(populate.key, self.config.raw(populate),
                                     f"the table has {populate.key}={str(table.config.get(populate)).lower()}")
        recorded = HoodieConfig.of(dict(table.properties))  # hoodie.properties decides, not the table's options
        for key in (TableConfig.CDC_ENABLED, TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE):
            if self.config.get(key) != recorded.get(key):  # set when the table is created
                raise InvalidConfigError(key.key, self.config.raw(key), f"the table has {key.key}="
                                         f"{str(recorded.get(key)).lower()}, set when it was created")
        require_metadata_table(self.config)  # RECORD_INDEX with the metadata table off: refused before writing
        require_stored_keys(self.config)  # the record index with virtual keys: refused too
        self.merge_on_read = writes_merge_on_read(self.storage.base_uri, table.properties, self.config)
        self.keygen = key_generator_for_write(table.keygen, table.config, options)
        check_ordering_field_kept(table.config, options)
        self.ordering_field: str | None = self.config.get(TableConfig.PRECOMBINE_FIELD)
        # A delete whose batch lacks the partition fields: keys are looked up in every partition.
        self._delete_by_key_only = False
        self._generates_keys = False  # inserts into a table without record key fields (see KeyGenerator.auto_keys)
        self._cached: list[DataFrame] = []  # held for one write; a local checkpoint's blocks go with its GC
        self._partitions: list[str] = []  # partition paths the batch names (none for deletes by key alone)
        self._clustering_inputs: dict[tuple[str, str], str] | None = None  # see _pending_clustering
        self._compaction_inputs: dict[tuple[str, str], str] | None = None  # see _pending_compaction
        # (record key, partition path, op) of the batch, collected when keys are looked up on the driver.
        self._batch_keys: pa.Table | None = None
        # Whether no two of _batch_keys share a key (and partition, unless the lookup is global), once checked.
        self._unique_keys = False
        self._upsert_count: int | None = None  # upsert records in the batch, while combining has not changed it
        self._bucket_layout: BucketSpec | None = None  # the bucket layout when the index is BUCKET
        # Records per (partition, bucket) of the batch; None when not counted (Writer._checks_in_binning)
        self._bucket_counts: dict[tuple[str, int], int] | None = {}
        self._bucket_binned = False  # the stored batch has each bucket's records in its own Spark partition
        self._upsert_counts: dict[str | None, int] = {}  # the same per partition path (bulk_insert)
        self._assigner: BucketAssigner | None = None  # one per write attempt, made once the instant is open
        # Merge-on-read: new file groups that start as log files (a new bucket of the BUCKET index).
        self._new_log_groups: set[tuple[str, str]] = set()
        # A deltacommit written in one task that attaches the targets itself: the targets file (see
        # _tag_and_assign_on_driver).
        self._targets_in_task: str | None = None
        # The one (partition path, file id) every record goes to, when the records are shipped to their one merge
        # task without those columns (see _tag_and_assign_on_driver).
        self._one_target: tuple[str, str] | None = None
        # Key columns of the files the driver's lookup will read, read while the batch's keys are collected
        # (see _prefetch_lookup_keys).
        self._prefetched: Future | None = None
        # The batch's keys sorted, each once, by partition path, when _has_duplicate_keys sorted them.
        self._sorted_keys: dict[str, pa.Array] | None = None
        # The prepared records, and a future of (their one-target merge input, it shipped), built while the keys
        # are collected (see _build_one_target_input).
        self._one_target_input: tuple[DataFrame, Future] | None = None

    # -- entry point -------------------------------------------------------------------------
    def write(self, df: DataFrame, operation: WriteOperation) -> CommitResult:
        """Write once; on a write conflict, retry up to hoodie.write.num.retries.on.conflict.failures times."""
        retries = self.config.get(ConcurrencyConfig.NUM_RETRIES_ON_CONFLICT)
        for attempt in range(retries + 1):
            self._clustering_inputs = None  # a retry sees the timeline afresh
            self._compaction_inputs = None
            self._batch_keys = None
            self._unique_keys = False
            self._upsert_count = None
            self._bucket_counts = {}
            self._bucket_binned = False
            self._assigner = None
            self._new_log_groups = set()
            self._targets_in_task = None
            self._one_target = None
            self._prefetched = None
            self._sorted_keys = None
            self._one_target_input = None
            try:
                return self._write_once(df, operation)
            except WriteConflictError:
                if attempt == retries:
                    raise
        raise AssertionError("unreachable")

    def _write_once(self, df: DataFrame, operation: WriteOperation) -> CommitResult:
        transaction = WriteTransaction(self.storage, self.config, merge_on_read=self.merge_on_read)
        timeline = Timeline.load(self.storage)
        try:
            if operation == WriteOperation.DELETE_PARTITION:
                records, target_schema = None, self._prepare_partition_delete(df, timeline)
            else:
                records, target_schema = self._prepare(df, operation, timeline)
            timeline = rollback_failed_writes(transaction, timeline)
            transaction.begin(timeline)
            instant_time = new_instant_time(after=timeline.latest_instant_time())
            # The heartbeat exists before the instant does, so a concurrent LAZY cleaner never sees this
            # write without one.
            with transaction.heartbeat(instant_time):
                requested = transitions.create_requested(self.storage, instant_time,
                                                         operation.action_on(self.merge_on_read),
                                                         self._requested_bytes(operation))
                inflight = transitions.transition_to_inflight(self.storage, requested)
                try:
                    metadata = self._run(records, operation, timeline, inflight, target_schema)
                    transaction.commit(inflight, metadata,
                                       lambda: commit_step.commit(self.storage, inflight, metadata, self.config))
                except BaseException as e:
                    commit_step.abort(self.storage, inflight)
                    refused = rec.refused_in_stage(e)  # a record the merge job's first stage refused
                    if refused is not None:
                        raise refused from e
                    raise
        finally:
            self._prefetched = self._one_target_input = None  # they go with the write
            for cached in self._cached:
                cached.unpersist()
            self._cached.clear()
        return CommitResult.of(instant_time, operation, metadata)

    # -- preparation (no instant exists yet: a failure here leaves the table untouched) -----------
    def _prepare(self, df: DataFrame, operation: WriteOperation, timeline: Timeline,
                 ) -> tuple[DataFrame, pa.Schema]:
        keygen = self.keygen
        is_delete = operation == WriteOperation.DELETE
        for key in (*declared_keys(WriteConfig), *declared_keys(IndexConfig), *declared_keys(StorageConfig)):
            self.config.get(key)  # a bad option value fails here, before an instant exists
        self._bucket_layout = BucketSpec.of(self.config)
        rec.require_columns(df.schema, list(keygen.record_key_fields), "record key")
        has_partition = all(f in df.columns for f in keygen.partition_fields)
        self._delete_by_key_only = is_delete and keygen.is_partitioned and not has_partition
        self._generates_keys = keygen.auto_keys and not operation.uses_index
        if self._generates_keys and self._combines(operation):
            # As Hudi: generated keys are all distinct, so there is nothing to combine by.
            raise InvalidConfigError(WriteConfig.COMBINE_BEFORE_INSERT.key, "true",
                                     "combining is not supported with auto generation of record keys")
        if not is_delete:
            rec.require_columns(df.schema, list(keygen.partition_fields), "partition")
            if self.ordering_field and self._combines(operation) | (operation == WriteOperation.UPSERT):
                rec.require_columns(df.schema, list(ordering_fields(self.ordering_field)), "ordering (precombine)")
        records = rec.keyed_records(df, keygen, deletes=is_delete, with_partition=has_partition,
                                    generate_keys=self._generates_keys)

        table_schema = self.table.arrow_schema(timeline)
        if is_delete:
            if table_schema is None:
                raise InvalidRecordError(
                    "Cannot delete from a table that has no committed data and no schema: there is nothing to "
                    "delete (tables created with a schema, as SQL CREATE TABLE does, accept the delete)")
            target = table_schema
        else:
            batch_schema = to_arrow_schema(StructType(
                [f for f in records.schema.fields if f.name not in rec.WORKING_COLUMNS]))
            allow_missing = table_schema.names if (
                table_schema is not None and self.config.get(WriteConfig.SCHEMA_ALLOW_COLUMN_DROP)) else ()
            target = evolve_schema(table_schema, batch_schema, key_fields=keygen.record_key_fields,
                                   partition_fields=keygen.partition_fields, allow_missing=allow_missing)
        spark_target = from_arrow_schema(target, prefer_timestamp_ntz=True)
        # A delete needs only the key and partition path computed above: its other columns are never
        # written, and an ordering value would make the delete conditional (the delete operation is not).
        if is_delete:
            records = records.select(*rec.WORKING_COLUMNS)
        records = conformed(records, rec.WORKING_COLUMNS, spark_target)
        ordering = None if is_delete else self.ordering_field
        if operation == WriteOperation.BULK_INSERT and self._bucket_layout is None:
            # Nothing is looked up, so only the write job must see the batch, and its tasks check the keys they
            # write (bulk_insert_partition). Validation reads the batch once more instead of storing all of it:
            # an initial load is the largest batch a table sees (SF1 lineitem: 12 s of 43 s went to storing it).
            if bulk_modes.checks_in_tasks(self.config.get(WriteConfig.BULK_INSERT_SORT_MODE), ordering,
                                          self._combines(operation)):
                return records, target  # no job before the write: its tasks refuse null keys themselves
            self._upsert_counts = rec.validate_by_partition(records, keygen, ordering)
            self._partitions = sorted(p for p in self._upsert_counts if p is not None)
            self._upsert_count = sum(self._upsert_counts.values())
            return records, target
        # Materialized by the first action: validation / key lookup and the merge must see one evaluation of
        # the batch. A re-evaluated batch can differ (dbt snapshots key rows by md5(id || current_timestamp()),
        # which changes per query), and records whose keys the lookup never saw would be lost. A local
        # checkpoint stores the rows as they are (persist() builds compressed column batches: 3x slower for a
        # 360k-row batch) and is never silently recomputed: a lost block fails the write instead.
        if self._bucket_layout is not None and not self._global_lookup(operation):
            bucket = bucket_id_column(F.col(RECORD_KEY), self._bucket_layout)
            if self._bins_by_bucket(operation) and self._checks_in_binning(operation, timeline):
                # Only the merge job reads the batch, once: nothing to store. Its first stage, which bins the
                # batch by bucket, computes every record's bucket and refuses a bad record there, before any merge
                # task starts (a refusal in a merge task could race the abort with another task's file).
                bucket = rec.checked_in_stage(bucket, keygen, ordering)
                records = self._binned_by_bucket(rec.drop_working_columns(records.withColumn(_BUCKET_ID, bucket)),
                                                 operation)
                self._partitions = [""]
                self._bucket_counts = None  # not counted: every bucket of the table's one partition is a target
                return records, target
            records = records.withColumn(_BUCKET_ID, bucket)
            if self._bins_by_bucket(operation):
                records = self._binned_by_bucket(records, operation)
        # An insert reads the stored batch only to count, sample and write it: keep it on disk, not in the JVM's
        # heap (the default level, memory and disk, holds a whole load's rows there).
        records = records.localCheckpoint(
            eager=False, storageLevel=None if operation.uses_index else StorageLevel.DISK_ONLY)
        self._cached.append(records)
        prepared = rec.drop_working_columns(records)
        if self._driver_lookup(operation):
            with ThreadPoolExecutor(max_workers=1) as pool:  # joined before the keys are looked up
                self._prefetch_lookup_keys(operation, timeline, pool)
                if not self._global_lookup(operation):  # queued behind the prefetch, if any, on the one thread
                    self._one_target_input = (prepared, pool.submit(self._build_one_target_input, prepared))
                self._batch_keys, self._partitions = rec.collect_keys(records, keygen, ordering)
        elif _BUCKET_ID in records.columns:
            self._partitions, self._upsert_count, self._bucket_counts = rec.validate(
                records, keygen, ordering, count_by=_BUCKET_ID)
        else:
            self._partitions, self._upsert_count = rec.validate(records, keygen, ordering)
        if operation == WriteOperation.BULK_INSERT:
            self._require_empty_buckets(timeline)  # bucketed bulk_insert (the unbucketed one returned above)
        return prepared, target

    def _bins_by_bucket(self, operation: WriteOperation) -> bool:
        """Whether :meth:`_binned_by_bucket` applies: an unpartitioned table of few buckets, no more than a set
        write parallelism, and no combine by a shuffle of its own after the batch is stored (which would undo it)."""
        parallelism = self.config.get(WriteConfig.WRITE_PARALLELISM)
        num_buckets = self._bucket_layout.num_buckets
        return (not self.keygen.is_partitioned and num_buckets <= _BINNED_MAX_BUCKETS
                and not 0 < parallelism < num_buckets
                and (self._combines_in_merge_tasks(operation) or not self._combines(operation)))

    def _binned_by_bucket(self, records: DataFrame, operation: WriteOperation) -> DataFrame:
        """``records`` of an unpartitioned table, each bucket's in its own Spark partition (bucket b in partition b),
        before the batch is stored: the merge tasks then read the stored partitions as they are, with no second
        shuffle of the batch by merge bin (a Spark job; SF 1, 2 buckets: ~0.5 s of 3.9 s). The batch order that
        combining in the merge tasks needs is taken before this shuffle, which does not keep it."""
        if self._combines_in_merge_tasks(operation):
            records = rec.with_batch_order(records)
        labels = partition_labels(self._bucket_layout.num_buckets)
        self._bucket_binned = True
        return records.repartition(len(labels), F.array(*[F.lit(x) for x in labels])[F.col(_BUCKET_ID)])

    def _checks_in_binning(self, operation: WriteOperation, timeline: Timeline) -> bool:
        """Whether the stage that bins the batch by bucket checks it (:func:`records.checked_in_stage`), so that no
        Spark job validates and counts it first and the batch is not stored (SF 1, 2 buckets: two jobs and a
        local checkpoint): an upsert of a binned unpartitioned batch (:meth:`_bins_by_bucket`) into a table
        whose buckets all hold a file group, where each bucket's file group, not a count of its records, is all
        :meth:`_assign_to_buckets` needs. Not with generated keys, nor while a replacecommit is pending (a
        clustering's update check reads the batch too). Other writes validate first."""
        if operation != WriteOperation.UPSERT or self.keygen.auto_keys or timeline.pending([Action.REPLACECOMMIT]):
            return False
        slices = FileSystemView.load(self.storage, timeline, partitions=[""]).latest_file_slices([""])
        return len(bucket_file_groups(slices, self._bucket_layout)) == self._bucket_layout.num_buckets

    def _prefetch_lookup_keys(self, operation: WriteOperation, timeline: Timeline, pool: ThreadPoolExecutor) -> None:
        """A merge-on-read upsert of an unpartitioned table looked up on the driver: the key columns of the base
        files the lookup confirms candidates in (all but the one the insert plan fills first, whose merge task
        reads its keys, see _insert_files; those whose bloom filter is saturated) are read on a driver thread
        while the Spark job collecting the batch's keys runs (its one task leaves a core free: SF 1's 3M-key
        file's column is ~0.4 CPU s of the driver's lookup, between the two jobs). Files of more than
        _PREFETCH_MAX_BYTES in all are not: the batch may need few of them. The files are listed on the thread
        too, so the job starts without waiting for the listing."""
        from hoodpy.config.index import BLOOM

        if not (self.merge_on_read and operation == WriteOperation.UPSERT and not self.keygen.is_partitioned
                and self.config.get(IndexConfig.TYPE) == BLOOM and virtual_keys(self.config) is None
                and not self.config.get(IndexConfig.BLOOM_USE_METADATA)):
            return
        limit = self.config.get(StorageConfig.PARQUET_SMALL_FILE_LIMIT)

        def prefetch() -> dict[str, dict[int, pa.Array]] | None:
            files = FileSystemView.load(self.storage, timeline).latest_base_files()
            small = [bf for bf in files if bf.size < limit] if limit > 0 else []
            if small:
                files = [bf for bf in files if bf is not min(small, key=lambda bf: bf.size)]
            if not files or sum(bf.size for bf in files) > _PREFETCH_MAX_BYTES:
                return None
            return saturated_files_keys(self.storage, files)

        self._prefetched = pool.submit(prefetch)

    @staticmethod
    def _build_one_target_input(records: DataFrame) -> tuple[DataFrame, tuple[DataFrame, Any]]:
        """The merge input of a write whose records all go to one file group (see _tag_and_assign_on_driver), and
        it shipped (:func:`decimal_transfer.ship`): built on a driver thread while the job collecting the batch's
        keys runs, as the JVM's analysis of each step (and the schema it returns) took 15-95 ms between the
        lookup and the merge job (SF 1). Unused when the records do not all go to one group, or were combined."""
        one = Writer._one_group_rows(records)
        return one, decimal_transfer.ship(one)

    @staticmethod
    def _one_group_rows(records: DataFrame) -> DataFrame:
        """``records`` that all go to one file group, as its merge job takes them: without the partition path (the
        task adds it), in one Spark partition."""
        return records.drop(PARTITION_PATH).coalesce(1)

    def _one_target_rows(self, records: DataFrame) -> DataFrame:
        """:meth:`_one_group_rows`: built while the keys were collected when ``records`` are the prepared ones (and
        that build did not fail)."""
        if self._one_target_input is not None and records is self._one_target_input[0]:
            try:
                return self._one_target_input[1].result()[0]
            except Exception:  # noqa: BLE001 - built again here, reporting any error
                self._one_target_input = None
        return self._one_group_rows(records)

    def _ship(self, rows: DataFrame) -> tuple[DataFrame, Any]:
        """:func:`decimal_transfer.ship`, or what _build_one_target_input built of ``rows`` already."""
        built = self._one_target_input[1] if self._one_target_input is not None else None
        if built is not None and built.done() and built.exception() is None and rows is built.result()[0]:
            return built.result()[1]
        return decimal_transfer.ship(rows)

    def _prefetched_keys(self) -> dict[str, dict[int, pa.Array]] | None:
        """The key columns :meth:`_prefetch_lookup_keys` read, if it did and could (what it failed to list or read,
        the write lists and the lookup reads itself, reporting any error)."""
        if self._prefetched is None:
            return None
        try:
            return self._prefetched.result()
        except Exception:  # noqa: BLE001 - the lookup reads the files itself
            return None

    def _driver_lookup(self, operation: WriteOperation) -> bool:
        """Whether the batch's keys come to the driver and are located there (bloom index, per partition):
        one Spark job validates and collects them, and tagging, insert counts and the pending-clustering
        check need no further job."""
        from hoodpy.config.index import BLOOM, GLOBAL_BLOOM, RECORD_INDEX

        index_type = self.config.get(IndexConfig.TYPE)
        if not self._global_lookup(operation):
            return operation.uses_index and index_type == BLOOM
        # Global indexes' upserts too (global_targets); the record index unless told to look up in Spark.
        return operation == WriteOperation.UPSERT and not self._delete_by_key_only and (
            index_type == GLOBAL_BLOOM or (index_type == RECORD_INDEX and self.config.get(
                IndexConfig.RECORD_INDEX_DRIVER_LOOKUP_MAX_KEYS) > 0))

    def _combines_in_merge_tasks(self, operation: WriteOperation) -> bool:
        """Whether an upsert's records are combined in the merge (or, merge-on-read, log append) tasks instead of
        by a shuffle of the batch: under the BUCKET index every record of a key reaches one task (task_combine)."""
        return (operation == WriteOperation.UPSERT and self._combines(operation)
                and self._bucket_layout is not None and not self._global_lookup(operation))

    def _combines(self, operation: WriteOperation) -> bool:
        if operation == WriteOperation.UPSERT:
            return self.config.get(WriteConfig.COMBINE_BEFORE_UPSERT)
        if operation == WriteOperation.DELETE:
            return True
        return self.config.get(WriteConfig.COMBINE_BEFORE_INSERT)

    def _prepare_partition_delete(self, df: DataFrame, timeline: Timeline) -> pa.Schema:
        """delete_partition: the partitions named by hoodie.datasource.write.partitions.to.delete (wildcards
        matched against the table's partitions), else those of the batch's rows; each must exist. Returns the
        table's schema (recorded in the replacecommit, as Hudi does)."""
        keygen = self.keygen
        if not keygen.is_partitioned:
            raise InvalidConfigError(WriteConfig.OPERATION.key, "delete_partition",
                                     f"the table at {self.storage.base_uri} is not partitioned")
        existing = FileSystemView.load(self.storage, timeline).partitions()
        named = list(self.config.get(WriteConfig.PARTITIONS_TO_DELETE))
        source = WriteConfig.PARTITIONS_TO_DELETE.key
        if not named:
            source = "the batch's partition fields"
            rec.require_columns(df.schema, list(keygen.partition_fields), "partition")
            column = rec.partition_path_column(keygen, df.schema).alias(PARTITION_PATH)
            named = sorted(r[0] for r in df.select(column).distinct().collect())
        if not named:
            raise InvalidConfigError(WriteConfig.OPERATION.key, "delete_partition",
                                     f"no partition to delete: set {WriteConfig.PARTITIONS_TO_DELETE.key} or "
                                     "pass rows of the partitions")
        chosen: set[str] = set()
        for pattern in named:
            matched = fnmatch.filter(existing, pattern) if any(c in pattern for c in "*?[") else \
                [pattern] if pattern in existing else []
            if not matched:
                raise InvalidConfigError(source, pattern, f"the table has no such partition (it has "
                                         f"{', '.join(existing) or 'none'})")
            chosen.update(matched)
        self._partitions = sorted(chosen)
        schema = self.table.arrow_schema(timeline)
        if schema is None:
            raise InvalidConfigError(WriteConfig.OPERATION.key, "delete_partition", "the table has no data")
        return schema

    def _requested_bytes(self, operation: WriteOperation) -> bytes:
        if not operation.replaces:
            return b""
        return serialize(AvroModel.REQUESTED_REPLACE_METADATA,
                         {"operationType": operation.operation_type, "clusteringPlan": None,
                          "extraMetadata": {}, "version": 1})

    # -- execution ---------------------------------------------------------------------------
    def _run(self, records: DataFrame, operation: WriteOperation, timeline: Timeline, inflight: Instant,
             target: pa.Schema) -> CommitMetadata:
        table_avro = avro_schema_from_arrow(target, self.table.name)
        schema_json = avro_schema_to_json(table_avro)
        mode = cdc_mode(self.table.properties)
        merge_ctx = MergeContext(
            base_uri=self.storage.base_uri,
            instant_time=inflight.timestamp,
            data_schema=target,
            match_keys=operation.uses_index,
            ordering_field=event_time_ordering_field(self.config),
            options=BaseFileOptions.from_config(self.config),
            cdc=CdcWrite(mode, cdc_schema_json(mode, table_avro)) if mode else None,
        )
        self._assigner = BucketAssigner(self.spark, self.config, timeline, merge_ctx,
                                        partial(self._held_from_inserts, timeline), merge_on_read=self.merge_on_read)
        if operation == WriteOperation.DELETE_PARTITION:
            # Hudi's delete_partition: every file group of the partitions replaced, no file written.
            view = FileSystemView.load(self.storage, timeline, partitions=self._partitions)
            replaced = {p: [] for p in self._partitions}
            for fslice in view.latest_file_slices(self._partitions):
                replaced[fslice.partition_path].append(fslice.file_id)
            return commit_step.new_commit_metadata(operation.operation_type, [], schema_json, replaced,
                                                   extra=self.extra_metadata)
        if self._generates_keys:
            records = rec.with_key_instant(records, inflight.timestamp)
        elif self.keygen.auto_keys and operation == WriteOperation.UPSERT:  # rows new to the table get keys
            records = rec.complete_new_keys(records, inflight.timestamp)
            if self._batch_keys is not None:
                self._batch_keys = rec.complete_new_keys_arrow(self._batch_keys, inflight.timestamp)
        if self._combines(operation):
            by_partition = not self._global_lookup(operation)
            if self._batch_keys is not None and not self._has_duplicate_keys(by_partition):
                self._unique_keys = True  # combining would be a shuffle that changes nothing
            elif self._combines_in_merge_tasks(operation):
                if not self._bucket_binned:  # else numbered before the batch was binned
                    records = rec.with_batch_order(records)
                merge_ctx.combine_ordering = ordering_fields(self.ordering_field)
            else:
                records = rec.combine(records, self.ordering_field, by_partition=by_partition)
                self._bucket_binned = False  # the combine's shuffle undid the binning (not binned then anyway)
                self._upsert_count = None
                self._batch_keys = self._sorted_keys = None  # the collected keys predate combining: locate in Spark
        if operation == WriteOperation.BULK_INSERT and self._bucket_layout is None:
            stats = self._bulk_insert(records, merge_ctx, timeline)
            return commit_step.new_commit_metadata(operation.operation_type, stats, schema_json,
                                                   extra=self.extra_metadata)

        partitions = self._partitions
        view = FileSystemView.load(self.storage, timeline,
                                   partitions=None if self._needs_all_partitions(operation)
                                   else partitions)
        replaced = None
        if self._bucket_layout is not None and not self._global_lookup(operation):
            merge_input = self._assign_to_buckets(records, operation, view, timeline)
        elif operation.uses_index:
            merge_input = self._tag_and_assign(records, operation, view, timeline, inflight)
        else:
            inserts = records.filter(F.col(OP) == OP_UPSERT).withColumn(TARGET_FILE_ID, F.lit(None).cast("string"))
            merge_input = self._assigner.assign_inserts(inserts, view if operation.packs_small_files else None)
        if operation.is_overwrite:
            scope = None if operation == WriteOperation.INSERT_OVERWRITE_TABLE else partitions
            replaced = {}
            for fg in view.file_groups():
                if scope is None or fg.partition_path in scope:
                    replaced.setdefault(fg.partition_path, []).append(fg.file_id)
        merge_ctx.existing = {
            (bf.partition_path, bf.file_id): ExistingFile(bf.path, bf.instant_time)
            for bf in view.latest_base_files()
        }
        new_buckets_only = self._creates_bucket_groups_only(operation, merge_ctx)
        if new_buckets_only or self._creates_file_groups_only(operation):
            # Every target is a file group this write creates from inserts: stream each one's rows into its file
            # as bulk_insert does, not gather a whole group in the JVM and a worker (the last SF1 insert: 9.7 GB).
            # Bucketed targets come partitioned by their merge bin already.
            grouped = merge_input if new_buckets_only else self._one_task_per_new_group(merge_input)
            with self._arrow_batches():
                stats_rows = grouped.sortWithinPartitions(TARGET_FILE_ID, PARTITION_PATH) \
                    .mapInArrow(partial(new_file_groups_partition, merge_ctx), WRITE_STATS_DDL).collect()
            stats = commit_step.write_stats_from_rows(r.asDict() for r in stats_rows)
            return commit_step.new_commit_metadata(operation.operation_type, stats, schema_json, replaced,
                                                   extra=self.extra_metadata)
        if self._appends_logs(operation):
            append_ctx = append_context(self.config, merge_ctx, view, self._assigner.small_file_groups,
                                        self._new_log_groups,
                                        schema_json, self._pending_compaction(timeline))
            # Each task takes whole file groups and splits them itself (log_append.write_partition): targets placed
            # on the driver come partitioned by their bin already; others take one shuffle by file group.
            # Decimals of precision <= 15 cross as doubles, rebuilt exactly in the task (as the copy-on-write
            # merge's): the JVM's BigDecimal per value is the dearest part of feeding the task its rows.
            merge_input, decimals = self._ship(merge_input)
            write = partial(write_partition, append_ctx, decimals=decimals, target=self._one_target)
            if self._targets_in_task is not None:  # one task: it joins the records with their targets itself
                write = partial(targeted_task, write, self.storage.base_uri, self._targets_in_task)
            elif MERGE_BIN not in merge_input.columns and self._one_target is None:
                merge_input = merge_input.repartition(PARTITION_PATH, TARGET_FILE_ID)
            with self._arrow_batches():
                stats_rows = merge_input.mapInArrow(write, WRITE_STATS_DDL).collect()
        else:
            if MERGE_BIN in merge_input.columns or self._one_target is not None:
                # Targets placed on the driver come partitioned by their bin, whole file groups to a bin: each task
                # splits its rows by group itself (merge_bin), no sort of the batch by group in the JVM.
                # Decimals of precision <= 15 cross to the tasks as doubles (decimal_transfer: the JVM's
                # BigDecimal per value is the dearest part of the Arrow transfer), rebuilt exactly there.
                merge_input, decimals = self._ship(merge_input)
                with self._arrow_batches():
                    stats_rows = merge_input.mapInArrow(partial(merge_bin, merge_ctx, decimals=decimals,
                                                                target=self._one_target), WRITE_STATS_DDL).collect()
            else:
                stats_rows = merge_input.groupBy(PARTITION_PATH, TARGET_FILE_ID).applyInArrow(
                    partial(merge_file_group, merge_ctx), WRITE_STATS_DDL).collect()
        stats = commit_step.write_stats_from_rows(r.asDict() for r in stats_rows)
        for stat in stats:  # Hudi 1.x's merge handle names the base file it replaced (written at versions 8, 9)
            merged = merge_ctx.existing.get((stat.partition_path, stat.file_id))
            if merged is not None and not stat.is_log_write:
                stat.prev_base_file = merged.path.rsplit("/", 1)[-1]
        return commit_step.new_commit_metadata(operation.operation_type, stats, schema_json, replaced,
                                               extra=self.extra_metadata)

    def _one_task_per_new_group(self, records: DataFrame) -> DataFrame:
        """``records`` of an insert that only creates file groups, each group's in a Spark partition of its own
        (consecutive groups share one when hoodie.*.shuffle.parallelism is set lower), as bulk_insert places its
        files. Hashing (partition path, file id) into spark.sql.shuffle.partitions can put groups in one
        partition (and adaptive execution coalesces small ones): SF 1's two new file groups were written one after
        the other by one task. A repartition into a set number of partitions is not coalesced. Beyond
        _PLACED_MAX_GROUPS groups, hashing spreads them well enough."""
        groups = self._assigner.insert_groups
        if not groups or len(groups) > _PLACED_MAX_GROUPS:
            return records.repartition(PARTITION_PATH, TARGET_FILE_ID)
        configured = self.config.get(WriteConfig.WRITE_PARALLELISM)
        tasks = min(configured, len(groups)) if configured > 0 else len(groups)
        labels = file_task_labels(len(groups), tasks)
        label_of = F.create_map(*[F.lit(x) for (_, file_id), label in zip(groups, labels) for x in (file_id, label)])
        return records.repartition(tasks, label_of[F.col(TARGET_FILE_ID)])

    def _arrow_batches(self):
        """The context of a job feeding the batch's rows to Python tasks: Spark's Arrow batches bounded by their
        record count alone where the byte bound cannot bind (:func:`arrow_batches.batches_by_records`: the JVM
        spares sizing every batch after each row), by the table's bytes per record, else Hudi's estimate."""
        sizing = self._assigner.known_sizing() or self._assigner.unmeasured_sizing()
        return batches_by_records(self.spark, sizing.record_size)

    def _has_duplicate_keys(self, by_partition: bool) -> bool:
        """Whether two of the collected batch keys are the same (in the same partition, with ``by_partition``).
        A batch of one partition, looked up by partition on the driver, is sorted for it: its keys in order,
        each once, are what the lookup bisects over (kept in _sorted_keys), and a sort costs less than the
        hash pass of :func:`records.has_duplicate_keys` (SF 1: 40 ms against 90 ms of 360k keys)."""
        keys = self._batch_keys
        partitions = keys.column(PARTITION_PATH)
        if not by_partition or len(self._partitions) != 1 or partitions.null_count:
            return rec.has_duplicate_keys(keys, by_partition=by_partition)
        unique = sorted_unique(keys.column(RECORD_KEY).combine_chunks())
        self._sorted_keys = {self._partitions[0]: unique}
        return len(unique) != keys.num_rows

    def _appends_logs(self, operation: WriteOperation) -> bool:
        """Whether the write is a deltacommit whose tasks append logs (or merge small files) per file group
        (:func:`log_append.write_partition`): each task splits its rows by file group itself."""
        return self.merge_on_read and not operation.is_overwrite

    def _creates_file_groups_only(self, operation: WriteOperation) -> bool:
        """Whether this copy-on-write insert or overwrite writes new file groups only (no small file takes
        inserts, no index or bucket decides targets), so that no task merges with a stored file."""
        return not (self.merge_on_read and not operation.is_overwrite) and not operation.uses_index \
            and self._bucket_layout is None and not self._assigner.small_file_groups

    def _creates_bucket_groups_only(self, operation: WriteOperation, merge_ctx: MergeContext) -> bool:
        """Whether this write under the BUCKET index only creates file groups (the batch's partitions hold no base
        file: a first load, or bulk_insert, which requires that), so that its merge tasks would merge with nothing
        and nothing is combined in them: :meth:`_assign_to_buckets` then keeps only inserts for the new groups.
        Merge-on-read: bulk_insert only (its new buckets take base files; other writes start them as logs)."""
        return (self._bucket_layout is not None and not self._global_lookup(operation)
                and (not self.merge_on_read or operation == WriteOperation.BULK_INSERT)
                and merge_ctx.combine_ordering is None and not merge_ctx.existing)

    def _assign_to_buckets(self, records: DataFrame, operation: WriteOperation, view: FileSystemView,
                           timeline: Timeline) -> DataFrame:
        """Each record's target under the BUCKET index: the file group of its (partition, bucket), or a new one
        named by the bucket (HoodieSimpleBucketIndex + SparkBucketIndexPartitioner). The bucket id was computed
        in the executors before validation, which counted the records per (partition, bucket) (or, when the
        binning stage checks the batch, :meth:`_checks_in_binning`, did not: every bucket is a target); the file
        group of each comes from the file names the driver listed: no key is collected and none looked up.
        Overwrites always start new file groups, as Hudi's do. Each file group gets its own merge task, the
        largest first (:meth:`_place_file_groups`); unpartitioned, its bucket's stored partition
        (:meth:`_binned_by_bucket`)."""
        latest = view.latest_base_files(self._partitions)
        existing = bucket_file_groups(view.latest_file_slices(self._partitions), self._bucket_layout)
        reuse = not operation.is_overwrite
        counts = self._bucket_counts
        if counts is None:  # not counted (_checks_in_binning): every bucket of the one partition is a target
            counts = {("", b): 0 for b in range(self._bucket_layout.num_buckets)}
        targets = {}
        for slot in counts:
            file_id = existing.get(slot) if reuse else None
            targets[slot] = (file_id or new_bucket_file_id(slot[1]), file_id is not None)
        if self.merge_on_read and operation in (WriteOperation.UPSERT, WriteOperation.INSERT):
            # The bucket index indexes log files: a new bucket starts as a log file, as in Hudi.
            self._new_log_groups = {(p, f) for (p, _), (f, exists) in targets.items() if not exists}
        num_bins, label_of = self._place_file_groups(
            {(p, targets[(p, b)][0]): n for (p, b), n in counts.items()}, latest)
        bucketed = records
        if operation.is_overwrite or operation == WriteOperation.BULK_INSERT:
            bucketed = bucketed.filter(F.col(OP) == OP_UPSERT)
        slots = [(p, b, f, exists, label_of[(p, f)]) for (p, b), (f, exists) in targets.items()]
        targeted = _with_bucket_targets(bucketed, slots, self._bucket_layout.num_buckets)
        if targeted is None:
            groups = self.spark.createDataFrame(slots, _BUCKET_TARGETS_DDL)
            targeted = bucketed.join(F.broadcast(groups), (F.col(PARTITION_PATH) == F.col("g_partition"))
                                     & (F.col(_BUCKET_ID) == F.col("g_bucket")))
        if not self._combines_in_merge_tasks(operation):
            # A delete whose bucket has no file group has nothing to delete (records combined in the merge tasks
            # all go there: a later upsert of the key may supersede the delete).
            targeted = targeted.filter(F.col("g_exists") | (F.col(OP) == OP_UPSERT))
        targeted = targeted.withColumn(TARGET_FILE_ID, F.col("g_file_id")).withColumn(MERGE_BIN, F.col("g_bin"))
        if existing and reuse:
            self._reject_updates_under_clustering(targeted.filter(F.col("g_exists")), timeline)
        targeted = targeted.drop(_BUCKET_ID, "g_partition", "g_bucket", "g_file_id", "g_exists", "g_bin")
        if self._bucket_binned:
            return targeted  # each bucket's records in their own partition already (_binned_by_bucket)
        return targeted.repartition(max(1, num_bins), MERGE_BIN)

    def _require_empty_buckets(self, timeline: Timeline) -> None:
        """bulk_insert under the BUCKET index writes a new file group per bucket, so (as in Hudi, where a second
        group of a bucket makes every later write fail) the batch's partitions must hold no file groups yet."""
        held = sorted({s.partition_path for s in FileSystemView.load(
            self.storage, timeline, partitions=self._partitions).latest_file_slices(self._partitions)})
        if held:
            raise InvalidConfigError(
                IndexConfig.TYPE.key, self.config.get(IndexConfig.TYPE),
                f"bulk_insert with the BUCKET index writes a new file group per bucket, but partition(s) "
                f"{', '.join(repr(p) for p in held[:5])} already hold file groups; use insert or upsert")

    def _global_lookup(self, operation: WriteOperation) -> bool:
        # The prepared records always carry every table column (absent ones as nulls), so whether the
        # batch named its partitions is decided in _prepare, from the caller's DataFrame.
        index_global = IndexConfig.is_global(self.config.get(IndexConfig.TYPE))
        return index_global or (operation == WriteOperation.DELETE and self._delete_by_key_only)

    def _needs_all_partitions(self, operation: WriteOperation) -> bool:
        return operation == WriteOperation.INSERT_OVERWRITE_TABLE or (
            operation.uses_index and self._global_lookup(operation))

    def _tag_and_assign(self, records: DataFrame, operation: WriteOperation, view: FileSystemView,
                        timeline: Timeline, inflight: Instant) -> DataFrame:
        is_global = self._global_lookup(operation)
        if self._batch_keys is not None and not is_global:
            return self._tag_and_assign_on_driver(records, view, timeline, inflight,
                                                  tasks_group_rows=self._appends_logs(operation))
        if self._batch_keys is not None:
            targeted = self._tag_and_assign_global_on_driver(records, operation, view, timeline, inflight)
            if targeted is not None:
                return targeted
        index = index_for(self.config, force_global=is_global)
        located = index.locate(self.spark, records, self.storage, view.latest_base_files())
        # Persisted: planning the inserts and the merge both read it; the lookup should run once.
        tagged = tag(records, located, by_partition=not is_global).persist()
        self._cached.append(tagged)
        found = F.col(LOC_FILE_ID).isNotNull()
        moved = found & F.col(PARTITION_PATH).isNotNull() & (F.col(PARTITION_PATH) != F.col(LOC_PARTITION))
        if is_global and self._update_partition_path() and operation == WriteOperation.UPSERT:
            # The key moved partitions: delete it where it was, insert it where it now belongs.
            old_side = tagged.filter(moved).withColumn(OP, F.lit(OP_DELETE))
            for field in ordering_fields(self.ordering_field):
                # The old copy goes whatever its ordering value: merge only skips deletes that carry one.
                old_side = old_side.withColumn(field, F.lit(None).cast(tagged.schema[field].dataType))
            new_side = tagged.filter(moved).withColumn(LOC_FILE_ID, F.lit(None).cast("string"))
            tagged = tagged.filter(~moved).unionByName(old_side).unionByName(new_side)
        updates = tagged.filter(F.col(LOC_FILE_ID).isNotNull()).withColumn(
            PARTITION_PATH, F.col(LOC_PARTITION)).withColumn(TARGET_FILE_ID, F.col(LOC_FILE_ID))
        inserts = tagged.filter(F.col(LOC_FILE_ID).isNull() & (F.col(OP) == OP_UPSERT)).withColumn(
            TARGET_FILE_ID, F.lit(None).cast("string"))
        updates = updates.drop(LOC_FILE_ID, LOC_PARTITION)
        inserts = inserts.drop(LOC_FILE_ID, LOC_PARTITION)
        self._reject_updates_under_clustering(updates, timeline)
        return updates.unionByName(self._assigner.assign_inserts(inserts, view))

    def _tag_and_assign_on_driver(self, records: DataFrame, view: FileSystemView, timeline: Timeline,
                                  inflight: Instant, *, tasks_group_rows: bool = False) -> DataFrame:
        """:meth:`_tag_and_assign` with the batch keys located on the driver (see :meth:`_driver_lookup`);
        ``tasks_group_rows``: the tasks append logs (a deltacommit) and split their rows by file group."""
        keys = self._batch_keys
        latest = view.latest_base_files(self._partitions)

        def lookup(files: list, **trust) -> pa.Table:
            return locate_on_driver(self.storage, keys.select([RECORD_KEY, PARTITION_PATH]), files, is_global=False,
                                    prune_by_ranges=self.config.get(IndexConfig.BLOOM_PRUNE_BY_RANGES),
                                    virtual=virtual_keys(self.config),
                                    use_metadata=self.config.get(IndexConfig.BLOOM_USE_METADATA),
                                    prefetched=self._prefetched_keys(), presorted=self._sorted_keys, **trust)

        # The file taking a partition's inserts is not looked up on the driver (see _insert_files); its merge task
        # tells its updates from inserts, as it reads the file's keys anyway. Merge-on-read too: a small file
        # taking inserts is merged into a new base file (Hudi's small-file handling), not appended to.
        deferred = self._insert_files(view)
        # Copy-on-write: so do the other files for the keys no other file's range holds (bloom positives sent
        # unconfirmed, see locate_on_driver). Not merge-on-read: an update appended to a log must be confirmed.
        trust = {} if tasks_group_rows else dict(
            unconfirmed_max_file_size=self.config.get(StorageConfig.PARQUET_MAX_FILE_SIZE),
            ranged_only=list(deferred.values()), confirmed_only=frozenset(self._held_from_inserts(timeline)))
        located = lookup([bf for bf in latest if deferred.get(bf.partition_path) is not bf], **trust)
        rest = _not_located(keys, located)
        new = rest.filter(pc.equal(rest.column(OP), OP_UPSERT))
        if tasks_group_rows:
            # Merge-on-read: the file merges as a small file only where the partition has inserts; where no key
            # proves one, it is looked up before the plan (a plan counting its updates may sample the batch).
            unsure = {p for p, bf in deferred.items() if not self._inserts_certain(new, p, bf)}
            if unsure:
                located = pa.concat_tables([located, lookup([deferred[p] for p in sorted(unsure)])])
                rest = _not_located(keys, located)
                new = rest.filter(pc.equal(rest.column(OP), OP_UPSERT))
                deferred = {p: bf for p, bf in deferred.items() if p not in unsure}
        small_before = set(self._assigner.small_file_groups)
        buckets = self._insert_buckets(records, new, view) if deferred else None
        confirm = [bf for p, bf in deferred.items() if not _takes_all_inserts(buckets, p, bf, rest)]
        if confirm:  # the plan spreads those partitions' inserts further, or deletes may be there: look them up
            located = pa.concat_tables([located, lookup(confirm)])
            rest = _not_located(keys, located)
            new, buckets = rest.filter(pc.equal(rest.column(OP), OP_UPSERT)), None
            # The small files are those of the plan of the true inserts (merge-on-read: a small file that takes
            # none appends its updates to logs, as in Java, where only partitions with inserts have small files).
            self._assigner.small_file_groups = small_before
        new, partitions, file_ids, labels, num_bins = self._targets_on_driver(records, located, new, view, latest,
                                                                              timeline, buckets)
        targets = target_table(
            pa.concat_arrays([t.column(RECORD_KEY).combine_chunks().cast(pa.string()) for t in (located, new)]),
            partitions, file_ids, labels)
        if targets.num_rows == keys.num_rows and pc.count_distinct(partitions).as_py() == 1 \
                and not partitions.null_count and pc.count_distinct(file_ids).as_py() == 1:
            # Every record has a target (no repeated key, no delete of an absent one) and all go to one file group
            # (SF 1's concentrated upsert: 360k records into one file): the target is a constant, not a join
            # (copy-on-write: a broadcast job and a hash join the JVM plans and compiles, one Spark job fewer;
            # merge-on-read: no targets file written on the driver and joined in the task). The partition path and
            # file id are not shipped either: the task adds them (log_append.each_file_group), where the JVM would
            # convert two constant strings per record to Arrow (SF 1: ~0.05 JVM CPU s of ~0.7 s of hand-off).
            self._one_target = (partitions[0].as_py(), file_ids[0].as_py())
            return self._one_target_rows(records)
        if tasks_group_rows and self._one_deltacommit_task(partitions, file_ids):
            self._targets_in_task = write_targets(self.storage, instant_temp_dir(inflight.timestamp), targets)
            return records.coalesce(1)
        return attach_targets(self.spark, records, targets, self.storage, instant_temp_dir(inflight.timestamp),
                              num_bins)

    def _one_deltacommit_task(self, partitions: pa.Array, file_ids: pa.Array) -> bool:
        """Whether a deltacommit's records, whose target groups are (``partitions``, ``file_ids``) per record, are
        written in one task: when the groups but the largest take at most ONE_TASK_MINOR_SHARE of them and
        none of those is a small file merged into a new base file. A log append (or a new group's file) costs
        what its incoming records cost, so that task is at most a quarter longer than the largest group's, and
        Spark neither broadcasts the targets nor shuffles the batch."""
        if not len(file_ids):
            return False
        counts = pa.table({"p": partitions, "f": file_ids}).group_by(["p", "f"]).aggregate([([], "count_all")])
        groups = list(zip(counts.column("p").to_pylist(), counts.column("f").to_pylist(),
                          counts.column("count_all").to_pylist()))
        largest = max(groups, key=lambda g: g[2])
        if any((p, f) in self._assigner.small_file_groups for p, f, _ in groups if (p, f, _) != largest):
            return False
        return len(file_ids) - largest[2] <= ONE_TASK_MINOR_SHARE * len(file_ids)

    def _tag_and_assign_global_on_driver(self, records: DataFrame, operation: WriteOperation, view: FileSystemView,
                                         timeline: Timeline, inflight: Instant) -> DataFrame | None:
        """:meth:`_tag_and_assign` of a global index with the batch keys on the driver (:mod:`global_targets`);
        None where Spark must locate them: a batch repeating a key (not combined), a record index not built yet
        or past hoodie.record.index.driver.lookup.max.keys."""
        keys = self._batch_keys
        if not self._unique_keys and rec.has_duplicate_keys(keys, by_partition=False):
            return None
        latest = view.latest_base_files()
        index = index_for(self.config, force_global=True)
        if isinstance(index, RecordLevelIndex):
            located = index.locate_on_driver(self.storage, keys.column(RECORD_KEY), latest)
        else:
            located = locate_on_driver(self.storage, keys.select([RECORD_KEY, PARTITION_PATH]), latest,
                                       is_global=True,
                                       prune_by_ranges=self.config.get(IndexConfig.BLOOM_PRUNE_BY_RANGES),
                                       virtual=virtual_keys(self.config),
                                       use_metadata=self.config.get(IndexConfig.BLOOM_USE_METADATA))
        if located is None:
            return None
        plan = global_targets.split(keys, located,
                                    moves=operation == WriteOperation.UPSERT and self._update_partition_path())
        new, partitions, file_ids, labels, num_bins = self._targets_on_driver(records, plan.located, plan.new,
                                                                              view, latest, timeline)
        targets = global_targets.global_target_table(
            [t.column(RECORD_KEY) for t in (plan.located, new)],
            [t.column(PARTITION_PATH) for t in (plan.located, new)], partitions, file_ids, labels,
            [plan.located.column(global_targets.MOVED_OUT), pa.repeat(pa.scalar(False), new.num_rows)])
        joined = attach_targets(self.spark, records, targets, self.storage, instant_temp_dir(inflight.timestamp),
                                num_bins, global_targets.GLOBAL_TARGETS_SCHEMA)
        return global_targets.settle(joined, ordering_fields(self.ordering_field))

    def _insert_files(self, view: FileSystemView) -> dict[str, BaseFile]:
        """Per partition of the batch, the file the insert plan fills first (:func:`plan_insert_buckets`: the
        smallest small file that may take inserts). When it takes all of the partition's inserts, a batch key
        found in no other file of the partition goes to it whether the file holds it (an update) or not (an
        insert), so the driver need not read its keys: the targets are those of looking it up."""
        limit = self.config.get(StorageConfig.PARQUET_SMALL_FILE_LIMIT)
        if limit <= 0:
            return {}
        out: dict[str, BaseFile] = {}
        for partition, files in self._assigner.insert_candidates(view, self._partitions).items():
            small = [bf for bf in files if bf.size < limit]
            if small:
                out[partition] = min(small, key=lambda bf: bf.size)
        return out

    def _inserts_certain(self, new: pa.Table, partition: str, insert_file: BaseFile) -> bool:
        """Whether ``partition`` surely has inserts though ``insert_file`` was not looked up: a record of ``new``
        (upserts located in no other file) there has a key outside the file's key range, or one its bloom filter
        rejects (:func:`lacks_one`). A deltacommit needs it: the file merges as a small file only if the partition
        has inserts (Java's small files are those of partitions with inserts); else its updates go to its logs."""
        mine = new.filter(pc.equal(new.column(PARTITION_PATH), partition)).column(RECORD_KEY).combine_chunks()
        lo, hi = key_ranges(self.storage, [insert_file])[0]
        if lo is not None and hi is not None and pc.any(pc.or_(pc.less(mine, lo), pc.greater(mine, hi))).as_py():
            return True
        # A key the file's bloom filter rejects is not there either (SF 0.25: the range holds every key; reading
        # the file's 713k keys to look it up cost 0.26 CPU s, the filter's sample 0.02).
        return virtual_keys(self.config) is None and lacks_one(self.storage, insert_file, mine)

    def _insert_buckets(self, records: DataFrame, new: pa.Table, view: FileSystemView) -> list[InsertBucket]:
        """Where the ``new`` records (RECORD_KEY, PARTITION_PATH) go: the insert plan of their counts."""
        counts = new.group_by([PARTITION_PATH]).aggregate([([], "count_all")])
        insert_counts = dict(zip(counts.column(PARTITION_PATH).to_pylist(), counts.column("count_all").to_pylist()))
        upserts = pc.sum(pc.equal(self._batch_keys.column(OP), OP_UPSERT)).as_py() or 0
        return self._assigner.insert_buckets(insert_counts, view,
                                             (lambda: records.filter(F.col(OP) == OP_UPSERT), upserts))

    def _targets_on_driver(self, records: DataFrame, located: pa.Table, new: pa.Table, view: FileSystemView,
                           latest: list, timeline: Timeline, buckets: list[InsertBucket] | None = None,
                           ) -> tuple[pa.Table, pa.Array, pa.Array, pa.Array, int]:
        """Every record's target, known on the driver: updates keep the file group they were ``located`` in
        (LOC_PARTITION, LOC_FILE_ID), ``new`` records (RECORD_KEY, PARTITION_PATH) take the insert bucket their key
        hashes into (``buckets``: the insert plan of ``new`` when made already). Returns ``new``'s unique keys,
        then (partition, file id, merge bin label) per row of ``located`` and of those keys, and the number of
        merge bins."""
        groups = located.group_by([LOC_PARTITION, LOC_FILE_ID]).aggregate([])
        self._reject_targets_under_clustering(
            set(zip(groups.column(LOC_PARTITION).to_pylist(), groups.column(LOC_FILE_ID).to_pylist())), timeline)
        ranges = hash_ranges(buckets if buckets is not None else self._insert_buckets(records, new, view))
        if not self._unique_keys:  # a batch that is not combined may repeat a key: each of its records gets the target
            new = new.group_by([RECORD_KEY, PARTITION_PATH]).aggregate([])
        partitions = pa.concat_arrays([located.column(LOC_PARTITION).combine_chunks().cast(pa.string()),
                                       new.column(PARTITION_PATH).combine_chunks().cast(pa.string())])
        file_ids = pa.concat_arrays([located.column(LOC_FILE_ID).combine_chunks().cast(pa.string()),
                                     assign_by_ranges(new.column(RECORD_KEY), new.column(PARTITION_PATH), ranges)])
        pairs = pa.table({"p": partitions, "f": file_ids}).group_by(["p", "f"]).aggregate([([], "count_all")])
        num_bins, label_of = self._place_file_groups(dict(zip(
            zip(pairs.column("p").to_pylist(), pairs.column("f").to_pylist()),
            pairs.column("count_all").to_pylist())), latest)
        return new, partitions, file_ids, row_labels(partitions, file_ids, label_of), num_bins

    def _place_file_groups(self, counts: dict[tuple[str, str], int], latest: list,
                           ) -> tuple[int, dict[tuple[str, str], int]]:
        """The number of merge tasks and the bin label of each (partition, file id) receiving ``counts``
        records (:func:`task_placement.place_file_groups`)."""
        configured = self.config.get(WriteConfig.WRITE_PARALLELISM)
        return place_file_groups(counts, {(bf.partition_path, bf.file_id): bf.size for bf in latest},
                                 self._assigner.sizing().record_size, configured if configured > 0 else None)

    def _reject_targets_under_clustering(self, targets: set[tuple[str, str]], timeline: Timeline) -> None:
        """:meth:`_reject_updates_under_clustering` for update targets known on the driver."""
        if self.config.get(ClusteringConfig.UPDATES_STRATEGY) != REJECT_UPDATE_STRATEGY:
            return
        owner = self._pending_clustering(timeline)
        hits = sorted(t for t in targets if t in owner)
        if hits:
            raise ClusteringUpdateError(owner[hits[0]], [h[1] for h in hits[:100]])

    def _pending_clustering(self, timeline: Timeline) -> dict[tuple[str, str], str]:
        """(partition, file id) -> plan instant of every pending clustering input; read once per write."""
        if self._clustering_inputs is None:
            self._clustering_inputs = {fg: t for t, fgs in pending_clustering_file_groups(self.storage, timeline)
                                       .items() for fg in fgs}
        return self._clustering_inputs

    def _pending_compaction(self, timeline: Timeline) -> dict[tuple[str, str], str]:
        """(partition, file id) -> plan instant of every pending compaction's file group; read once per write."""
        if self._compaction_inputs is None:
            self._compaction_inputs = pending_compaction_file_groups(self.storage, timeline)
        return self._compaction_inputs

    def _reject_updates_under_clustering(self, updates: DataFrame, timeline: Timeline) -> None:
        """Hudi's SparkRejectUpdateStrategy: updates and deletes may not touch a pending clustering's groups."""
        if self.config.get(ClusteringConfig.UPDATES_STRATEGY) != REJECT_UPDATE_STRATEGY:
            return
        owner = self._pending_clustering(timeline)
        if not owner:
            return  # the common case costs no Spark job
        pending = self.spark.createDataFrame(sorted(owner), "c_partition string, c_file_id string")
        hits = (updates.select(PARTITION_PATH, TARGET_FILE_ID).distinct()
                .join(F.broadcast(pending), (F.col(PARTITION_PATH) == F.col("c_partition"))
                      & (F.col(TARGET_FILE_ID) == F.col("c_file_id")))
                .select("c_partition", "c_file_id").limit(100).collect())
        if hits:
            raise ClusteringUpdateError(owner[(hits[0][0], hits[0][1])], [h[1] for h in hits])

    def _update_partition_path(self) -> bool:
        from hoodpy.config.index import GLOBAL_BLOOM, RECORD_INDEX

        if self.config.get(IndexConfig.TYPE) == GLOBAL_BLOOM:
            return self.config.get(IndexConfig.BLOOM_UPDATE_PARTITION_PATH)
        if self.config.get(IndexConfig.TYPE) == RECORD_INDEX:
            return self.config.get(IndexConfig.RECORD_INDEX_UPDATE_PARTITION_PATH)
        return self.config.get(IndexConfig.SIMPLE_UPDATE_PARTITION_PATH)

    def _held_from_inserts(self, timeline: Timeline) -> set[tuple[str, str]]:
        """File groups that take no inserts: under a pending clustering plan (Hudi's UpsertPartitioner), and
        (merge-on-read) under a pending compaction."""
        held = set(self._pending_clustering(timeline))
        if self.merge_on_read:
            held |= set(self._pending_compaction(timeline))
        return held

    def _bulk_insert(self, records: DataFrame, merge_ctx: MergeContext, timeline: Timeline) -> list:
        rows = records.filter(F.col(OP) == OP_UPSERT)
        mode = self.config.get(WriteConfig.BULK_INSERT_SORT_MODE)
        warn_unhonoured_sort_columns(self.config)
        if mode != bulk_modes.GLOBAL_SORT:  # needs no counts: an empty batch's tasks write nothing
            if self._upsert_count == 0:
                return []
            rows, task_keygen, task_partition = bulk_modes.task_columns(rows, mode, self.keygen,
                                                                        merge_ctx.data_schema)
            rows, decimals = decimal_transfer.ship(rows)
            known = self._assigner.known_sizing()
            if known is not None:
                ctx = bulk_modes.RollingContext(merge_ctx, known.records_per_new_file, keygen=task_keygen,
                                                partition_path=task_partition, decimals=decimals)
            else:  # a first load: its tasks measure their own rows' size (no Spark job to sample the batch)
                ctx = bulk_modes.RollingContext(merge_ctx, None, self._assigner.unmeasured_sizing(),
                                                self._assigner.bloom_overhead(), task_keygen, task_partition,
                                                decimals)
            with self._arrow_batches():
                stats_rows = bulk_modes.write_in_place(rows, mode, self.config.get(WriteConfig.WRITE_PARALLELISM),
                                                       ctx, self.keygen.record_key_fields)
            return commit_step.write_stats_from_rows(r.asDict() for r in stats_rows)
        counts = self._upsert_counts if self._upsert_count is not None else {
            r[0]: r[1] for r in rows.groupBy(PARTITION_PATH).count().collect()}
        counts = {p: n for p, n in counts.items() if p is not None and n}
        if not counts:
            return []
        # One sample serves both the record size (when the table has not measured one) and the key bounds.
        sample = self._assigner.sample(rows, sum(counts.values()))
        sizing = self._assigner.sizing(lambda: sample, sort=True)
        plan = plan_files(counts, sample.select([PARTITION_PATH, RECORD_KEY]), sizing.records_per_new_file)
        configured = self.config.get(WriteConfig.WRITE_PARALLELISM)
        tasks = min(configured, len(plan)) if configured > 0 else len(plan)
        labels = file_task_labels(len(plan), tasks)
        bounds = self.spark.createDataFrame(
            [(f.index, f.partition_path, f.low, f.high, labels[f.index]) for f in plan],
            "b_file int, b_partition string, b_low string, b_high string, b_task int")
        in_range = ((F.col(PARTITION_PATH) == F.col("b_partition"))
                    & (F.col("b_low").isNull() | (F.col(RECORD_KEY) >= F.col("b_low")))
                    & (F.col("b_high").isNull() | (F.col(RECORD_KEY) < F.col("b_high"))))
        tagged = rows.join(F.broadcast(bounds), in_range, "left").withColumnRenamed("b_file", BULK_FILE) \
            .drop("b_partition", "b_low", "b_high")
        # Each planned file goes to the task its label names (one file a task unless parallelism is set lower).
        ordered = tagged.repartition(tasks, "b_task").drop("b_task") \
            .sortWithinPartitions(BULK_FILE, PARTITION_PATH, RECORD_KEY)
        ordered, decimals = decimal_transfer.ship(ordered)
        ctx = BulkInsertContext(merge_ctx, decimals)
        with self._arrow_batches():
            stats_rows = ordered.mapInArrow(lambda it: bulk_insert_partition(ctx, it), WRITE_STATS_DDL).collect()
        return commit_step.write_stats_from_rows(r.asDict() for r in stats_rows)

"""Where inserts go: small existing file groups first, then new file groups sized to the max file size.

Hudi's UpsertPartitioner / BucketAssigner. Planning is pure (:func:`plan_insert_buckets`): per partition, fill
each small file up to ``hoodie.parquet.max.file.size`` at the estimated record size, then cut the rest into new
file groups. A merge-on-read write (SparkUpsertDeltaCommitPartitioner) offers only the
``hoodie.merge.small.file.group.candidates.limit`` smallest base-file-only slices of a partition (default 1): each
small file taking inserts has its base file rewritten whole, so the limit bounds that cost per deltacommit.
Records are then spread over a partition's buckets by a hash of the record key, in proportion to the bucket
weights (as Hudi does), so the assignment needs no sort. :class:`BucketAssigner` holds one write's
decisions: its sizing (bytes per record, from the timeline or a sample of the batch) and which existing file
groups took inserts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hoodpy.config import HoodieConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import new_file_id
from hoodpy.index.bloom_filter import serialized_sizes
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.timeline.timeline import Timeline
from hoodpy.write.merge import TARGET_FILE_ID, MergeContext
from hoodpy.write.record_size import SAMPLE_ROWS, encoded_record_size, sample_records

HASH_SPACE = 1 << 20
# A commit whose base files hold this many records sizes new files as well as a sample of the batch would.
MEASURED_MIN_RECORDS = SAMPLE_ROWS


@dataclass(frozen=True)
class InsertBucket:
    partition_path: str
    file_id: str
    records: int
    small_file: BaseFile | None = None  # an existing file group receiving inserts


@dataclass(frozen=True)
class SizingConfig:
    max_file_size: int
    small_file_limit: int
    record_size: int
    auto_split: bool = True
    insert_split_size: int = 500000
    # How many of a partition's small files (the smallest first) may take inserts; None: all (copy-on-write).
    small_file_candidates: int | None = None
    # Bytes a new file holds besides its records (the footer's bloom filter), as it grows with the record
    # count: (most records at this size, None for any; bytes), ascending. Empty when ``record_size`` already
    # includes them (an average of written files).
    file_overhead: tuple[tuple[int | None, int], ...] = ()

    @property
    def records_per_new_file(self) -> int:
        if not self.auto_split:
            return max(1, self.insert_split_size)
        record_size = max(1, self.record_size)
        fits = self.max_file_size // record_size
        # The most records any overhead step leaves room for; the overhead alone may exceed a tiny target, then
        # it is not counted (the target cannot be met anyway).
        within = [min(fits if most is None else most, (self.max_file_size - size) // record_size)
                  for most, size in self.file_overhead if size < self.max_file_size]
        return max(1, max(within) if within else fits)


def with_measured_record_size(sizing: SizingConfig, bytes_per_record: float,
                              bloom_overhead: tuple[tuple[int | None, int], ...]) -> SizingConfig:
    """``sizing`` with a record size measured by encoding records (not an average of written files, which
    includes their footers): each new file's bloom filter (``bloom_overhead``) is counted besides."""
    return replace(sizing, record_size=max(1, math.ceil(bytes_per_record)), file_overhead=bloom_overhead)


def average_record_size(timeline: Timeline, small_file_limit: int, threshold: float) -> int | None:
    """Bytes per record from the newest commit that wrote enough to be representative (Hudi's rule); None
    when no commit did. Only base files count: log records (row-wise Avro, or a parquet block each) say
    nothing of a base file's size, so Hudi weighs a deltacommit by its base-file stats alone."""
    floor = threshold * small_file_limit
    for instant in reversed(timeline.completed_commits()):
        stats = [s for s in timeline.commit_metadata(instant).write_stats if not s.is_log_write]
        total_bytes = sum(s.total_write_bytes for s in stats)
        total_records = sum(s.num_writes for s in stats)
        if total_bytes > floor and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return None


def measured_record_size(timeline: Timeline, file_overhead: tuple[tuple[int | None, int], ...],
                         min_records: int) -> int | None:
    """Bytes per record of the base files the newest commit wrote, when they hold ``min_records`` or more but
    the commit fell below Hudi's representative floor (:func:`average_record_size`): each file's bloom filter
    (``file_overhead``, see :class:`SizingConfig`) is taken off its size, as the floor exists because a small
    commit's footers inflate its average. Such files are the batch's own encoding at full scale, so they size
    new files at least as well as a sample would, without a Spark job to draw one."""
    for instant in reversed(timeline.completed_commits()):
        stats = [s for s in timeline.commit_metadata(instant).write_stats if not s.is_log_write and s.num_writes]
        records = sum(s.num_writes for s in stats)
        if not records:
            continue
        if records < min_records:
            return None  # the newest commit that wrote base files decides, as in average_record_size
        data = sum(max(0, s.total_write_bytes - _overhead_of(s.num_writes, file_overhead)) for s in stats)
        return max(1, math.ceil(data / records))
    return None


def _overhead_of(records: int, file_overhead: tuple[tuple[int | None, int], ...]) -> int:
    return next((size for most, size in file_overhead if most is None or records <= most), 0)


def plan_insert_buckets(insert_counts: dict[str, int], small_files: dict[str, list[BaseFile]],
                        sizing: SizingConfig) -> list[InsertBucket]:
    """Buckets per partition whose record counts add up to that partition's inserts."""
    buckets: list[InsertBucket] = []
    for partition, total in sorted(insert_counts.items()):
        remaining = total
        if sizing.small_file_limit > 0:
            candidates = sorted((bf for bf in small_files.get(partition, []) if bf.size < sizing.small_file_limit),
                                key=lambda b: b.size)
            if sizing.small_file_candidates is not None:
                candidates = candidates[:max(0, sizing.small_file_candidates)]
            for bf in candidates:
                if remaining <= 0:
                    break
                capacity = (sizing.max_file_size - bf.size) // max(1, sizing.record_size)
                take = min(remaining, capacity)
                if take > 0:
                    buckets.append(InsertBucket(partition, bf.file_id, take, bf))
                    remaining -= take
        per_file = sizing.records_per_new_file
        while remaining > 0:
            take = min(remaining, per_file)
            buckets.append(InsertBucket(partition, new_file_id(), take))
            remaining -= take
    return buckets


def hash_ranges(buckets: list[InsertBucket]) -> list[tuple[str, str, int, int]]:
    """(partition, file id, low, high): each bucket's share of [0, HASH_SPACE) within its partition."""
    by_partition: dict[str, list[InsertBucket]] = {}
    for b in buckets:
        by_partition.setdefault(b.partition_path, []).append(b)
    out = []
    for partition, group in by_partition.items():
        total = sum(b.records for b in group)
        low = 0
        for i, b in enumerate(group):
            high = HASH_SPACE if i == len(group) - 1 else low + round(HASH_SPACE * b.records / total)
            out.append((partition, b.file_id, low, high))
            low = high
    return out


class BucketAssigner:
    """One write's insert placement and file sizing, decided on the driver. ``held()`` names the (partition,
    file id) groups that may take no inserts (under a pending clustering, or a pending compaction)."""

    def __init__(self, spark: SparkSession, config: HoodieConfig, timeline: Timeline, merge_ctx: MergeContext,
                 held: Callable[[], set[tuple[str, str]]], *, merge_on_read: bool):
        self.spark = spark
        self.config = config
        self.timeline = timeline
        self.merge_ctx = merge_ctx
        self.held = held
        self.merge_on_read = merge_on_read
        # Existing file groups that took inserts as small files (merge-on-read: merged into a new base file, not
        # appended to).
        self.small_file_groups: set[tuple[str, str]] = set()
        # The (partition path, file id) of every group :meth:`assign_inserts` sent inserts to, in plan order.
        self.insert_groups: list[tuple[str, str]] = []
        self._sizing: SizingConfig | None = None

    def assign_inserts(self, inserts: DataFrame, view: FileSystemView | None) -> DataFrame:
        """``inserts`` with a target file group each (small files of ``view`` first, then new groups)."""
        counts = {r[0]: r[1] for r in inserts.groupBy(PARTITION_PATH).count().collect()}
        buckets = self.insert_buckets(counts, view, (lambda: inserts, sum(counts.values())))
        self.insert_groups = [(b.partition_path, b.file_id) for b in buckets]
        if not buckets:
            return inserts.limit(0)
        ranges = self.spark.createDataFrame(hash_ranges(buckets), "b_partition string, b_file_id string, "
                                            "b_low long, b_high long")
        h = F.pmod(F.xxhash64(F.col(RECORD_KEY)), F.lit(HASH_SPACE))
        return inserts.join(
            F.broadcast(ranges),
            (F.col(PARTITION_PATH) == F.col("b_partition")) & (h >= F.col("b_low")) & (h < F.col("b_high")),
        ).withColumn(TARGET_FILE_ID, F.col("b_file_id")).drop("b_partition", "b_file_id", "b_low", "b_high")

    def insert_candidates(self, view: FileSystemView, partitions) -> dict[str, list[BaseFile]]:
        """Per partition of ``partitions``, the base files that may take inserts (those below the small file
        limit do, :func:`plan_insert_buckets`). File groups under a pending clustering plan take none (Hudi's
        UpsertPartitioner), nor (merge-on-read) slices with log files: a small file's inserts rewrite its base
        file, which would need its logs."""
        held = self.held()
        small: dict[str, list[BaseFile]] = {}
        for s in view.latest_file_slices(partitions):
            if s.base_file is not None and not s.log_files and (s.partition_path, s.file_id) not in held:
                small.setdefault(s.partition_path, []).append(s.base_file)
        return small

    def insert_buckets(self, counts: dict[str, int], view: FileSystemView | None,
                       source: tuple[Callable[[], DataFrame], int] | None = None) -> list[InsertBucket]:
        """Where ``counts`` inserts per partition go: small file groups of ``view`` first, then new groups;
        ``source`` (a function giving the records holding the inserts, how many) is sampled if new files need a
        record size (the DataFrame is built only then: building one costs JVM calls)."""
        small = self.insert_candidates(view, counts) if view is not None else {}
        sample = None
        if source is not None and source[1] > 0 and sum(counts.values()) > 0:
            records, total = source

            def sample() -> pa.Table:
                return self.sample(records(), total)
        buckets = plan_insert_buckets(counts, small, self.sizing(sample))
        self.small_file_groups |= {(b.partition_path, b.file_id) for b in buckets if b.small_file is not None}
        return buckets

    def sizing(self, sample: Callable[[], pa.Table] | None = None, *, sort: bool = False) -> SizingConfig:
        """How this write sizes new files, decided at the first call. Bytes per record come from the newest
        commit that wrote enough (Hudi's rule); without one, from hoodie.copyonwrite.record.size.estimate if
        set, else from the base files of a commit holding at least a sample's worth of records
        (:func:`measured_record_size`), else measured by encoding ``sample()`` (records of the batch; ``sort``:
        as bulk_insert orders them), with the footer's bloom filter counted per file; else the estimate's
        default."""
        sizing = self.known_sizing()  # the decided sizing, once there is one
        if sizing is None:
            sizing = self.unmeasured_sizing()
            rows = sample() if sample is not None else None
            if rows is not None and rows.num_rows:
                ctx = self.merge_ctx
                sizing = with_measured_record_size(
                    sizing, encoded_record_size(rows, ctx.data_schema, ctx.options, sort=sort,
                                                instant_time=ctx.instant_time), self.bloom_overhead())
        self._sizing = sizing
        return sizing

    def known_sizing(self) -> SizingConfig | None:
        """:meth:`sizing` when it needs no records of the batch; None when the bytes per record must be measured
        from them (a first load with no estimate set: :meth:`sizing` samples the batch, or the write tasks
        encode their own first rows, see :func:`with_measured_record_size`). Fixed as the write's sizing when
        known."""
        if self._sizing is not None:
            return self._sizing
        c = self.config
        record_size = average_record_size(self.timeline, c.get(StorageConfig.PARQUET_SMALL_FILE_LIMIT),
                                          c.get(StorageConfig.RECORD_SIZE_ESTIMATION_THRESHOLD))
        if record_size is not None:
            self._sizing = replace(self.unmeasured_sizing(), record_size=record_size)
        elif c.is_set(StorageConfig.RECORD_SIZE_ESTIMATE):
            self._sizing = self.unmeasured_sizing()
        else:
            bloom = self.bloom_overhead()
            measured = measured_record_size(self.timeline, bloom, MEASURED_MIN_RECORDS)
            if measured is not None:
                self._sizing = replace(self.unmeasured_sizing(), record_size=measured, file_overhead=bloom)
        return self._sizing

    def unmeasured_sizing(self) -> SizingConfig:
        """The table's sizing options with hoodie.copyonwrite.record.size.estimate as the bytes per record."""
        c = self.config
        return SizingConfig(
            max_file_size=c.get(StorageConfig.PARQUET_MAX_FILE_SIZE),
            small_file_limit=c.get(StorageConfig.PARQUET_SMALL_FILE_LIMIT),
            record_size=c.get(StorageConfig.RECORD_SIZE_ESTIMATE), auto_split=c.get(StorageConfig.INSERT_AUTO_SPLIT),
            insert_split_size=c.get(StorageConfig.INSERT_SPLIT_SIZE),
            small_file_candidates=c.get(StorageConfig.SMALL_FILE_GROUP_CANDIDATES_LIMIT) if self.merge_on_read
            else None,
        )

    def bloom_overhead(self) -> tuple[tuple[int | None, int], ...]:
        """The footer's bloom filter bytes by a new file's record count (see :class:`SizingConfig`)."""
        o = self.merge_ctx.options
        return tuple(serialized_sizes(o.bloom_num_entries, o.bloom_fpp, o.bloom_max_entries))

    def sample(self, records: DataFrame, total: int) -> pa.Table:
        """A bounded random sample of ``records`` (``total`` rows): record key, partition path, data columns."""
        data = self.merge_ctx.data_schema
        schema = pa.schema([pa.field(RECORD_KEY, pa.string()), pa.field(PARTITION_PATH, pa.string()), *data])
        return sample_records(records.select(*schema.names), total, schema)

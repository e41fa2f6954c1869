"""Where inserts go: small existing file groups first, then new file groups sized to the max file size.

Planning is pure (Hudi's UpsertPartitioner): per partition, fill each small file up to
``hoodie.parquet.max.file.size`` at the estimated record size, then cut the rest into new file groups.
Records are then spread over a partition's buckets by a hash of the record key, in proportion to the
bucket weights (as Hudi does), so the assignment needs no sort.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import new_file_id
from hoodpy.timeline.timeline import Timeline

HASH_SPACE = 1 << 20


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


def plan_insert_buckets(insert_counts: dict[str, int], small_files: dict[str, list[BaseFile]],
                        sizing: SizingConfig) -> list[InsertBucket]:
    """Buckets per partition whose record counts add up to that partition's inserts."""
    buckets: list[InsertBucket] = []
    for partition, total in sorted(insert_counts.items()):
        remaining = total
        if sizing.small_file_limit > 0:
            for bf in sorted(small_files.get(partition, []), key=lambda b: b.size):
                if remaining <= 0:
                    break
                if bf.size >= sizing.small_file_limit:
                    continue
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

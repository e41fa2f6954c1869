"""Which file slices a compaction plan takes: Hudi 0.14's plan generator with its default strategy,
LogFileSizeBasedCompactionStrategy.

1. Candidates: the latest file slice of every file group that has log files, except groups a pending
   compaction or a pending clustering holds. Log files that pending writes are still writing are left out
   (as Hudi's plan generator leaves out logs of uncommitted delta commits): a write that fails removes them,
   and one that completes after the plan loses a conflict with it.
2. Each slice's metrics (Hudi's FileSliceMetricUtils): its log files' count and total size, the MB read
   (base file + logs), the MB written (the base file's size, or ``hoodie.parquet.max.file.size`` for a slice of
   logs only) and their sum; sizes in whole MB, rounded down.
3. The strategy keeps the slices whose logs total at least ``hoodie.compaction.logfile.size.threshold``
   bytes, largest logs first (ties keep their order), and takes them while ``hoodie.compaction.target.io``
   (MB) lasts: the slice that exhausts the budget is the last one taken (BoundedIOCompactionStrategy).

Pure: no Spark, no I/O beyond the view already listed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from hoodpy.config import HoodieConfig
from hoodpy.config.compaction import CompactionConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.file_group.file_group import FileSlice
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.timeline.compaction_plan import (
    TOTAL_IO_MB,
    TOTAL_IO_READ_MB,
    TOTAL_IO_WRITE_MB,
    TOTAL_LOG_FILES,
    TOTAL_LOG_FILES_SIZE,
    CompactionOperation,
    FileGroupId,
)

MB = 1024 * 1024


def slice_metrics(file_slice: FileSlice, default_base_file_size: int) -> dict[str, float]:
    """The metrics Hudi's compaction strategy captures for one slice, in the plan's key order."""
    log_size = sum(f.size for f in file_slice.log_files if f.size >= 0)
    base_size = file_slice.base_file.size if file_slice.base_file is not None else 0
    read_mb = (base_size + log_size) // MB
    write_mb = (base_size if base_size > 0 else default_base_file_size) // MB
    return {TOTAL_LOG_FILES: float(len(file_slice.log_files)), TOTAL_IO_MB: float(read_mb + write_mb),
            TOTAL_IO_READ_MB: float(read_mb), TOTAL_LOG_FILES_SIZE: float(log_size),
            TOTAL_IO_WRITE_MB: float(write_mb)}


def operation_of(file_slice: FileSlice, metrics: dict[str, float]) -> CompactionOperation:
    """Hudi's CompactionUtils.buildHoodieCompactionOperation: names of the slice's files, logs in log order."""
    logs = sorted(file_slice.log_files, key=lambda f: f.name.order)
    return CompactionOperation(
        partition_path=file_slice.partition_path, file_id=file_slice.file_id,
        base_instant_time=file_slice.base_instant_time,
        data_file_name=file_slice.base_file.file_name if file_slice.base_file is not None else None,
        delta_file_names=tuple(f.file_name for f in logs), metrics=metrics)


def order_and_filter(operations: Sequence[CompactionOperation], config: HoodieConfig) -> list[CompactionOperation]:
    """LogFileSizeBasedCompactionStrategy.orderAndFilter, then BoundedIOCompactionStrategy's IO budget."""
    threshold = config.get(CompactionConfig.LOG_FILE_SIZE_THRESHOLD)
    kept = [op for op in operations if op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0) >= threshold]
    kept.sort(key=lambda op: int(op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0)), reverse=True)  # stable
    remaining = config.get(CompactionConfig.TARGET_IO)
    chosen = []
    for op in kept:
        remaining -= int(op.metrics.get(TOTAL_IO_MB, 0.0))
        chosen.append(op)
        if remaining <= 0:
            break
    return chosen


def candidate_slices(view: FileSystemView, excluded: Iterable[FileGroupId], being_written: Collection[str] = (),
                     ) -> list[FileSlice]:
    """Latest slices with log files, outside the excluded file groups, by (partition, file id); without the
    log files ``being_written`` (paths relative to the base path)."""
    skip = set(excluded)
    slices = (replace(s, log_files=tuple(f for f in s.log_files if f.path not in being_written))
              for s in view.latest_file_slices() if (s.partition_path, s.file_id) not in skip)
    return [s for s in slices if s.log_files]


def plan_operations(view: FileSystemView, excluded: Iterable[FileGroupId], config: HoodieConfig,
                    being_written: Collection[str] = ()) -> list[CompactionOperation]:
    """The operations of a new plan (empty: nothing to compact)."""
    default_size = config.get(StorageConfig.PARQUET_MAX_FILE_SIZE)
    operations = [operation_of(s, slice_metrics(s, default_size))
                  for s in candidate_slices(view, excluded, being_written)]
    return order_and_filter(operations, config)

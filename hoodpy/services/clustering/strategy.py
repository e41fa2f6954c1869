"""Which file slices a clustering plan rewrites: Hudi's size-based plan strategy, pure (no Spark, no I/O).

:func:`plan_clustering` maps the timeline, the file-system view and the config to a
:class:`~hoodpy.services.clustering.plan.ClusteringPlan`, or None. It picks partitions, the eligible file
slices (base file below ``small.file.limit``, a slice of log files only included; not under a pending
clustering or compaction), and cuts them into groups the
way Hudi 0.14's ``PartitionAwareClusteringPlanStrategy`` (used by ``SparkSizeBasedClusteringPlanStrategy``) does:

* per partition, slices sorted by base file size, **largest first** (Hudi's comparator is
  ``o2.size - o1.size``; the sort is stable, so equal sizes keep file-id order);
* a group is closed when adding the next slice would exceed ``max.bytes.per.group``; a partition stops
  after ``max.num.groups`` closed groups; its last, still open group is kept when it holds two or more
  slices, or when sort columns are set or ``single.group.clustering.enabled`` (default true);
* at most ``max.num.groups`` groups in the plan, taken in partition order;
* each group writes ``ceil(group bytes / target.file.max.bytes)`` output file groups;
* merge-on-read: a slice's HoodieSliceInfo lists its log files (newest first, as a Java FileSlice holds them),
  the group metrics count them, and a slice without a base file weighs ``hoodie.parquet.max.file.size``.

Example:
    >>> config = HoodieConfig.of({"hoodie.clustering.plan.strategy.sort.columns": "city"})
    >>> plan_clustering(timeline, view, config).sort_columns
    ('city',)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

import pyarrow as pa

from hoodpy.config import HoodieConfig
from hoodpy.config.clustering import (
    DAY_ROLLING,
    HILBERT,
    RECENT_DAYS,
    SELECTED_PARTITIONS,
    ZORDER,
    ClusteringConfig,
)
from hoodpy.config.storage import StorageConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.file_group import FileSlice, in_java_slice_order
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.services.clustering.layout import is_orderable
from hoodpy.services.clustering.plan import (
    CLUSTERING_PLAN_VERSION,
    ClusteringGroup,
    ClusteringPlan,
    SliceInfo,
    file_groups_in_pending_clustering,
)
from hoodpy.storage import Storage
from hoodpy.timeline.compaction_plan import pending_compaction_file_groups
from hoodpy.timeline.timeline import Timeline

_MB = 1024 * 1024
# FileSliceMetricUtils metric names, as Hudi records them per group.
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"


def select_partitions(partitions: Iterable[str], config: HoodieConfig, *, now: datetime | None = None,
                      ) -> list[str]:
    """Partitions to plan, in planning order (which matters when max.num.groups cuts the plan short).

    ``partition.selected`` wins; otherwise every partition (sorted) matching ``partition.regex.pattern``.
    Then the filter mode: RECENT_DAYS takes, newest name first, ``lookback`` partitions after skipping
    ``skipfromlatest``; SELECTED_PARTITIONS keeps ``begin <= p <= end`` (an unset bound is open, as in
    later Hudi releases; run_clustering sets this mode with only ``partition.selected``); DAY_ROLLING keeps sorted
    partition i when ``i % 24`` equals the current UTC hour.
    """
    selected = config.get(ClusteringConfig.PARTITION_SELECTED)
    if selected:
        parts = list(dict.fromkeys(selected))
    else:
        parts = sorted(set(partitions))
        pattern = config.get(ClusteringConfig.PARTITION_REGEX_PATTERN)
        if pattern:
            regex = re.compile(pattern)
            parts = [p for p in parts if regex.fullmatch(p)]
    mode = config.get(ClusteringConfig.PARTITION_FILTER_MODE)
    if mode == RECENT_DAYS:
        lookback = config.get(ClusteringConfig.DAYBASED_LOOKBACK_PARTITIONS)
        skip = max(config.get(ClusteringConfig.SKIP_PARTITIONS_FROM_LATEST), 0)
        newest_first = sorted(parts, reverse=True)[skip:]
        return newest_first[:lookback] if lookback > 0 else newest_first
    if mode == SELECTED_PARTITIONS:
        begin, end = config.get(ClusteringConfig.BEGIN_PARTITION), config.get(ClusteringConfig.END_PARTITION)
        return [p for p in parts if (begin is None or begin <= p) and (end is None or p <= end)]
    if mode == DAY_ROLLING:
        hour = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).hour
        return [p for i, p in enumerate(sorted(parts)) if i % 24 == hour]
    return parts


def _base_size(s: FileSlice) -> int:
    return s.base_file.size if s.base_file is not None else 0


def group_metrics(slices: Sequence[FileSlice], default_base_file_size: int) -> dict[str, float]:
    """Hudi's FileSliceMetricUtils.addFileSliceCommonMetrics: reads are the base and log files, writes the
    base files (the default size for a slice without one)."""
    logs = sum(lf.size for s in slices for lf in s.log_files)
    read = sum(map(_base_size, slices)) + logs
    write = sum(_base_size(s) if _base_size(s) > 0 else default_base_file_size for s in slices)
    read_mb, write_mb = read // _MB, write // _MB
    return {TOTAL_IO_READ_MB: float(read_mb), TOTAL_IO_WRITE_MB: float(write_mb),
            TOTAL_IO_MB: float(read_mb + write_mb), TOTAL_LOG_FILES_SIZE: float(logs),
            TOTAL_LOG_FILES: float(sum(len(s.log_files) for s in slices))}


def build_groups_for_partition(slices: Sequence[FileSlice], config: HoodieConfig, storage: Storage | None = None,
                               ) -> list[ClusteringGroup]:
    """Cut one partition's eligible slices into clustering groups (see the module docstring)."""
    max_bytes = config.get(ClusteringConfig.MAX_BYTES_PER_GROUP)
    max_groups = config.get(ClusteringConfig.MAX_NUM_GROUPS)
    target = config.get(ClusteringConfig.TARGET_FILE_MAX_BYTES)
    default_size = config.get(StorageConfig.PARQUET_MAX_FILE_SIZE)
    keep_single = bool(config.get(ClusteringConfig.SORT_COLUMNS)) or config.get(
        ClusteringConfig.SINGLE_GROUP_CLUSTERING_ENABLED)

    def size(s: FileSlice) -> int:  # a slice of log files only counts as a full base file, as in Java
        return s.base_file.size if s.base_file is not None else default_size

    cut: list[list[FileSlice]] = []
    current: list[FileSlice] = []
    total = 0
    for s in sorted(slices, key=lambda s: -size(s)):
        if current and total + size(s) > max_bytes:
            cut.append(current)
            current, total = [], 0
            if len(cut) >= max_groups:
                break
        current.append(s)
        total += size(s)
    if current and (len(current) > 1 or keep_single):
        cut.append(current)

    def path_of(rel: str) -> str:
        return storage.full_path(rel) if storage is not None else rel

    def info(s: FileSlice) -> SliceInfo:
        # Java's HoodieSliceInfo: the base file's path ('' without one), the log files newest first (the
        # order a Java FileSlice holds them in).
        return SliceInfo(s.partition_path, s.file_id, path_of(s.base_file.path) if s.base_file else "",
                         tuple(path_of(lf.path) for lf in in_java_slice_order(s.log_files)))

    return [
        ClusteringGroup(
            slices=tuple(info(s) for s in group),
            num_output_file_groups=max(1, math.ceil(sum(map(size, group)) / target)),
            metrics=group_metrics(group, default_size),
        )
        for group in cut
    ]


def strategy_params(config: HoodieConfig) -> dict[str, str]:
    """Sort columns as Hudi records them; hoodpy adds the layout keys so execution needs no config."""
    columns = config.get(ClusteringConfig.SORT_COLUMNS)
    if not columns:
        return {}
    return {
        ClusteringConfig.SORT_COLUMNS.key: ",".join(columns),
        ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key: config.get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY),
        ClusteringConfig.CURVE_BUILD_METHOD.key: config.get(ClusteringConfig.CURVE_BUILD_METHOD),
        ClusteringConfig.BUILD_CURVE_SAMPLE_SIZE.key: str(config.get(ClusteringConfig.BUILD_CURVE_SAMPLE_SIZE)),
    }


def _schema_field(schema: pa.Schema, path: str) -> pa.Field | None:
    if path in schema.names:
        return schema.field(path)
    head, *rest = path.split(".")
    if head not in schema.names:
        return None
    f = schema.field(head)
    for part in rest:
        if not pa.types.is_struct(f.type) or f.type.get_field_index(part) < 0:
            return None
        f = f.type.field(part)
    return f


def validate_sort_columns(columns: Sequence[str], schema: pa.Schema | Iterable[str], layout: str) -> None:
    """Every sort column must exist (meta columns and dotted struct paths included) and be orderable;
    Z-order / Hilbert take top-level columns only. Raises InvalidConfigError naming the column."""
    key = ClusteringConfig.SORT_COLUMNS.key
    value = ",".join(columns)
    if not isinstance(schema, pa.Schema):
        schema = pa.schema([pa.field(n, pa.string()) for n in schema])
    meta = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS if c not in schema.names])
    full = pa.schema(list(meta) + list(schema))
    for column in columns:
        f = _schema_field(full, column)
        if f is None:
            raise InvalidConfigError(key, value, f"sort column {column!r} does not exist in the table schema "
                                                 f"(columns: {', '.join(schema.names)})")
        if not is_orderable(f.type):
            raise InvalidConfigError(key, value, f"sort column {column!r} has type {f.type}, which has no order")
        if layout in (ZORDER, HILBERT) and column not in full.names:
            raise InvalidConfigError(key, value, f"nested sort column {column!r} is not supported by {layout} "
                                                 "layouts (use a top-level column)")


def plan_clustering(timeline: Timeline, view: FileSystemView, config: HoodieConfig, *,
                    table_schema_fields: pa.Schema | Iterable[str] | None = None,
                    now: datetime | None = None) -> ClusteringPlan | None:
    """The clustering plan for the table as ``view`` sees it, or None when there is nothing to cluster.

    Args:
        timeline: the active timeline (its storage is read for pending clustering plans).
        view: the latest file-system view.
        config: table options merged with the caller's.
        table_schema_fields: the table schema (or its column names) to validate sort columns against.
        now: the clock for DAY_ROLLING (default: now, UTC).
    """
    ClusteringConfig.validate(config)
    columns = config.get(ClusteringConfig.SORT_COLUMNS)
    if columns and table_schema_fields is not None:
        validate_sort_columns(columns, table_schema_fields, config.get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY))
    storage = timeline.storage
    # File groups a pending clustering or compaction holds are left out (Java's eligible slices).
    pending = file_groups_in_pending_clustering(storage, timeline) | set(
        pending_compaction_file_groups(storage, timeline))
    small_file_limit = config.get(ClusteringConfig.SMALL_FILE_LIMIT)
    max_groups = config.get(ClusteringConfig.MAX_NUM_GROUPS)
    by_partition: dict[str, list[FileSlice]] = {}
    for s in view.latest_file_slices():
        if (s.partition_path, s.file_id) not in pending and _base_size(s) < small_file_limit:
            by_partition.setdefault(s.partition_path, []).append(s)
    groups: list[ClusteringGroup] = []
    for partition in select_partitions(view.partitions(), config, now=now):
        eligible = by_partition.get(partition, [])
        groups.extend(build_groups_for_partition(eligible, config, storage)[:max_groups])
        if len(groups) >= max_groups:
            break
    groups = groups[:max_groups]
    if not groups:
        return None
    return ClusteringPlan(
        input_groups=tuple(groups),
        strategy_class_name=config.get(ClusteringConfig.EXECUTION_STRATEGY_CLASS),
        strategy_params=strategy_params(config),
        extra_metadata={},
        version=CLUSTERING_PLAN_VERSION,
        preserve_hoodie_metadata=True,
    )

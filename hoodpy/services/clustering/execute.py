"""Executing a saved clustering plan: Hudi's sort-and-size execution, completed as a replacecommit.

:func:`execute_clustering` re-reads the plan from ``<t>.replacecommit.requested`` and never re-plans:

1. A failed earlier attempt (the instant is already inflight) is rolled back first: every base file
   carrying the instant is deleted; the plan stays. Under optimistic concurrency a live heartbeat of
   the instant means someone else is executing it, and the call fails instead.
2. Input file slices that are no longer the latest of a live file group (a write or replacecommit
   touched them since planning) make the plan unusable: it is abandoned (its files and pending instant
   removed) and :class:`~hoodpy.errors.WriteConflictError` is raised.
3. The instant moves to inflight. Spark reads the groups' base files natively (a merge-on-read slice with
   log files is merged with them by record key in a Spark task, as a snapshot read does); a small sample (per
   group) places the column boundaries of SAMPLE curves and the boundaries between output files; each
   row gets its output file (a contiguous range of the group's sort order, see ``layout.py``); one
   task per output file sorts its rows and writes them with ``write_base_file`` (Hudi footer, bloom
   filter, min/max key). Meta columns are kept: commit time and sequence number as they were,
   ``_hoodie_file_name`` set to the new file. When every group of a job is base files only and small enough
   (``hoodie.clustering.group.task.max.bytes``), one task per group reads, samples, orders and writes it
   instead (``group_rewrite.py``): one Spark job, no Spark scan; the same layout from its own sample.
4. Under the lock (optimistic concurrency), the inputs are checked once more, then the replacecommit
   completes with ``operationType`` CLUSTER and ``partitionToReplaceFileIds`` naming the input groups.

Groups run together in Spark jobs of at most ``hoodie.clustering.max.parallelism`` groups each.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.arrow_rows import WRITE_STATS_DDL, align, finalize, task_ids, write_stats, write_stats_row
from hoodpy.config import HoodieConfig
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.errors import IllegalInstantTransitionError, PlanNotFoundError, WriteConflictError
from hoodpy.config.write import event_time_ordering_field
from hoodpy.file_group.file_group import BaseFile, FileSlice, LogFile
from hoodpy.file_group.fs_view import FileSystemView, list_base_files
from hoodpy.file_group.naming import (
    base_file_name, join_partition, new_file_id, parse_base_file_name, parse_log_file_name, write_token,
)
from hoodpy.read.file_scan import spark_cores
from hoodpy.read.slice_scan import read_file_slices, slice_name
from hoodpy.meta_fields import META_COLUMNS, RECORD_KEY
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json
from hoodpy.services.clustering import layout
from hoodpy.services.clustering.group_rewrite import GroupRewrite, group_rewrite_task, uncompressed_bytes
from hoodpy.services.clustering.plan import ClusteringGroup, ClusteringPlan, SliceInfo, load_clustering_plan
from hoodpy.services.table_service import ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.metadata import CommitMetadata, OperationType
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import touched_file_groups
from hoodpy.transaction.heartbeat import is_expired
from hoodpy.write import commit as commit_step
from hoodpy.write.base_file import BaseFileOptions, write_base_file

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

FILE_COLUMN = "__hoodpy_source_file"
OUTPUT_COLUMN = "__hoodpy_output"
_MIN_SAMPLE_PER_OUTPUT = 100


@dataclass
class ClusteringCommitResult:
    """What one clustering execution committed."""

    instant_time: str
    input_groups: int
    replaced_file_groups: int
    output_file_groups: int
    num_writes: int
    total_bytes_written: int
    partitions: list[str] = field(default_factory=list)
    metadata: CommitMetadata | None = field(default=None, repr=False)


@dataclass(frozen=True)
class _Output:
    group: int
    partition_path: str
    file_id: str


@dataclass
class _JobContext:
    """Everything the executors need, as plain picklable values."""

    base_uri: str
    instant_time: str
    full_schema: pa.Schema
    options: BaseFileOptions
    file_group_index: dict[str, int]  # input slice name (read.slice_scan.slice_name) -> group index in this job
    specs: list[layout.LayoutSpec]  # per group
    boundaries: list[pa.Table]  # per group: key rows cutting it into its output files
    first_output: list[int]  # per group: index of its first output in `outputs`
    outputs: list[_Output]


# --------------------------------------------------------------------------------------------------------
# Executor side
# --------------------------------------------------------------------------------------------------------


def _assign_outputs(ctx: _JobContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    names = pa.array(list(ctx.file_group_index), pa.string())
    groups_of_names = np.array(list(ctx.file_group_index.values()), dtype=np.int64)
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        positions = pc.index_in(batch.column(FILE_COLUMN), value_set=names).to_numpy(zero_copy_only=False)
        group = groups_of_names[np.nan_to_num(positions, nan=0).astype(np.int64)]
        output = np.zeros(n, dtype=np.int32)
        for g in np.unique(group):
            rows = np.nonzero(group == g)[0]
            part = batch.take(pa.array(rows))
            ranges = layout.assign_ranges(layout.sort_keys(part, ctx.specs[g]), ctx.boundaries[g])
            output[rows] = ctx.first_output[g] + ranges
        yield batch.append_column(OUTPUT_COLUMN, pa.array(output, pa.int32()))


def _write_output(ctx: _JobContext, rows: pa.Table) -> pa.Table:
    started = time.monotonic()
    out = ctx.outputs[rows.column(OUTPUT_COLUMN)[0].as_py()]
    order = layout.order_indices(layout.sort_keys(rows, ctx.specs[out.group]))
    rows = align(rows.take(pa.array(order, pa.int64())), ctx.full_schema)
    task_partition, stage_id, attempt_id = task_ids()
    name = base_file_name(out.file_id, write_token(task_partition, stage_id, attempt_id), ctx.instant_time)
    rel_path = join_partition(out.partition_path, name)
    # Clustering keeps every record's commit time and sequence number; only the file name changes.
    rows = finalize(rows, pa.array(np.zeros(rows.num_rows, dtype=bool)), instant_time=ctx.instant_time,
                    file_name=name, task_partition=task_partition)
    size = write_base_file(Storage(ctx.base_uri), rel_path, rows, ctx.options)
    return write_stats([write_stats_row(
        out.partition_path, out.file_id, rel_path, prev_commit=None, num_writes=rows.num_rows,
        num_inserts=rows.num_rows, file_size=size, elapsed_ms=int((time.monotonic() - started) * 1000))])


# --------------------------------------------------------------------------------------------------------
# Driver side
# --------------------------------------------------------------------------------------------------------


def _layout_of(plan: ClusteringPlan, config: HoodieConfig) -> tuple[str, str, int]:
    return (plan.layout_strategy(config.get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY)),
            plan.curve_build_method(config.get(ClusteringConfig.CURVE_BUILD_METHOD)),
            plan.curve_sample_size(config.get(ClusteringConfig.BUILD_CURVE_SAMPLE_SIZE)))


def _input_slice(s: SliceInfo) -> FileSlice:
    """The file slice a plan's HoodieSliceInfo names (file sizes are not needed to read it)."""
    base = parse_base_file_name(s.file_name) if s.data_file_path else None
    logs = sorted((LogFile(s.partition_path, parsed, 0) for name in s.delta_file_names
                   if (parsed := parse_log_file_name(name)) is not None), key=lambda lf: lf.name.order)
    instant = base.instant_time if base is not None else (logs[0].base_instant_time if logs else "")
    return FileSlice(s.partition_path, s.file_id, instant,
                     BaseFile(s.partition_path, base, 0) if base is not None else None, tuple(logs))


def stale_inputs(plan: ClusteringPlan, view: FileSystemView) -> list[tuple[str, str]]:
    """Input (partition, file id)s whose planned slice is no longer the latest of a live file group (a new
    base file, or log files appended since planning)."""
    stale = []
    for group in plan.input_groups:
        for s in group.slices:
            fg = view.file_group(s.partition_path, s.file_id)
            latest = fg.latest_slice() if fg is not None else None
            if latest is None or _names(latest) != (s.file_name, set(s.delta_file_names)):
                stale.append(s.file_group_id)
    return stale


def _names(file_slice: FileSlice) -> tuple[str, set[str]]:
    base = file_slice.base_file.file_name if file_slice.base_file is not None else ""
    return base, {lf.file_name for lf in file_slice.log_files}


def _conflicting_instant(timeline: Timeline, stale: list[tuple[str, str]]) -> str:
    wanted = set(stale)
    for instant in reversed(timeline.completed_commits()):
        if touched_file_groups(timeline.commit_metadata(instant)) & wanted:
            return instant.timestamp
    return "a later write"


def remove_attempt_files(storage: Storage, instant_time: str, partitions: list[str] | None = None) -> int:
    """Delete every base file a (failed) attempt of ``instant_time`` wrote."""
    removed = 0
    for bf in list_base_files(storage, partitions):
        if bf.instant_time == instant_time:
            storage.delete(bf.path)
            removed += 1
    return removed


def _abandon(storage: Storage, instant: Instant, plan: ClusteringPlan, timeline: Timeline,
             stale: list[tuple[str, str]]) -> None:
    remove_attempt_files(storage, instant.timestamp, plan.partitions)
    transitions.delete_pending(storage, instant)
    raise WriteConflictError(instant.timestamp, _conflicting_instant(timeline, stale), [f for _, f in stale])


def _footers(storage: Storage, paths: list[str]) -> list[pq.FileMetaData]:
    def footer(rel: str) -> pq.FileMetaData:
        with storage.fs.open_input_file(storage.full_path(rel)) as f:
            return pq.read_metadata(f)
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(footer, paths))


class _ClusteringJob:
    """Spark work for a batch of groups of one plan."""

    def __init__(self, table: HoodieTable, plan: ClusteringPlan, config: HoodieConfig, instant_time: str):
        self.table = table
        self.spark = table.spark
        self.storage = table.storage
        self.plan = plan
        self.instant_time = instant_time
        self.strategy, self.method, self.sample_size = _layout_of(plan, config)
        self.options = BaseFileOptions.from_config(config)
        self.group_task_max_bytes = config.get(ClusteringConfig.GROUP_TASK_MAX_BYTES)
        timeline = Timeline.load(self.storage)
        self.committed = timeline.committed()
        self.ordering_field = event_time_ordering_field(config)
        data_schema = table.arrow_schema(timeline) or pa.schema([])
        self.full_schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(data_schema))
        # Files carry the meta columns even with virtual keys (null there): read them either way.
        schema = table.spark_schema()
        self.spark_schema = schema if RECORD_KEY in schema.fieldNames() else StructType(
            [StructField(c, StringType(), True) for c in META_COLUMNS] + list(schema.fields))
        self.schema_json = timeline.latest_schema() or avro_schema_to_json(
            avro_schema_from_arrow(data_schema, table.name))

    def run(self, groups: list[ClusteringGroup]) -> list[dict]:
        from pyspark.sql.types import IntegerType

        inputs = [[_input_slice(s) for s in g.slices] for g in groups]
        rels = [fs.base_file.path for slices in inputs for fs in slices if fs.base_file is not None]
        footers = dict(zip(rels, _footers(self.storage, rels), strict=True))
        outputs = [_Output(gi, g.partition_path, new_file_id()) for gi, g in enumerate(groups)
                   for _ in range(g.num_output_file_groups)]
        if all(not fs.log_files and fs.base_file is not None for slices in inputs for fs in slices) and all(
                sum(uncompressed_bytes(footers[fs.base_file.path]) for fs in slices) <= self.group_task_max_bytes
                for slices in inputs):
            # Each task samples its group from the rows it holds: no Spark scan for the sample.
            works = [GroupRewrite(g.partition_path, tuple(fs.base_file.path for fs in inputs[gi]),
                                  tuple(o.file_id for o in outputs if o.group == gi), self._spec(),
                                  sample_rows=self._sample_rows(groups, gi))
                     for gi, g in enumerate(groups)]
            return self._rewrite_in_tasks(works)
        # Rows per group for sampling: the base files' (log records are few next to them, or counted as 0).
        counts = {rel: footer.num_rows for rel, footer in footers.items()}
        file_group_index = {slice_name(fs): gi for gi, slices in enumerate(inputs) for fs in slices}
        # Slices with log files are merged (base and log records by key) while being read.
        df = read_file_slices(self.spark, self.storage, [fs for slices in inputs for fs in slices],
                              self.spark_schema, self.committed, self.ordering_field, file_name_column=FILE_COLUMN,
                              virtual=self.options.virtual_keys)
        group_rows = [sum(counts.get(fs.base_file.path, 0) for fs in slices if fs.base_file is not None)
                      for slices in inputs]
        sample = self._sample(df, groups, group_rows, file_group_index)
        specs, boundaries, first_output = [], [], []
        for gi, g in enumerate(groups):
            spec, cuts = layout.sampled_layout(self._spec(), _group_sample(sample, gi, file_group_index),
                                               g.num_output_file_groups)
            specs.append(spec)
            boundaries.append(cuts)
            first_output.append(sum(prev.num_output_file_groups for prev in groups[:gi]))
        ctx = _JobContext(self.storage.base_uri, self.instant_time, self.full_schema, self.options,
                          file_group_index, specs, boundaries, first_output, outputs)
        assigned_schema = StructType([*df.schema.fields, StructField(OUTPUT_COLUMN, IntegerType(), False)])
        stats = (df.mapInArrow(lambda it: _assign_outputs(ctx, it), assigned_schema)
                 .repartition(max(1, len(outputs)), OUTPUT_COLUMN)
                 .groupBy(OUTPUT_COLUMN)
                 .applyInArrow(lambda t: _write_output(ctx, t), WRITE_STATS_DDL)
                 .collect())
        return [r.asDict() for r in stats]

    def _rewrite_in_tasks(self, works: list[GroupRewrite]) -> list[dict]:
        """One task per group (see group_rewrite.py); a task's spare cores write its output files in threads."""
        tasks = len(works)
        threads = max(1, min(4, spark_cores(self.spark) // tasks))
        run = group_rewrite_task(self.storage.base_uri, works, self.full_schema, self.instant_time, self.options,
                                 threads)
        return [r.asDict() for r in self.spark.range(0, tasks, 1, tasks).mapInArrow(run, WRITE_STATS_DDL).collect()]

    def _sample(self, df, groups: list[ClusteringGroup], group_rows: list[int],
                file_group_index: dict[str, int]) -> pa.Table:
        """Sort-key columns (and the record key) of a per-group sample of rows, as Arrow."""
        heads = list(dict.fromkeys(c.split(".")[0] if c not in df.columns else c for c in self.plan.sort_columns))
        columns = list(dict.fromkeys([FILE_COLUMN, RECORD_KEY, *heads]))
        fractions = {}
        for name, gi in file_group_index.items():
            wanted = max(1, self._sample_rows(groups, gi))
            fractions[name] = min(1.0, wanted / group_rows[gi]) if group_rows[gi] else 1.0
        picked = df.select(*columns)
        if any(f < 1.0 for f in fractions.values()):
            picked = picked.sampleBy(FILE_COLUMN, fractions, seed=17)
        return picked.toArrow()

    def _spec(self) -> layout.LayoutSpec:
        """The layout without its sampled column boundaries (layout.sampled_layout adds them)."""
        columns = self.plan.sort_columns
        return layout.LayoutSpec(self.strategy if columns else layout.LINEAR, columns, self.method, None, RECORD_KEY)

    def _sample_rows(self, groups: list[ClusteringGroup], gi: int) -> int:
        """Rows sampled from group ``gi``: its share of the sample size, at least a few per output file."""
        return max(self.sample_size // max(1, len(groups)),
                   _MIN_SAMPLE_PER_OUTPUT * groups[gi].num_output_file_groups)


def _group_sample(sample: pa.Table, group_index: int, file_group_index: dict[str, int]) -> pa.Table:
    names = [n for n, g in file_group_index.items() if g == group_index]
    return sample.filter(pc.is_in(sample.column(FILE_COLUMN), value_set=pa.array(names, pa.string())))


def execute_clustering(context: ServiceContext, instant_time: str) -> ClusteringCommitResult:
    """Run the clustering plan saved at ``instant_time`` and complete its replacecommit.

    Args:
        context: the table (its Spark session does the work) and the config for this call (file writing,
            concurrency; layout keys only for plans that do not record their layout, e.g. plans Java Hudi
            scheduled).
        instant_time: a requested or inflight clustering instant.

    Raises:
        PlanNotFoundError: no clustering plan at ``instant_time``.
        IllegalInstantTransitionError: the clustering already completed, or another writer runs it.
        WriteConflictError: an input file group changed since planning (the plan is abandoned).
    """
    storage, config = context.storage, context.config
    timeline = context.timeline()
    instant = timeline.find(instant_time, Action.REPLACECOMMIT)
    if instant is None:
        raise PlanNotFoundError(f"No clustering plan at {instant_time}: no replacecommit with that instant time")
    if instant.is_completed:
        raise IllegalInstantTransitionError(instant, "the clustering already completed")
    plan = load_clustering_plan(storage, instant_time)
    transaction = context.transaction(merge_on_read=True)  # slices with log files are merged while rewritten
    if instant.is_inflight:
        if transaction.optimistic and not is_expired(storage, instant_time, transaction.heartbeat_ms,
                                                     transaction.misses):
            raise IllegalInstantTransitionError(instant, "another writer is executing it (live heartbeat)")
        remove_attempt_files(storage, instant_time, plan.partitions)
    stale = stale_inputs(plan, FileSystemView.load(storage, timeline, partitions=plan.partitions))
    if stale:
        _abandon(storage, instant, plan, timeline, stale)
    if instant.is_requested:
        instant = transitions.transition_to_inflight(storage, instant)
    with transaction.heartbeat(instant_time):
        try:
            job = _ClusteringJob(context.table, plan, config, instant_time)
            stats_rows: list[dict] = []
            width = config.get(ClusteringConfig.MAX_PARALLELISM)
            groups = list(plan.input_groups)
            for start in range(0, len(groups), width):
                stats_rows.extend(job.run(groups[start:start + width]))
        except BaseException:
            remove_attempt_files(storage, instant_time, plan.partitions)  # the plan stays; a rerun resumes
            raise
        replaced: dict[str, list[str]] = {}
        for group in plan.input_groups:
            for s in group.slices:
                replaced.setdefault(s.partition_path, []).append(s.file_id)
        metadata = commit_step.new_commit_metadata(OperationType.CLUSTER, commit_step.write_stats_from_rows(stats_rows),
                                                   job.schema_json, replaced)
        with transaction.locked():
            now = Timeline.load(storage)
            stale = stale_inputs(plan, FileSystemView.load(storage, now, partitions=plan.partitions))
            if stale:
                _abandon(storage, instant, plan, now, stale)
            commit_step.commit(storage, instant, metadata, config)
    stats = metadata.write_stats
    return ClusteringCommitResult(
        instant_time=instant_time,
        input_groups=len(plan.input_groups),
        replaced_file_groups=len(plan.file_group_ids),
        output_file_groups=len(stats),
        num_writes=sum(s.num_writes for s in stats),
        total_bytes_written=sum(s.total_write_bytes for s in stats),
        partitions=plan.partitions,
        metadata=metadata,
    )

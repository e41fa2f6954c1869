"""Executing a saved compaction plan: each file slice merged into a new base file, completed as ``<t>.commit``.

:func:`execute_compaction` re-reads the plan from ``<t>.compaction.requested`` and never re-plans:

1. An attempt that failed (the instant is inflight) is rolled back first, as Hudi's
   rollbackInflightCompaction does: a rollback instant deletes every base file carrying the compaction's
   instant and the inflight file, so the compaction is requested again; the plan stays. It is not rolled
   back as a failed write (that would drop the plan). Under optimistic concurrency a live heartbeat of the
   instant means another writer is executing it, and the call fails instead.
2. The instant moves to inflight (an empty file, as Java 0.14 writes it).
3. One Spark task per operation reads the base file and the log files, keeps the blocks of committed
   instants (:mod:`hoodpy.file_group.log_file`), folds the log records by record key as snapshot reads do
   (:mod:`hoodpy.read.slice_merge`) and rewrites the base file in place as Java's merge handle does
   (:mod:`hoodpy.services.compaction.slice_compact`: base rows keep their place, log-only keys appended)
   into ``<fileId>_<token>_<t>.parquet`` with hoodpy's base file writer (Hudi footer, bloom filter, key
   range). Records keep their commit time and sequence number; the file name is the new file's (Hudi
   preserves record metadata in compaction). A slice whose records are all
   deleted becomes an empty base file, as Java's merge handle writes one; a slice of logs only whose blocks
   hold no record (all rolled back) writes nothing, as Java's compactor returns no status for it.
4. ``<t>.commit`` completes with ``operationType`` COMPACT, ``compacted`` true, and per new file the write
   stat with Hudi's compaction counters (log files, records, blocks, rollback and corrupt blocks, log size);
   at table versions 8 and 9 also Hudi 1.x's ``prevBaseFile`` (the replaced base file's name) and
   ``totalLogReadTimeMs``, as the Java 1.1 samples' compaction commits hold them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from hoodpy.arrow_rows import task_ids
from hoodpy.config import HoodieConfig
from hoodpy.config.table import MERGE_ON_READ, TableConfig
from hoodpy.config.write import event_time_ordering_field
from hoodpy.errors import CompactionError, IllegalInstantTransitionError, PlanNotFoundError
from hoodpy.file_group.log_file import effective_blocks
from hoodpy.file_group.naming import base_file_name, join_partition, write_token
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.read.file_scan import read_base_file
from hoodpy.read.slice_merge import merge_slice_with_stats
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json
from hoodpy.services.compaction.slice_compact import compact_in_place
from hoodpy.services.rollback import RollbackService
from hoodpy.services.table_service import ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.compaction_plan import CompactionOperation, CompactionPlan, load_compaction_plan
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.metadata import NULL_COMMIT, CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import CommittedInstants, Timeline
from hoodpy.transaction.heartbeat import is_expired
from hoodpy.transaction.transaction import WriteTransaction
from hoodpy.write import commit as commit_step
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import RowStamp
from hoodpy.write.merge_overlap import task_executor

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

# What each task reports per written file; the names are WriteStat's.
_STATS_SCHEMA = pa.schema(
    [("partition_path", pa.string()), ("file_id", pa.string()), ("path", pa.string()), ("prev_commit", pa.string()),
     ("prev_base_file", pa.string())]
    + [(name, pa.int64()) for name in (
        "num_writes", "num_deletes", "num_update_writes", "num_inserts", "total_write_bytes", "total_create_time",
        "total_upsert_time", "total_log_records", "total_log_files_compacted", "total_log_size_compacted",
        "total_updated_records_compacted", "total_log_blocks", "total_corrupt_log_blocks", "total_rollback_blocks",
        "total_scan_time", "total_log_read_time_ms")])
MERGE_THREADS = 2  # as the copy-on-write merge task (MergeContext.threads): same bytes with 1
_STATS_DDL = ", ".join(f"{f.name} {'string' if f.type == pa.string() else 'long'}" for f in _STATS_SCHEMA)


@dataclass
class CompactionCommitResult:
    """What one compaction execution committed."""

    instant_time: str
    operations: int
    files_written: int
    num_writes: int
    total_bytes_written: int
    total_log_files_compacted: int
    partitions: list[str] = field(default_factory=list)
    metadata: CommitMetadata | None = field(default=None, repr=False)


def require_merge_on_read(storage: Storage, config: HoodieConfig, what: str = "compact") -> None:
    """Compaction merges log files into base files: only merge-on-read tables have them (Hudi refuses the rest
    with "Can only compact table of type MERGE_ON_READ")."""
    table_type = config.get(TableConfig.TYPE)
    if table_type != MERGE_ON_READ:
        raise CompactionError(f"Cannot {what} the table at {storage.base_uri!r}: it is a {table_type} table; "
                              f"compaction applies to {MERGE_ON_READ} tables only. The table is unchanged.")


def compaction_transaction(context: ServiceContext) -> WriteTransaction:
    """The writers' transaction, for a merge-on-read table."""
    return WriteTransaction(context.storage, context.config, merge_on_read=True)


# --------------------------------------------------------------------------------------------------------
# Executor side
# --------------------------------------------------------------------------------------------------------


@dataclass
class _JobContext:
    """Everything the executors need, as plain picklable values."""

    base_uri: str
    instant_time: str
    schema: pa.Schema  # meta columns, then the table's data columns
    options: BaseFileOptions
    operations: list[CompactionOperation]
    committed: CommittedInstants
    ordering_field: str | None
    # True: base rows keep their place, the bloom filter is continued (slice_compact, the COW merge task's
    # route); False: the whole slice merged as snapshot reads merge it, updated rows moved after the others.
    in_place: bool = True
    # In place: the base file's row groups no log record changes are copied byte for byte (slice_compact);
    # False: every group decoded and encoded again. Same rows and footer entries either way.
    splice: bool = True


def _compact(ctx: _JobContext, op: CompactionOperation) -> dict | None:
    """Merge one slice into its new base file; its write stat, or None when nothing was written."""
    started = time.monotonic()
    storage = Storage(ctx.base_uri)
    has_base = bool(op.data_file_name)
    logs = effective_blocks(((storage.full_path(rel), storage.read_bytes(rel)) for rel in op.delta_file_paths),
                            ctx.committed)
    task_partition, stage_id, attempt_id = task_ids()
    name = base_file_name(op.file_id, write_token(task_partition, stage_id, attempt_id), ctx.instant_time)
    rel_path = join_partition(op.partition_path, name)
    # No row is fresh: records keep their commit time and sequence number (Hudi preserves them).
    stamp = RowStamp(ctx.instant_time, name, task_partition, fresh=False)
    if ctx.in_place:
        with task_executor(MERGE_THREADS) as executor:
            written = compact_in_place(storage, op.data_file_path if has_base else None, logs.blocks, ctx.schema,
                                       ctx.ordering_field, ctx.options, executor, stamp, rel_path,
                                       threads=MERGE_THREADS, splice=ctx.splice)
        merged, scanned, num_rows, size = written.stats, written.folded, written.num_rows, written.size
        if size is None:
            return None
    else:
        base = read_base_file(storage, op.data_file_path, ctx.schema) if has_base else None
        rows, merged = merge_slice_with_stats(base, logs.blocks, ctx.schema, ctx.ordering_field,
                                              ctx.options.virtual_keys)
        scanned = time.monotonic()
        if not has_base and merged.log_records == 0:
            return None
        rows = stamp.stamped(rows, np.zeros(rows.num_rows, dtype=bool), None)
        num_rows, size = rows.num_rows, write_base_file(storage, rel_path, rows, ctx.options)
    elapsed = int((time.monotonic() - started) * 1000)
    return {
        "partition_path": op.partition_path, "file_id": op.file_id, "path": rel_path,
        "prev_commit": op.base_instant_time if has_base else NULL_COMMIT,
        "prev_base_file": op.data_file_name if has_base else None,
        "num_writes": num_rows, "num_deletes": merged.deleted, "num_update_writes": merged.updated,
        "num_inserts": merged.inserted, "total_write_bytes": size,
        "total_create_time": 0 if has_base else elapsed, "total_upsert_time": elapsed if has_base else 0,
        "total_log_records": merged.log_records, "total_log_files_compacted": len(op.delta_file_names),
        "total_log_size_compacted": op.total_log_size, "total_updated_records_compacted": merged.log_keys,
        "total_log_blocks": logs.total_blocks, "total_corrupt_log_blocks": logs.corrupt_blocks,
        "total_rollback_blocks": logs.rollback_blocks, "total_scan_time": int((scanned - started) * 1000),
        # Java 1.x times reading and merging the logs as its scan time (equal in the v9 samples' compactions).
        "total_log_read_time_ms": int((scanned - started) * 1000),
    }


def _compact_task(ctx: _JobContext):
    """The task function: task i compacts operation i."""

    def run(batches):
        for batch in batches:
            for index in batch.column(0).to_pylist():
                row = _compact(ctx, ctx.operations[index])
                if row is not None:
                    yield pa.RecordBatch.from_pylist([row], schema=_STATS_SCHEMA)

    return run


# --------------------------------------------------------------------------------------------------------
# Driver side
# --------------------------------------------------------------------------------------------------------


def _stat(row: dict) -> WriteStat:
    return WriteStat(**row, file_size_in_bytes=row["total_write_bytes"])


def _run_job(table: HoodieTable, plan: CompactionPlan, instant_time: str, context: ServiceContext,
             timeline: Timeline) -> tuple[list[WriteStat], str]:
    """Spark: one task per operation. Returns the write stats and the schema the commit records."""
    data_schema = table.arrow_schema(timeline) or pa.schema([])
    schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(data_schema))
    ctx = _JobContext(context.storage.base_uri, instant_time, schema, BaseFileOptions.from_config(context.config),
                      list(plan.operations), timeline.committed(), event_time_ordering_field(context.config))
    tasks = len(plan.operations)
    rows = (table.spark.range(0, tasks, 1, tasks).mapInArrow(_compact_task(ctx), _STATS_DDL).collect()
            if tasks else [])
    schema_json = timeline.latest_schema() or avro_schema_to_json(avro_schema_from_arrow(data_schema, table.name))
    return [_stat(r.asDict()) for r in rows], schema_json


def _pending_instant(timeline: Timeline, instant_time: str, table: str) -> Instant:
    instant = timeline.find(instant_time, Action.COMPACTION)
    if instant is not None:
        return instant
    done = timeline.find(instant_time, Action.COMMIT)
    if done is not None and done.is_completed:
        raise IllegalInstantTransitionError(done, "the compaction already completed")
    pending = [i.timestamp for i in timeline.pending([Action.COMPACTION])]
    raise PlanNotFoundError(f"{instant_time} is not a pending compaction of {table} "
                            f"(pending compactions: {', '.join(pending) or 'none'})")


def rollback_failed_attempt(context: ServiceContext, inflight: Instant) -> Instant:
    """Undo an inflight compaction's failed attempt (a rollback instant deletes its files) and revert it to
    requested; returns the requested instant."""
    rollbacks = RollbackService(context)
    rollbacks.execute(rollbacks.schedule(target=inflight))
    return inflight.with_state(State.REQUESTED)


def execute_compaction(context: ServiceContext, instant_time: str) -> CompactionCommitResult:
    """Run the compaction plan saved at ``instant_time`` and complete its commit.

    Args:
        context: the table (its Spark session does the work) and the config for this call (file writing,
            concurrency).
        instant_time: a requested or inflight compaction instant.

    Raises:
        CompactionError: the table is not a merge-on-read table.
        PlanNotFoundError: ``instant_time`` is not a pending compaction.
        IllegalInstantTransitionError: the compaction already completed, or another writer runs it.
    """
    storage, config = context.storage, context.config
    require_merge_on_read(storage, config)
    timeline = context.timeline()
    instant = _pending_instant(timeline, instant_time, context.name)
    plan = load_compaction_plan(storage, instant_time)
    transaction = compaction_transaction(context)
    if instant.is_inflight:
        if transaction.optimistic and not is_expired(storage, instant_time, transaction.heartbeat_ms,
                                                     transaction.misses):
            raise IllegalInstantTransitionError(instant, "another writer is executing it (live heartbeat)")
        with transaction.locked():
            instant = rollback_failed_attempt(context, instant)
        timeline = context.timeline()
    inflight = transitions.transition_to_inflight(storage, instant)
    with transaction.heartbeat(instant_time):
        try:
            stats, schema_json = _run_job(context.table, plan, instant_time, context, timeline)
        except BaseException:
            # The plan stays inflight; a rerun rolls the attempt back and resumes.
            commit_step.remove_stray_files(storage, instant_time, set(), plan.partitions)
            raise
        metadata = commit_step.new_commit_metadata(OperationType.COMPACT, stats, schema_json)
        metadata.compacted = True
        with transaction.locked():
            commit_step.commit(storage, inflight, metadata, context.config)
    return CompactionCommitResult(
        instant_time=instant_time, operations=len(plan.operations), files_written=len(stats),
        num_writes=sum(s.num_writes for s in stats), total_bytes_written=sum(s.total_write_bytes for s in stats),
        total_log_files_compacted=sum(s.total_log_files_compacted for s in stats), partitions=plan.partitions,
        metadata=metadata)

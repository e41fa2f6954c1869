"""The commits family: ``show_commits``, ``show_commits_metadata``, ``show_commit_files``,
``show_commit_partitions``, ``show_commit_write_stats``.

Parameters and output columns follow Hudi's released (<= 1.1) procedures; ``path`` is appended so that a
table can be addressed by location. Completed commit, deltacommit and replacecommit instants of the active
timeline are listed newest first. ``state_transition_time`` is the completed instant file's modification
time in instant format (UTC, hoodpy's timeline time zone).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pyspark.sql.types import LongType, StringType

from hoodpy.errors import InvalidInstantError
from sql_ext.procedures.base import (
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    instant_file_times,
    limited,
)
from hoodpy.timeline.instant import Instant, format_instant_millis
from hoodpy.timeline.metadata import NULL_COMMIT, CommitMetadata

LIMIT_10 = Parameter.optional("limit", INTEGER, 10)
INSTANT_TIME = Parameter.required("instant_time", STRING, doc="A completed commit's instant time.")
_STR, _LONG = StringType(), LongType()


def _newest_first(ctx: ProcedureContext, args: Args):
    table = ctx.table(args)
    timeline = table.timeline
    times = instant_file_times(table)
    commits = sorted(timeline.completed_commits(), key=lambda i: (i.timestamp, i.action.value), reverse=True)
    return table, timeline, commits, times


def _transition_time(times, instant: Instant) -> str | None:
    return format_instant_millis(times.get((instant.timestamp, instant.action.value), {}).get("COMPLETED"))


def _is_new_file(prev_commit: str | None) -> bool:
    return prev_commit is not None and prev_commit.lower() == NULL_COMMIT


class ShowCommitsProcedure(Procedure):
    """Completed commits of the active timeline, newest first, with their write totals."""

    name = "show_commits"
    parameters = (TABLE, LIMIT_10, PATH)
    output = (
        ("commit_time", _STR), ("state_transition_time", _STR), ("action", _STR),
        ("total_bytes_written", _LONG), ("total_files_added", _LONG), ("total_files_updated", _LONG),
        ("total_partitions_written", _LONG), ("total_records_written", _LONG),
        ("total_update_records_written", _LONG), ("total_errors", _LONG),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        _, timeline, commits, times = _newest_first(ctx, args)
        rows = []
        for instant in commits[: max(args["limit"], 0)]:
            stats = timeline.commit_metadata(instant).write_stats
            rows.append((
                instant.timestamp, _transition_time(times, instant), instant.action.value,
                sum(s.total_write_bytes for s in stats),
                sum(1 for s in stats if _is_new_file(s.prev_commit)),
                sum(1 for s in stats if s.prev_commit is not None and not _is_new_file(s.prev_commit)),
                len(timeline.commit_metadata(instant).partition_to_write_stats),
                sum(s.num_writes for s in stats),
                sum(s.num_update_writes for s in stats),
                sum(s.total_write_errors for s in stats),
            ))
        return rows


class ShowCommitsMetadataProcedure(Procedure):
    """Completed commits newest first, one row per file group written (write stats)."""

    name = "show_commits_metadata"
    parameters = (TABLE, LIMIT_10, PATH)
    output = (
        ("commit_time", _STR), ("state_transition_time", _STR), ("action", _STR), ("partition", _STR),
        ("file_id", _STR), ("previous_commit", _STR), ("num_writes", _LONG), ("num_inserts", _LONG),
        ("num_deletes", _LONG), ("num_update_writes", _LONG), ("total_errors", _LONG),
        ("total_log_blocks", _LONG), ("total_corrupt_log_blocks", _LONG), ("total_rollback_blocks", _LONG),
        ("total_log_records", _LONG), ("total_updated_records_compacted", _LONG),
        ("total_bytes_written", _LONG),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        _, timeline, commits, times = _newest_first(ctx, args)
        limit = args["limit"]
        rows: list[tuple] = []
        for instant in commits:
            if 0 <= limit <= len(rows):
                break
            transition = _transition_time(times, instant)
            for partition, stats in timeline.commit_metadata(instant).partition_to_write_stats.items():
                for s in stats:
                    # Copy-on-write tables have no log files: the log counters are always zero.
                    rows.append((
                        instant.timestamp, transition, instant.action.value, s.partition_path or partition,
                        s.file_id, s.prev_commit, s.num_writes, s.num_inserts, s.num_deletes,
                        s.num_update_writes, s.total_write_errors, 0, 0, 0, 0, 0, s.total_write_bytes,
                    ))
        return limited(rows, limit)


def commit_for_instant(ctx: ProcedureContext, args: Args) -> tuple[Instant, CommitMetadata]:
    """The completed commit / replacecommit / deltacommit at ``instant_time`` and its metadata."""
    table = ctx.table(args)
    timeline = table.timeline
    wanted = args["instant_time"]
    for instant in timeline.completed_commits():
        if instant.timestamp == wanted:
            return instant, timeline.commit_metadata(instant)
    raise InvalidInstantError(
        f"Commit {wanted} not found among the completed commits of {table.name} "
        f"({', '.join(i.timestamp for i in timeline.completed_commits()[-5:]) or 'none'}"
        f"{', ...' if len(timeline.completed_commits()) > 5 else ''})"
    )


class ShowCommitFilesProcedure(Procedure):
    """The file groups one commit wrote: one row per write stat."""

    name = "show_commit_files"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = (
        ("action", _STR), ("partition_path", _STR), ("file_id", _STR), ("previous_commit", _STR),
        ("total_records_updated", _LONG), ("total_records_written", _LONG), ("total_bytes_written", _LONG),
        ("total_errors", _LONG), ("file_size", _LONG),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        instant, meta = commit_for_instant(ctx, args)
        rows = [
            (instant.action.value, partition, s.file_id, s.prev_commit, s.num_update_writes, s.num_writes,
             s.total_write_bytes, s.total_write_errors, s.file_size_in_bytes)
            for partition, stats in meta.partition_to_write_stats.items() for s in stats
        ]
        return limited(rows, args["limit"])


class ShowCommitPartitionsProcedure(Procedure):
    """What one commit wrote per partition."""

    name = "show_commit_partitions"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = (
        ("action", _STR), ("partition_path", _STR), ("total_files_added", _LONG),
        ("total_files_updated", _LONG), ("total_records_inserted", _LONG), ("total_records_updated", _LONG),
        ("total_bytes_written", _LONG), ("total_errors", _LONG),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        instant, meta = commit_for_instant(ctx, args)
        rows = []
        for partition, stats in meta.partition_to_write_stats.items():
            added = sum(1 for s in stats if s.prev_commit == NULL_COMMIT)
            updated_stats = [s for s in stats if s.prev_commit != NULL_COMMIT]
            rows.append((
                instant.action.value, partition, added, len(updated_stats),
                sum(s.num_inserts for s in stats), sum(s.num_update_writes for s in updated_stats),
                sum(s.total_write_bytes for s in stats), sum(s.total_write_errors for s in stats),
            ))
        return limited(rows, args["limit"])


class ShowCommitWriteStatsProcedure(Procedure):
    """One commit's bytes and records written and the average record size (bytes, rounded up)."""

    name = "show_commit_write_stats"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = (("action", _STR), ("total_bytes_written", _LONG), ("total_records_written", _LONG),
              ("avg_record_size", _LONG))

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        instant, meta = commit_for_instant(ctx, args)
        records = sum(s.num_writes for s in meta.write_stats)
        written = sum(s.total_write_bytes for s in meta.write_stats)
        if records:
            avg = math.ceil(written / records)
        else:  # Java: ceil(x / 0.0) is Infinity (Long.MAX_VALUE) or NaN (0)
            avg = 2**63 - 1 if written else 0
        return limited([(instant.action.value, written, records, avg)], args["limit"])

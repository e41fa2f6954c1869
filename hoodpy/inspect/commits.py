"""Completed commits as rows: per commit totals, per file group write stats, one commit's files and
partitions, and its average record size.

Columns are those of Hudi's commit procedures (``show_commits``, ``show_commits_metadata``,
``show_commit_files``, ``show_commit_partitions``, ``show_commit_write_stats``). Completed commit,
deltacommit and replacecommit instants of the active timeline are listed newest first;
``state_transition_time`` is when the completed instant file was written (instant format, UTC).
"""

from __future__ import annotations

import math

from hoodpy.errors import InvalidInstantError
from hoodpy.inspect.instant_times import completed_time, state_file_times
from hoodpy.inspect.rows import Rows, columns, limited, make_rows
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Instant
from hoodpy.timeline.metadata import NULL_COMMIT, CommitMetadata
from hoodpy.timeline.timeline import Timeline

COMMITS = columns(
    ("commit_time", "string"), ("state_transition_time", "string"), ("action", "string"),
    ("total_bytes_written", "long"), ("total_files_added", "long"), ("total_files_updated", "long"),
    ("total_partitions_written", "long"), ("total_records_written", "long"),
    ("total_update_records_written", "long"), ("total_errors", "long"),
)
COMMITS_METADATA = columns(
    ("commit_time", "string"), ("state_transition_time", "string"), ("action", "string"),
    ("partition", "string"), ("file_id", "string"), ("previous_commit", "string"), ("num_writes", "long"),
    ("num_inserts", "long"), ("num_deletes", "long"), ("num_update_writes", "long"), ("total_errors", "long"),
    ("total_log_blocks", "long"), ("total_corrupt_log_blocks", "long"), ("total_rollback_blocks", "long"),
    ("total_log_records", "long"), ("total_updated_records_compacted", "long"), ("total_bytes_written", "long"),
)
COMMIT_FILES = columns(
    ("action", "string"), ("partition_path", "string"), ("file_id", "string"), ("previous_commit", "string"),
    ("total_records_updated", "long"), ("total_records_written", "long"), ("total_bytes_written", "long"),
    ("total_errors", "long"), ("file_size", "long"),
)
COMMIT_PARTITIONS = columns(
    ("action", "string"), ("partition_path", "string"), ("total_files_added", "long"),
    ("total_files_updated", "long"), ("total_records_inserted", "long"), ("total_records_updated", "long"),
    ("total_bytes_written", "long"), ("total_errors", "long"),
)
COMMIT_WRITE_STATS = columns(
    ("action", "string"), ("total_bytes_written", "long"), ("total_records_written", "long"),
    ("avg_record_size", "long"),
)


def _newest_first(timeline: Timeline) -> list[Instant]:
    return sorted(timeline.completed_commits(), key=lambda i: (i.timestamp, i.action.value), reverse=True)


def _is_new_file(prev_commit: str | None) -> bool:
    return prev_commit is not None and prev_commit.lower() == NULL_COMMIT


def commits(storage: Storage, *, limit: int | None = None, timeline: Timeline | None = None) -> Rows:
    """Completed commits, newest first, with their write totals."""
    timeline = timeline or Timeline.load(storage)
    times = state_file_times(storage)
    rows = []
    for instant in limited(_newest_first(timeline), limit):
        meta = timeline.commit_metadata(instant)
        stats = meta.write_stats
        rows.append((
            instant.timestamp, completed_time(times, instant), instant.action.value,
            sum(s.total_write_bytes for s in stats),
            sum(1 for s in stats if _is_new_file(s.prev_commit)),
            sum(1 for s in stats if s.prev_commit is not None and not _is_new_file(s.prev_commit)),
            len(meta.partition_to_write_stats),
            sum(s.num_writes for s in stats),
            sum(s.num_update_writes for s in stats),
            sum(s.total_write_errors for s in stats),
        ))
    return make_rows(COMMITS, rows)


def commits_metadata(storage: Storage, *, limit: int | None = None, timeline: Timeline | None = None) -> Rows:
    """Completed commits newest first, one row per file group written (its write stat)."""
    timeline = timeline or Timeline.load(storage)
    times = state_file_times(storage)
    rows: list[tuple] = []
    for instant in _newest_first(timeline):
        if limit is not None and 0 <= limit <= len(rows):
            break
        transition = completed_time(times, instant)
        for partition, stats in timeline.commit_metadata(instant).partition_to_write_stats.items():
            for s in stats:
                # The log counters are those a compaction records (zero for other writes).
                rows.append((
                    instant.timestamp, transition, instant.action.value, s.partition_path or partition,
                    s.file_id, s.prev_commit, s.num_writes, s.num_inserts, s.num_deletes,
                    s.num_update_writes, s.total_write_errors, s.total_log_blocks, s.total_corrupt_log_blocks,
                    s.total_rollback_blocks, s.total_log_records, s.total_updated_records_compacted,
                    s.total_write_bytes,
                ))
    return make_rows(COMMITS_METADATA, rows, limit)


def commit_for_instant(timeline: Timeline, instant_time: str, table_name: str) -> tuple[Instant, CommitMetadata]:
    """The completed commit / replacecommit / deltacommit at ``instant_time`` and its metadata."""
    completed = timeline.completed_commits()
    for instant in completed:
        if instant.timestamp == instant_time:
            return instant, timeline.commit_metadata(instant)
    raise InvalidInstantError(
        f"Commit {instant_time} not found among the completed commits of {table_name} "
        f"({', '.join(i.timestamp for i in completed[-5:]) or 'none'}{', ...' if len(completed) > 5 else ''})"
    )


def commit_files(instant: Instant, meta: CommitMetadata, *, limit: int | None = None) -> Rows:
    """The file groups one commit wrote: one row per write stat."""
    rows = [
        (instant.action.value, partition, s.file_id, s.prev_commit, s.num_update_writes, s.num_writes,
         s.total_write_bytes, s.total_write_errors, s.file_size_in_bytes)
        for partition, stats in meta.partition_to_write_stats.items() for s in stats
    ]
    return make_rows(COMMIT_FILES, rows, limit)


def commit_partitions(instant: Instant, meta: CommitMetadata, *, limit: int | None = None) -> Rows:
    """What one commit wrote per partition."""
    rows = []
    for partition, stats in meta.partition_to_write_stats.items():
        added = sum(1 for s in stats if s.prev_commit == NULL_COMMIT)
        updated_stats = [s for s in stats if s.prev_commit != NULL_COMMIT]
        rows.append((
            instant.action.value, partition, added, len(updated_stats),
            sum(s.num_inserts for s in stats), sum(s.num_update_writes for s in updated_stats),
            sum(s.total_write_bytes for s in stats), sum(s.total_write_errors for s in stats),
        ))
    return make_rows(COMMIT_PARTITIONS, rows, limit)


def commit_write_stats(instant: Instant, meta: CommitMetadata, *, limit: int | None = None) -> Rows:
    """One commit's bytes and records written and the average record size (bytes, rounded up)."""
    records = sum(s.num_writes for s in meta.write_stats)
    written = sum(s.total_write_bytes for s in meta.write_stats)
    if records:
        avg = math.ceil(written / records)
    else:  # Java: ceil(x / 0.0) is Infinity (Long.MAX_VALUE) or NaN (0)
        avg = 2**63 - 1 if written else 0
    return make_rows(COMMIT_WRITE_STATS, [(instant.action.value, written, records, avg)], limit)

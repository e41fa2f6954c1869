"""The archive family: ``archive_commits`` moves old instants into ``.hoodie/archived`` (Hudi's
ArchiveCommitsProcedure); the show procedures read them back.

``min_commits`` / ``max_commits`` are ``hoodie.keep.min.commits`` / ``hoodie.keep.max.commits``;
``retain_commits`` is the cleaner's ``hoodie.cleaner.commits.retained``, which ``min_commits`` must exceed
(as Hudi's write config requires). ``enable_metadata`` is accepted for compatibility: hoodpy tables have no
metadata table. ``result`` is 0 on success, as in Hudi. ``show_archived_commits`` and
``show_archived_commits_metadata`` list what archival moved, with the columns of ``show_commits`` (minus
``action``) and ``show_commits_metadata``.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import IntegerType, LongType, StringType

from hoodpy.config.clean import ArchivalConfig, CleanConfig
from sql_ext.procedures.base import BOOLEAN, INTEGER, PATH, STRING, Args, Parameter, Procedure, ProcedureContext


class ArchiveCommitsProcedure(Procedure):
    """Archive completed instants beyond max_commits down to min_commits."""

    name = "archive_commits"
    parameters = (
        Parameter.required("table", STRING, unless="path", doc="Table name in the Spark catalog."),
        PATH,
        Parameter.optional("min_commits", INTEGER, 20),
        Parameter.optional("max_commits", INTEGER, 30),
        Parameter.optional("retain_commits", INTEGER, 10),
        Parameter.optional("enable_metadata", BOOLEAN, True),
    )
    output = (("result", IntegerType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        low, high, retained = args["min_commits"], args["max_commits"], args["retain_commits"]
        if low <= retained:
            self._fail(f"min_commits ({low}) must be greater than retain_commits ({retained})")
        if high <= low:
            self._fail(f"max_commits ({high}) must be greater than min_commits ({low})")
        table = ctx.table(args)
        table.archive({ArchivalConfig.MIN_COMMITS.key: low, ArchivalConfig.MAX_COMMITS.key: high,
                       CleanConfig.COMMITS_RETAINED.key: retained})
        return [(0,)]


def _archived_commits(ctx: ProcedureContext, args: Args) -> list[dict]:
    """Completed commit / deltacommit / replacecommit entries of the archived timeline within
    [start_ts, end_ts] (default: from 10 days ago to 1 day ago, as Hudi), newest first."""
    from datetime import datetime, timedelta, timezone

    from hoodpy.timeline.archived import read_archived_entries
    from hoodpy.timeline.instant import instant_time_of

    now = datetime.now(timezone.utc)
    start = args["start_ts"] or instant_time_of(now - timedelta(days=10))
    end = args["end_ts"] or instant_time_of(now - timedelta(days=1))
    table = ctx.table(args)
    out = []
    for e in read_archived_entries(table.storage):
        if e.get("actionState") != "COMPLETED" or e.get("actionType") not in ("commit", "deltacommit",
                                                                              "replacecommit"):
            continue
        meta = e.get("hoodieCommitMetadata") or e.get("hoodieReplaceCommitMetadata")
        if meta is not None and start <= (e.get("commitTime") or "") <= end:
            out.append(e | {"_meta": meta})
    out.sort(key=lambda e: e["commitTime"], reverse=True)
    return out


_ARCHIVED_PARAMETERS = (
    Parameter.required("table", STRING, unless="path", doc="Table name in the Spark catalog."),
    Parameter.optional("limit", INTEGER, 10),
    Parameter.optional("start_ts", STRING, "", doc="Oldest commit time (default: 10 days ago)."),
    Parameter.optional("end_ts", STRING, "", doc="Newest commit time (default: 1 day ago)."),
    PATH,
)
_S, _L = StringType(), LongType()


def _stats(meta: dict) -> list[tuple[str, dict]]:
    return [(p, s) for p, stats in (meta.get("partitionToWriteStats") or {}).items() for s in stats or []]


class ShowArchivedCommitsProcedure(Procedure):
    """Archived commits, newest first, with their write totals (like show_commits)."""

    name = "show_archived_commits"
    parameters = _ARCHIVED_PARAMETERS
    output = (
        ("commit_time", _S), ("state_transition_time", _S), ("total_bytes_written", _L),
        ("total_files_added", _L), ("total_files_updated", _L), ("total_partitions_written", _L),
        ("total_records_written", _L), ("total_update_records_written", _L), ("total_errors", _L),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        rows = []
        for e in _archived_commits(ctx, args)[: max(args["limit"], 0)]:
            stats = [s for _, s in _stats(e["_meta"])]
            new = [s for s in stats if (s.get("prevCommit") or "").lower() == "null"]
            rows.append((e["commitTime"], e.get("stateTransitionTime"),
                         sum(s.get("totalWriteBytes") or 0 for s in stats), len(new), len(stats) - len(new),
                         len(e["_meta"].get("partitionToWriteStats") or {}),
                         sum(s.get("numWrites") or 0 for s in stats), sum(s.get("numUpdateWrites") or 0 for s in stats),
                         sum(s.get("totalWriteErrors") or 0 for s in stats)))
        return rows


class ShowArchivedCommitsMetadataProcedure(Procedure):
    """Archived commits, newest first, one row per write stat (like show_commits_metadata)."""

    name = "show_archived_commits_metadata"
    parameters = _ARCHIVED_PARAMETERS
    output = (
        ("commit_time", _S), ("state_transition_time", _S), ("action", _S), ("partition", _S), ("file_id", _S),
        ("previous_commit", _S), ("num_writes", _L), ("num_inserts", _L), ("num_deletes", _L),
        ("num_update_writes", _L), ("total_errors", _L), ("total_log_blocks", _L), ("total_corrupt_log_blocks", _L),
        ("total_rollback_blocks", _L), ("total_log_records", _L), ("total_updated_records_compacted", _L),
        ("total_bytes_written", _L),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        rows = []
        for e in _archived_commits(ctx, args):
            for partition, s in _stats(e["_meta"]):
                rows.append((e["commitTime"], e.get("stateTransitionTime"), e["actionType"],
                             s.get("partitionPath") or partition, s.get("fileId"), s.get("prevCommit"),
                             s.get("numWrites") or 0, s.get("numInserts") or 0, s.get("numDeletes") or 0,
                             s.get("numUpdateWrites") or 0, s.get("totalWriteErrors") or 0,
                             s.get("totalLogBlocks") or 0, s.get("totalCorruptLogBlock") or 0,
                             s.get("totalRollbackBlocks") or 0, s.get("totalLogRecords") or 0,
                             s.get("totalUpdatedRecordsCompacted") or 0, s.get("totalWriteBytes") or 0))
        return rows[: max(args["limit"], 0)]

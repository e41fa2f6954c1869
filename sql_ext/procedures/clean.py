"""The clean family: ``run_clean``, ``show_cleans``, ``show_cleans_metadata``.

Parameters and output columns are Hudi's (``RunCleanProcedure``, ``ShowCleansProcedure``); ``path`` is
appended so that a table can be addressed by location. ``run_clean`` applies the clean trigger as Hudi's
``client.clean()`` does (``trigger_strategy`` / ``trigger_max_commits``, default: at least one commit since the
last clean) and returns one row for the clean it ran, or none. The show procedures list completed cleans,
newest first; ``state_transition_time`` is the completed instant file's modification time (instant format) and
``showArchived`` adds the cleans archived under ``.hoodie/archived``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType

from hoodpy.config.clean import CleanConfig
from sql_ext.procedures.base import (
    BOOLEAN,
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    parse_options,
)
from hoodpy.inspect.instant_times import completed_time, state_file_times

_STR, _LONG, _INT, _BOOL = StringType(), LongType(), IntegerType(), BooleanType()


class RunCleanProcedure(Procedure):
    """Finish pending cleans, then plan and run a clean; one row for the clean run, none if nothing to clean."""

    name = "run_clean"
    parameters = (
        TABLE,
        Parameter.optional("skip_locking", BOOLEAN, False),
        Parameter.optional("schedule_in_line", BOOLEAN, True),
        Parameter.optional("clean_policy", STRING, doc=CleanConfig.POLICY.key),
        Parameter.optional("retain_commits", INTEGER, doc=CleanConfig.COMMITS_RETAINED.key),
        Parameter.optional("hours_retained", INTEGER, doc=CleanConfig.HOURS_RETAINED.key),
        Parameter.optional("file_versions_retained", INTEGER, doc=CleanConfig.FILE_VERSIONS_RETAINED.key),
        Parameter.optional("trigger_strategy", STRING, doc=CleanConfig.TRIGGER_STRATEGY.key),
        Parameter.optional("trigger_max_commits", INTEGER, doc=CleanConfig.MAX_COMMITS.key),
        Parameter.optional("options", STRING, doc="Other hoodie.* options as k1=v1,k2=v2."),
        PATH,
    )
    output = (
        ("start_clean_time", _STR), ("time_taken_in_millis", _LONG), ("total_files_deleted", _INT),
        ("earliest_commit_to_retain", _STR), ("bootstrap_part_metadata", _STR), ("version", _INT),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        from hoodpy.services.clean.execute import read_clean_metadata

        try:
            options = parse_options(args["options"])
        except ValueError as e:
            self._fail(f"argument 'options' must be key=value pairs separated by commas: {e}")
        for param, key in (("clean_policy", CleanConfig.POLICY), ("retain_commits", CleanConfig.COMMITS_RETAINED),
                           ("hours_retained", CleanConfig.HOURS_RETAINED),
                           ("file_versions_retained", CleanConfig.FILE_VERSIONS_RETAINED),
                           ("trigger_strategy", CleanConfig.TRIGGER_STRATEGY),
                           ("trigger_max_commits", CleanConfig.MAX_COMMITS)):
            if args[param] is not None:
                options[key.key] = str(args[param])
        table = ctx.table(args)
        CleanConfig.validate(table.config.with_options(options))  # a bad value fails before anything is written
        result = table.cleaning.run(options, trigger=True, schedule=args["schedule_in_line"])
        if result is None:
            return []
        meta = read_clean_metadata(table.storage, result.instant_time)
        return [(meta["startCleanTime"], meta["timeTakenInMillis"], meta["totalFilesDeleted"],
                 meta["earliestCommitToRetain"], json.dumps(meta.get("bootstrapPartitionMetadata") or {}),
                 meta.get("version"))]


def _cleans(ctx: ProcedureContext, args: Args) -> list[tuple[str, str | None, dict]]:
    """(clean time, state transition time, HoodieCleanMetadata) of completed cleans, newest first."""
    from hoodpy.services.clean.execute import read_clean_metadata
    from hoodpy.timeline.instant import Action

    table = ctx.table(args)
    times = state_file_times(table.storage)
    out = [(i.timestamp, completed_time(times, i), read_clean_metadata(table.storage, i.timestamp))
           for i in table.timeline.filter(actions=[Action.CLEAN]) if i.is_completed]
    if args["showArchived"]:
        from hoodpy.timeline.archived import read_archived_entries

        for e in read_archived_entries(table.storage):
            if e.get("actionType") == "clean" and e.get("actionState") == "COMPLETED" and e.get("hoodieCleanMetadata"):
                out.append((e["commitTime"], e.get("stateTransitionTime"), e["hoodieCleanMetadata"]))
    out.sort(key=lambda r: r[0], reverse=True)
    return out


_SHOW_PARAMETERS = (
    TABLE,
    Parameter.optional("limit", INTEGER, 10),
    Parameter.optional("showArchived", BOOLEAN, False),
    Parameter.optional("filter", STRING, "", doc="Spark SQL predicate over the output columns."),
    PATH,
)


class ShowCleansProcedure(Procedure):
    """Completed cleans, newest first, with their totals."""

    name = "show_cleans"
    parameters = _SHOW_PARAMETERS
    output = (
        ("clean_time", _STR), ("state_transition_time", _STR), ("action", _STR), ("start_clean_time", _STR),
        ("time_taken_in_millis", _LONG), ("total_files_deleted", _INT), ("earliest_commit_to_retain", _STR),
        ("last_completed_commit_timestamp", _STR), ("version", _INT),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        rows = [(t, st, "clean", m["startCleanTime"], m["timeTakenInMillis"], m["totalFilesDeleted"],
                 m["earliestCommitToRetain"], m.get("lastCompletedCommitTimestamp") or "", m.get("version"))
                for t, st, m in _cleans(ctx, args)]
        return rows[: max(args["limit"], 0)]


class ShowCleansMetadataProcedure(Procedure):
    """Completed cleans, newest first, one row per partition: file counts deleted and failed."""

    name = "show_cleans_metadata"
    parameters = _SHOW_PARAMETERS
    output = (
        ("clean_time", _STR), ("state_transition_time", _STR), ("action", _STR), ("start_clean_time", _STR),
        ("partition_path", _STR), ("policy", _STR), ("delete_path_patterns", _INT),
        ("success_delete_files", _INT), ("failed_delete_files", _INT), ("is_partition_deleted", _BOOL),
        ("time_taken_in_millis", _LONG), ("total_files_deleted", _INT),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        rows = []
        for t, st, m in _cleans(ctx, args):
            for partition, pm in sorted((m.get("partitionMetadata") or {}).items()):
                rows.append((t, st, "clean", m["startCleanTime"], partition, pm["policy"],
                             len(pm["deletePathPatterns"]), len(pm["successDeleteFiles"]),
                             len(pm["failedDeleteFiles"]), pm.get("isPartitionDeleted"),
                             m["timeTakenInMillis"], m["totalFilesDeleted"]))
        return rows[: max(args["limit"], 0)]

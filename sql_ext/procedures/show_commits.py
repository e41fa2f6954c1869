"""The commits family: ``show_commits``, ``show_commits_metadata``, ``show_commit_files``,
``show_commit_partitions``, ``show_commit_write_stats``.

Parameters and output columns follow Hudi's released (<= 1.1) procedures; ``path`` is appended so that a
table can be addressed by location. The rows are :mod:`hoodpy.inspect.commits`' (which the ``hoodpy``
command line prints too): completed commit, deltacommit and replacecommit instants of the active timeline,
newest first; ``state_transition_time`` is the completed instant file's modification time in instant format.
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.inspect import commits
from sql_ext.procedures.base import (
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    spark_output,
)

LIMIT_10 = Parameter.optional("limit", INTEGER, 10)
INSTANT_TIME = Parameter.required("instant_time", STRING, doc="A completed commit's instant time.")


class ShowCommitsProcedure(Procedure):
    """Completed commits of the active timeline, newest first, with their write totals."""

    name = "show_commits"
    parameters = (TABLE, LIMIT_10, PATH)
    output = spark_output(commits.COMMITS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return commits.commits(ctx.table(args).storage, limit=max(args["limit"], 0)).rows


class ShowCommitsMetadataProcedure(Procedure):
    """Completed commits newest first, one row per file group written (write stats)."""

    name = "show_commits_metadata"
    parameters = (TABLE, LIMIT_10, PATH)
    output = spark_output(commits.COMMITS_METADATA)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return commits.commits_metadata(ctx.table(args).storage, limit=args["limit"]).rows


def _commit(ctx: ProcedureContext, args: Args):
    table = ctx.table(args)
    return commits.commit_for_instant(table.timeline, args["instant_time"], table.name)


class ShowCommitFilesProcedure(Procedure):
    """The file groups one commit wrote: one row per write stat."""

    name = "show_commit_files"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = spark_output(commits.COMMIT_FILES)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return commits.commit_files(*_commit(ctx, args), limit=args["limit"]).rows


class ShowCommitPartitionsProcedure(Procedure):
    """What one commit wrote per partition."""

    name = "show_commit_partitions"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = spark_output(commits.COMMIT_PARTITIONS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return commits.commit_partitions(*_commit(ctx, args), limit=args["limit"]).rows


class ShowCommitWriteStatsProcedure(Procedure):
    """One commit's bytes and records written and the average record size (bytes, rounded up)."""

    name = "show_commit_write_stats"
    parameters = (TABLE, LIMIT_10, INSTANT_TIME, PATH)
    output = spark_output(commits.COMMIT_WRITE_STATS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return commits.commit_write_stats(*_commit(ctx, args), limit=args["limit"]).rows

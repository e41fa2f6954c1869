"""Table statistics: ``stats_file_sizes`` (base file size histogram per commit) and ``stats_wa``
(write amplification per commit).

Parameters and columns are Hudi's (``StatsFileSizeProcedure``, ``StatsWriteAmplificationProcedure``); the
rows are :mod:`hoodpy.inspect.stats`' (``hoodpy stats`` prints them too). ``stats_file_sizes`` counts every
base file on storage (all versions, committed or not, as Hudi's listing does), one row per instant time plus
an ``ALL`` row; percentiles are those of Dropwizard's uniform snapshot, which Hudi uses. ``partition_path``
is a glob over partition paths; Hudi's default ``''`` (files directly under the base path) is taken to mean
every partition, since on a partitioned table Hudi's listing would count partition folders as files.
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.inspect import stats
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


class StatsFileSizesProcedure(Procedure):
    """Base file size distribution (min, percentiles, max, std dev) per commit and over all files."""

    name = "stats_file_sizes"
    parameters = (
        TABLE,
        Parameter.optional("partition_path", STRING, "", doc="Glob over partition paths ('' = all)."),
        Parameter.optional("limit", INTEGER, 10),
        PATH,
    )
    output = spark_output(stats.FILE_SIZES)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return stats.file_sizes(ctx.table(args).storage, partition_glob=args["partition_path"] or "",
                                limit=args["limit"]).rows


class StatsWaProcedure(Procedure):
    """Write amplification per commit: records written / records updated, plus a Total row."""

    name = "stats_wa"
    parameters = (TABLE, Parameter.optional("limit", INTEGER, 10), PATH)
    output = spark_output(stats.WRITE_AMPLIFICATION)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return stats.write_amplification_rows(ctx.table(args).storage, limit=args["limit"]).rows

"""The file-system view procedures: ``show_fsview_all`` (every file slice) and ``show_fsview_latest``
(the latest slice of each file group).

Parameters and columns are Hudi's (``ShowFileSystemViewProcedure``); the rows are
:mod:`hoodpy.inspect.file_slices`' (``hoodpy files`` prints them too). The view counts base files and
log files of the write instants selected by ``max_instant`` (``include_max``: inclusive) and
``include_in_flight``; file groups replaced by a completed replacecommit in that selection are left out.
``path_regex`` (and the older ``partition_path`` of show_fsview_latest) is a glob over partition paths, e.g.
``'2024/*/*'`` or ``'city=*'``. The delta columns list a merge-on-read slice's log files as Hudi prints them;
copy-on-write slices have none (0 / ``[]``, ratios 0.0, -1.0 for an empty base file).
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.inspect import file_slices
from hoodpy.inspect.file_slices import ALL_PARTITIONS, ViewSelection
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
    spark_output,
)

COMMON_PARAMETERS = (
    TABLE,
    Parameter.optional("max_instant", STRING, ""),
    Parameter.optional("include_max", BOOLEAN, False),
    Parameter.optional("include_in_flight", BOOLEAN, False),
    Parameter.optional("exclude_compaction", BOOLEAN, False),
    Parameter.optional("limit", INTEGER, 10),
    Parameter.optional("path_regex", STRING, ALL_PARTITIONS),
)


def _selection(args: Args, glob: str) -> ViewSelection:
    return ViewSelection(max_instant=args["max_instant"] or "", include_max=args["include_max"],
                         include_in_flight=args["include_in_flight"],
                         exclude_compaction=args["exclude_compaction"], path_glob=glob)


class ShowFsviewAllProcedure(Procedure):
    """Every file slice of every file group in the view, with its base file."""

    name = "show_fsview_all"
    parameters = (*COMMON_PARAMETERS, PATH)
    output = spark_output(file_slices.ALL_SLICES)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return file_slices.all_slices(ctx.table(args).storage, _selection(args, args["path_regex"]),
                                      limit=args["limit"]).rows


class ShowFsviewLatestProcedure(Procedure):
    """The latest file slice of every file group in the view (``merge``: as of ``max_instant``)."""

    name = "show_fsview_latest"
    parameters = (
        *COMMON_PARAMETERS,
        Parameter.optional("partition_path", STRING, ALL_PARTITIONS, doc="Older spelling of path_regex."),
        Parameter.optional("merge", BOOLEAN, True),
        PATH,
    )
    output = spark_output(file_slices.LATEST_SLICES)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        if "path_regex" in args.given and "partition_path" in args.given:
            self._fail("path_regex and partition_path cannot be used together")
        glob = args["path_regex"] if "path_regex" in args.given else args["partition_path"]
        return file_slices.latest_slices(ctx.table(args).storage, _selection(args, glob), merge=args["merge"],
                                         limit=args["limit"]).rows

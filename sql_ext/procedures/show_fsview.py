"""The file-system view procedures: ``show_fsview_all`` (every file slice) and ``show_fsview_latest``
(the latest slice of each file group).

Parameters and columns are Hudi's (``ShowFileSystemViewProcedure``). The view counts base files of the
write instants selected by ``max_instant`` (``include_max``: inclusive) and ``include_in_flight``; file
groups replaced by a completed replacecommit in that selection are left out. ``path_regex`` (and the older
``partition_path`` of show_fsview_latest) is a glob over partition paths, e.g. ``'2024/*/*'`` or
``'city=*'``. Copy-on-write slices have no log files, so the delta columns are 0 / ``[]`` and the
delta-to-base ratios are 0.0 (-1.0 for an empty base file), as Hudi prints them.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from pyspark.sql.types import DoubleType, LongType, StringType

from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import list_base_files
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
    limited,
)
from hoodpy.timeline.instant import Action, State

ALL_PARTITIONS = "ALL_PARTITIONS"
_STR, _LONG, _DOUBLE = StringType(), LongType(), DoubleType()
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)

COMMON_PARAMETERS = (
    TABLE,
    Parameter.optional("max_instant", STRING, ""),
    Parameter.optional("include_max", BOOLEAN, False),
    Parameter.optional("include_in_flight", BOOLEAN, False),
    Parameter.optional("exclude_compaction", BOOLEAN, False),
    Parameter.optional("limit", INTEGER, 10),
    Parameter.optional("path_regex", STRING, ALL_PARTITIONS),
)
COMMON_OUTPUT = (
    ("partition", _STR), ("file_id", _STR), ("base_instant", _STR), ("data_file", _STR),
    ("data_file_size", _LONG), ("num_delta_files", _LONG), ("total_delta_file_size", _LONG),
)


def partition_matches(partition: str, glob: str) -> bool:
    """Hadoop-style glob over partition path segments (``*`` does not cross ``/``)."""
    if glob == ALL_PARTITIONS:
        return True
    pattern = [s for s in glob.strip("/").split("/") if s != ""]
    segments = [s for s in partition.split("/") if s != ""]
    return len(pattern) == len(segments) and all(fnmatchcase(s, p) for s, p in zip(segments, pattern, strict=True))


def file_slices(ctx: ProcedureContext, args: Args, glob: str) -> dict[tuple[str, str], list[BaseFile]]:
    """(partition, file id) -> base files (oldest first) visible in the view the arguments describe."""
    table = ctx.table(args)
    timeline = table.timeline
    max_instant = (args["max_instant"] or "").strip()
    states = {State.COMPLETED} | ({State.INFLIGHT, State.REQUESTED} if args["include_in_flight"] else set())
    actions = [a for a in _WRITE_ACTIONS if not (args["exclude_compaction"] and a == Action.COMPACTION)]
    selected = [
        i for i in timeline.filter(actions=actions, states=states)
        if not max_instant or (i.timestamp <= max_instant if args["include_max"] else i.timestamp < max_instant)
    ]
    visible = {i.timestamp for i in selected}
    earliest = timeline.earliest_instant_time()
    replaced = set()
    for instant in selected:
        if instant.action == Action.REPLACECOMMIT and instant.is_completed:
            replaced |= timeline.commit_metadata(instant).replaced_file_ids()
    groups: dict[tuple[str, str], list[BaseFile]] = {}
    for bf in list_base_files(table.storage):
        if not partition_matches(bf.partition_path, glob):
            continue
        t = bf.instant_time
        archived = earliest is not None and t < earliest and (not max_instant or t <= max_instant)
        if (t in visible or archived) and (bf.partition_path, bf.file_id) not in replaced:
            groups.setdefault((bf.partition_path, bf.file_id), []).append(bf)
    for files in groups.values():
        files.sort(key=lambda f: f.instant_time)
    return dict(sorted(groups.items()))


def _data_file(ctx_table_base: str, bf: BaseFile) -> str:
    return f"{ctx_table_base}/{bf.path}"


class ShowFsviewAllProcedure(Procedure):
    """Every file slice of every file group in the view, with its base file."""

    name = "show_fsview_all"
    parameters = (*COMMON_PARAMETERS, PATH)
    output = (*COMMON_OUTPUT, ("delta_files", _STR))

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        base = ctx.table(args).base_path
        rows = [
            (partition, file_id, bf.instant_time, _data_file(base, bf), bf.size, 0, 0, "[]")
            for (partition, file_id), files in file_slices(ctx, args, args["path_regex"]).items()
            for bf in reversed(files)
        ]
        return limited(rows, args["limit"])


class ShowFsviewLatestProcedure(Procedure):
    """The latest file slice of every file group in the view (``merge``: as of ``max_instant``)."""

    name = "show_fsview_latest"
    parameters = (
        *COMMON_PARAMETERS,
        Parameter.optional("partition_path", STRING, ALL_PARTITIONS, doc="Older spelling of path_regex."),
        Parameter.optional("merge", BOOLEAN, True),
        PATH,
    )
    output = (
        *COMMON_OUTPUT,
        ("delta_size_compaction_scheduled", _LONG), ("delta_size_compaction_unscheduled", _LONG),
        ("delta_to_base_radio_compaction_scheduled", _DOUBLE),
        ("delta_to_base_radio_compaction_unscheduled", _DOUBLE),
        ("delta_files_compaction_scheduled", _STR), ("delta_files_compaction_unscheduled", _STR),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        if "path_regex" in args.given and "partition_path" in args.given:
            self._fail("path_regex and partition_path cannot be used together")
        glob = args["path_regex"] if "path_regex" in args.given else args["partition_path"]
        table = ctx.table(args)
        upper = (args["max_instant"] or "").strip()
        if args["merge"] and not upper:
            last = table.timeline.last_completed_commit()
            if last is None:
                return []
            upper = last.timestamp
        rows = []
        for (partition, file_id), files in file_slices(ctx, args, glob).items():
            candidates = [f for f in files if not args["merge"] or f.instant_time <= upper]
            if not candidates:
                continue
            bf = candidates[-1]
            ratio = 0.0 if bf.size > 0 else -1.0
            rows.append((partition, file_id, bf.instant_time, _data_file(table.base_path, bf), bf.size, 0, 0,
                         0, 0, ratio, ratio, "[]", "[]"))
        return limited(rows, args["limit"])

"""``show_timeline``: every instant of the active timeline, newest first, with the time of each state.

Parameters and columns are Hudi's (``ShowTimelineProcedure``); the rows are
:func:`hoodpy.inspect.timeline.timeline_rows` (``hoodpy timeline`` prints them too). ``requested_time`` /
``inflight_time`` / ``completed_time`` are the state files' modification times as ``MM-dd HH:mm:ss`` (UTC; NULL
when that state file does not exist). ``startTime`` / ``endTime`` accept Hudi's forms (yyyyMMddHHmmss[SSS],
yyyy-MM-dd, yyyy/MM/dd, yyyyMMdd; a date-only end time means the end of that day) and, when both are given,
the limit is not applied. ``showArchived`` adds the instants archived under ``.hoodie/archived`` (``ARCHIVED``
rows; their state times come from the archived entries' state transition times).
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.errors import ProcedureArgumentError
from hoodpy.inspect import timeline
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


def normalize_time(text: str, *, end: bool, procedure: type[Procedure], arg: str) -> str | None:
    """:func:`hoodpy.inspect.timeline.normalize_time`, failing as an argument error of ``procedure``."""
    try:
        return timeline.normalize_time(text, end=end)
    except ValueError as e:
        raise ProcedureArgumentError(procedure.name, f"argument {arg!r} {e}", procedure.signature()) from None


class ShowTimelineProcedure(Procedure):
    """Instants of the active timeline (every action and state), newest first."""

    name = "show_timeline"
    parameters = (
        TABLE, PATH,
        Parameter.optional("limit", INTEGER, 20),
        Parameter.optional("showArchived", BOOLEAN, False),
        Parameter.optional("filter", STRING, "", doc="Spark SQL predicate over the output columns."),
        Parameter.optional("startTime", STRING, ""),
        Parameter.optional("endTime", STRING, ""),
    )
    output = spark_output(timeline.TIMELINE)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        start = normalize_time(args["startTime"], end=False, procedure=type(self), arg="startTime")
        end = normalize_time(args["endTime"], end=True, procedure=type(self), arg="endTime")
        return timeline.timeline_rows(ctx.table(args).storage, limit=args["limit"], archived=args["showArchived"],
                                      start=start, end=end).rows

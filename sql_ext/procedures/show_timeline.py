"""``show_timeline``: every instant of the active timeline, newest first, with the time of each state.

Parameters and columns are Hudi's (``ShowTimelineProcedure``). ``requested_time`` / ``inflight_time`` /
``completed_time`` are the state files' modification times as ``MM-dd HH:mm:ss`` (UTC; NULL when that state
file does not exist). ``startTime`` / ``endTime`` accept Hudi's forms (yyyyMMddHHmmss[SSS], yyyy-MM-dd,
yyyy/MM/dd, yyyyMMdd; a date-only end time means the end of that day) and, when both are given, the limit
is not applied. ``showArchived`` adds the instants archived under ``.hoodie/archived`` (``ARCHIVED`` rows; their
state times come from the archived entries' state transition times).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timezone

from pyspark.sql.types import StringType

from hoodpy.errors import ProcedureArgumentError
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
    instant_file_times,
)
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.timeline import METAFOLDER

_STR = StringType()
_DATE_FORMS = (
    (re.compile(r"^\d{17}$"), lambda t, end: t),
    (re.compile(r"^\d{14}$"), lambda t, end: t + ("999" if end else "000")),
    (re.compile(r"^\d{4}-\d{2}-\d{2}$"), lambda t, end: t.replace("-", "") + ("235959999" if end else "000000000")),
    (re.compile(r"^\d{4}/\d{2}/\d{2}$"), lambda t, end: t.replace("/", "") + ("235959999" if end else "000000000")),
    (re.compile(r"^\d{8}$"), lambda t, end: t + ("235959999" if end else "000000000")),
)


def normalize_time(text: str, *, end: bool, procedure: type[Procedure], arg: str) -> str | None:
    """Hudi's ``normalizeTimeFormat``: a 17-digit instant time, or None for a blank argument."""
    text = (text or "").strip()
    if not text:
        return None
    for pattern, convert in _DATE_FORMS:
        if pattern.match(text):
            return convert(text, end)
    raise ProcedureArgumentError(
        procedure.name, f"argument {arg!r} must be yyyyMMddHHmmss[SSS], yyyy-MM-dd, yyyy/MM/dd or yyyyMMdd, "
        f"got {text!r}", procedure.signature())


def _clock(mtime_ns: int | None) -> str | None:
    if mtime_ns is None:
        return None
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=timezone.utc).strftime("%m-%d %H:%M:%S")


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
    output = (
        ("instant_time", _STR), ("action", _STR), ("state", _STR), ("requested_time", _STR),
        ("inflight_time", _STR), ("completed_time", _STR), ("timeline_type", _STR), ("rollback_info", _STR),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        start = normalize_time(args["startTime"], end=False, procedure=type(self), arg="startTime")
        end = normalize_time(args["endTime"], end=True, procedure=type(self), arg="endTime")
        table = ctx.table(args)
        timeline = table.timeline
        times = instant_file_times(table)
        instants = [i for i in timeline.instants
                    if (start is None or i.timestamp >= start) and (end is None or i.timestamp <= end)]
        archived = _archived(table) if args["showArchived"] else {}
        instants += [i for i in archived
                     if (start is None or i.timestamp >= start) and (end is None or i.timestamp <= end)]
        instants.sort(key=lambda i: i.timestamp, reverse=True)
        if start is None or end is None:
            instants = instants[: max(args["limit"], 0)]
        rolled_back_by = _rolled_back_by(table, timeline.filter(actions=[Action.ROLLBACK]))
        rows = []
        for instant in instants:
            if instant in archived:
                states = archived[instant]
                rows.append((instant.timestamp, instant.action.value, instant.state.value,
                             *(_archived_clock(states.get(s.value)) for s in State), "ARCHIVED", None))
                continue
            states = times.get((instant.timestamp, instant.action.value), {})
            rows.append((
                instant.timestamp, instant.action.value, instant.state.value,
                _clock(states.get(State.REQUESTED.value)), _clock(states.get(State.INFLIGHT.value)),
                _clock(states.get(State.COMPLETED.value)), "ACTIVE",
                _rollback_info(table, instant, rolled_back_by),
            ))
        return rows


def _archived(table) -> dict[Instant, dict[str, str | None]]:
    """Archived instants (their most advanced state) -> {state: state transition time}."""
    from hoodpy.services.archive import read_archived_entries

    out: dict[tuple[str, str], dict[str, str | None]] = {}
    for e in read_archived_entries(table.storage):
        out.setdefault((e.get("commitTime") or "", e.get("actionType") or ""), {})[e.get("actionState") or ""] = \
            e.get("stateTransitionTime")
    result = {}
    for (t, action), states in out.items():
        try:
            state = max((State(s) for s in states if s in State._value2member_map_), key=list(State).index)
            result[Instant(t, Action(action), state)] = states
        except ValueError:
            continue
    return result


def _archived_clock(instant_time: str | None) -> str | None:
    """An archived state transition time (yyyyMMddHHmmssSSS) as MM-dd HH:mm:ss."""
    if not instant_time or len(instant_time) < 14:
        return None
    return f"{instant_time[4:6]}-{instant_time[6:8]} {instant_time[8:10]}:{instant_time[10:12]}:{instant_time[12:14]}"


def _rollback_targets(table, rollback: Instant) -> list[str]:
    """The instants a rollback undid (completed) or will undo (pending); [] when unreadable."""
    try:
        if rollback.is_completed:
            meta = deserialize(AvroModel.ROLLBACK_METADATA,
                               table.storage.read_bytes(f"{METAFOLDER}/{rollback.file_name}"))
            return [str(t) for t in meta.get("commitsRollback") or []]
        requested = rollback.with_state(State.REQUESTED)
        plan = deserialize(AvroModel.ROLLBACK_PLAN, table.storage.read_bytes(f"{METAFOLDER}/{requested.file_name}"))
        target = (plan.get("instantToRollback") or {}).get("commitTime")
        return [str(target)] if target else []
    except Exception:  # Hudi skips unreadable rollback instants too
        return []


def _rolled_back_by(table, rollbacks: list[Instant]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rollback in rollbacks:
        for target in _rollback_targets(table, rollback):
            out.setdefault(target, []).append(rollback.timestamp)
    return out


def _rollback_info(table, instant: Instant, rolled_back_by: dict[str, list[str]]) -> str | None:
    if instant.action == Action.ROLLBACK:
        targets = _rollback_targets(table, instant)
        if not targets:
            return None
        return ("Rolled back: " if instant.is_completed else "Rolls back ") + ", ".join(targets)
    by = rolled_back_by.get(instant.timestamp)
    return "Rolled back by: " + ", ".join(by) if by else None

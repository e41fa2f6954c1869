"""Every instant of the timeline as rows, newest first, with the time of each state and rollback links.

Columns are Hudi's ``show_timeline``: ``requested_time`` / ``inflight_time`` / ``completed_time`` are the
state files' modification times as ``MM-dd HH:mm:ss`` (UTC; None when that state file does not exist).
Time bounds accept Hudi's forms (yyyyMMddHHmmss[SSS], yyyy-MM-dd, yyyy/MM/dd, yyyyMMdd; a date-only end
means the end of that day) and, when both are given, the limit does not apply. With ``archived``, the
instants archived under ``.hoodie/archived`` are added (``ARCHIVED`` rows, state times from the archived
entries).
"""

from __future__ import annotations

import re

from hoodpy.inspect.instant_times import format_clock, state_file_times, state_key
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.timeline.archived import read_archived_entries
from hoodpy.storage import Storage
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.timeline import Timeline

TIMELINE = columns(
    ("instant_time", "string"), ("action", "string"), ("state", "string"), ("requested_time", "string"),
    ("inflight_time", "string"), ("completed_time", "string"), ("timeline_type", "string"),
    ("rollback_info", "string"),
)
TIME_FORMS = "yyyyMMddHHmmss[SSS], yyyy-MM-dd, yyyy/MM/dd or yyyyMMdd"
_DATE_FORMS = (
    (re.compile(r"^\d{17}$"), lambda t, end: t),
    (re.compile(r"^\d{14}$"), lambda t, end: t + ("999" if end else "000")),
    (re.compile(r"^\d{4}-\d{2}-\d{2}$"), lambda t, end: t.replace("-", "") + ("235959999" if end else "000000000")),
    (re.compile(r"^\d{4}/\d{2}/\d{2}$"), lambda t, end: t.replace("/", "") + ("235959999" if end else "000000000")),
    (re.compile(r"^\d{8}$"), lambda t, end: t + ("235959999" if end else "000000000")),
)


def normalize_time(text: str | None, *, end: bool) -> str | None:
    """Hudi's ``normalizeTimeFormat``: a 17-digit instant time, None for blank text; ValueError otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    for pattern, convert in _DATE_FORMS:
        if pattern.match(text):
            return convert(text, end)
    raise ValueError(f"must be {TIME_FORMS}, got {text!r}")


def timeline_rows(storage: Storage, *, limit: int | None = 20, archived: bool = False, start: str | None = None,
                  end: str | None = None) -> Rows:
    """Instants of the active (and, with ``archived``, archived) timeline, newest first.

    ``start`` / ``end`` are normalized instant times (see :func:`normalize_time`), inclusive.
    """
    timeline = Timeline.load(storage)
    times = state_file_times(storage)

    def in_range(i: Instant) -> bool:
        return (start is None or i.timestamp >= start) and (end is None or i.timestamp <= end)

    instants = [i for i in timeline.instants if in_range(i)]
    archived_states = _archived(storage) if archived else {}
    instants += [i for i in archived_states if in_range(i)]
    instants.sort(key=lambda i: i.timestamp, reverse=True)
    if (start is None or end is None) and limit is not None:
        instants = instants[: max(limit, 0)]
    rolled_back_by = _rolled_back_by(storage, timeline.filter(actions=[Action.ROLLBACK]))
    rows = []
    for instant in instants:
        if instant in archived_states:
            states = archived_states[instant]
            rows.append((instant.timestamp, instant.action.value, instant.state.value,
                         *(_archived_clock(states.get(s.value)) for s in State), "ARCHIVED", None))
            continue
        states = times.get(state_key(instant), {})
        rows.append((
            instant.timestamp, instant.action.value, instant.state.value,
            format_clock(states.get(State.REQUESTED.value)), format_clock(states.get(State.INFLIGHT.value)),
            format_clock(states.get(State.COMPLETED.value)), "ACTIVE",
            _rollback_info(storage, instant, rolled_back_by),
        ))
    return make_rows(TIMELINE, rows)


def _archived(storage: Storage) -> dict[Instant, dict[str, str | None]]:
    """Archived instants (their most advanced state) -> {state: state transition time}."""
    out: dict[tuple[str, str], dict[str, str | None]] = {}
    for e in read_archived_entries(storage):
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


def _rollback_targets(storage: Storage, rollback: Instant) -> list[str]:
    """The instants a rollback undid (completed) or will undo (pending); [] when unreadable."""
    try:
        if rollback.is_completed:
            meta = deserialize(AvroModel.ROLLBACK_METADATA, storage.read_bytes(rollback.path))
            return [str(t) for t in meta.get("commitsRollback") or []]
        requested = rollback.with_state(State.REQUESTED)
        plan = deserialize(AvroModel.ROLLBACK_PLAN, storage.read_bytes(requested.path))
        target = (plan.get("instantToRollback") or {}).get("commitTime")
        return [str(target)] if target else []
    except Exception:  # Hudi skips unreadable rollback instants too
        return []


def _rolled_back_by(storage: Storage, rollbacks: list[Instant]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rollback in rollbacks:
        for target in _rollback_targets(storage, rollback):
            out.setdefault(target, []).append(rollback.timestamp)
    return out


def _rollback_info(storage: Storage, instant: Instant, rolled_back_by: dict[str, list[str]]) -> str | None:
    if instant.action == Action.ROLLBACK:
        targets = _rollback_targets(storage, instant)
        if not targets:
            return None
        return ("Rolled back: " if instant.is_completed else "Rolls back ") + ", ".join(targets)
    by = rolled_back_by.get(instant.timestamp)
    return "Rolled back by: " + ", ".join(by) if by else None

"""Instants: an action at an instant time in a state, and their timeline file names.

Timeline layout 1 (table version 6) keeps instant files in ``.hoodie/``: ``<t>.<action>`` when completed.
Layout 2 (table versions 8 and 9, Hudi 1.x) keeps them in ``.hoodie/timeline/`` and names a completed
instant ``<t>_<c>.<action>``, ``c`` being its completion time; a pending clustering is a ``clustering``
action there (``<t>.clustering.requested``) that completes as a ``replacecommit``. Both layouts name the
inflight commit ``<t>.inflight``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from enum import Enum

from hoodpy.errors import InvalidInstantError

INSTANT_TIME_FORMAT = "%Y%m%d%H%M%S"
EARLIEST_INSTANT = "0" * 17  # before every instant: Hudi's "000" (start of the timeline) as an instant time
_INSTANT_TIME_RE = re.compile(r"^\d{14}(\d{3})?$")
# A metadata table of table version 6 also names instants of its own with 3-digit suffixes on a data-table time
# (Java's HoodieTableMetadataUtil: <t>010 initialises a partition, <t>001 compacts).
_TIMELINE_STAMP_RE = re.compile(r"^\d{14}(?:\d{3})*$")
_COMPLETED_V2_RE = re.compile(r"^(\d{14}(?:\d{3})?)_(\d{14}(?:\d{3})?)$")

METAFOLDER = ".hoodie"
LAYOUT_1 = 1  # table version 6: instants in .hoodie/
LAYOUT_2 = 2  # table versions 8 and 9: instants in .hoodie/timeline/, completed ones with a completion time
LAYOUT_2_FOLDER = f"{METAFOLDER}/timeline"
CLUSTERING = "clustering"  # layout 2's name of a pending clustering replacecommit


def timeline_folder(layout: int) -> str:
    """Where the active timeline's instant files are."""
    return LAYOUT_2_FOLDER if layout == LAYOUT_2 else METAFOLDER


class Action(str, Enum):
    COMMIT = "commit"
    DELTACOMMIT = "deltacommit"
    REPLACECOMMIT = "replacecommit"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    COMPACTION = "compaction"

    @property
    def is_write(self) -> bool:
        """Actions whose completed instants add or replace base files."""
        return self in (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT)


class State(str, Enum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"


@dataclass(frozen=True, order=True)
class Instant:
    """One timeline entry. Ordered by time, then action, then state, as Hudi compares them.

    ``layout`` decides its file name and folder; ``completion_time`` is known for completed layout-2
    instants (it is in the file name); ``clustering`` marks a layout-2 replacecommit that is a clustering.
    None of the three takes part in equality or order.
    """

    timestamp: str
    action: Action
    state: State = State.COMPLETED
    completion_time: str | None = field(default=None, compare=False)
    layout: int = field(default=LAYOUT_1, compare=False)
    clustering: bool = field(default=False, compare=False)

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state == State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state == State.INFLIGHT

    def with_state(self, state: State, completion_time: str | None = None) -> Instant:
        return replace(self, state=state, completion_time=completion_time)

    @property
    def completed_at(self) -> str:
        """When the instant completed, as far as the timeline tells: the completion time in layout 2, the
        instant time in layout 1 (which records none; there instants complete in instant-time order)."""
        return self.completion_time or self.timestamp

    @property
    def comparable_action(self) -> Action:
        """The action this instant shares a timeline entry with: a compaction completes as a commit of the same
        time, so the two are one entry (Hudi's getComparableAction)."""
        return Action.COMMIT if self.action == Action.COMPACTION else self.action

    @property
    def completed_action(self) -> str:
        """The action in the completed file's name (a completed compaction is a commit)."""
        return Action.COMMIT.value if self.action == Action.COMPACTION else self.action.value

    @property
    def file_name(self) -> str:
        """The instant file's name in its timeline folder."""
        t, a = self.timestamp, self.action
        if self.state == State.COMPLETED:
            name = self.completed_action
            if self.layout == LAYOUT_2:
                if self.completion_time is None:
                    raise InvalidInstantError(f"Completed instant {self} has no completion time")
                return f"{t}_{self.completion_time}.{name}"
            return f"{t}.{name}"
        pending = CLUSTERING if self.clustering and self.layout == LAYOUT_2 else a.value
        if self.state == State.INFLIGHT:
            return f"{t}.inflight" if a == Action.COMMIT else f"{t}.{pending}.inflight"
        return f"{t}.{pending}.requested"

    @property
    def path(self) -> str:
        """The instant file's path relative to the table's base path."""
        return f"{timeline_folder(self.layout)}/{self.file_name}"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action.value}__{self.state.value}]"


_SUFFIXES: dict[str, tuple[Action, State]] = {"inflight": (Action.COMMIT, State.INFLIGHT)}
for _action in Action:
    _SUFFIXES[f"{_action.value}.requested"] = (_action, State.REQUESTED)
    _SUFFIXES[f"{_action.value}.inflight"] = (_action, State.INFLIGHT)
    if _action != Action.COMPACTION:
        _SUFFIXES[_action.value] = (_action, State.COMPLETED)


def parse_instant_file_name(name: str, layout: int = LAYOUT_1) -> Instant | None:
    """The instant a timeline file name stands for, or None for files that are not instants (including
    actions hoodpy does not model, such as layout 2's ``indexing``)."""
    stem, _, suffix = name.partition(".")
    if layout != LAYOUT_2:
        if not _TIMELINE_STAMP_RE.match(stem) or suffix not in _SUFFIXES:
            return None
        action, state = _SUFFIXES[suffix]
        return Instant(stem, action, state)
    completed = _COMPLETED_V2_RE.match(stem)
    if completed:
        action, state = _SUFFIXES.get(suffix, (None, None))
        if state != State.COMPLETED:
            return None
        return Instant(completed.group(1), action, state, completed.group(2), LAYOUT_2)
    if not _INSTANT_TIME_RE.match(stem):
        return None
    pending, _, which = suffix.rpartition(".")
    if pending == CLUSTERING and which in ("requested", "inflight"):
        state = State.REQUESTED if which == "requested" else State.INFLIGHT
        return Instant(stem, Action.REPLACECOMMIT, state, None, LAYOUT_2, clustering=True)
    action, state = _SUFFIXES.get(suffix, (None, None))
    if state is None or state == State.COMPLETED:
        return None
    return Instant(stem, action, state, None, LAYOUT_2)


def validate_instant_time(instant_time: str) -> str:
    if not isinstance(instant_time, str) or not _INSTANT_TIME_RE.match(instant_time):
        raise InvalidInstantError(
            f"Instant time {instant_time!r} is not Hudi's yyyyMMddHHmmssSSS (17 digits, UTC)"
        )
    return instant_time


def instant_time_of(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc)
    return moment.strftime(INSTANT_TIME_FORMAT) + f"{moment.microsecond // 1000:03d}"


def format_instant_millis(mtime_ns: int | None) -> str | None:
    """A modification time (nanoseconds since the epoch) in the instant format (yyyyMMddHHmmssSSS, UTC like
    the timeline), as Hudi reports state transition times; None stays None."""
    if mtime_ns is None:
        return None
    return instant_time_of(datetime.fromtimestamp(mtime_ns / 1e9, tz=timezone.utc))


def parse_instant_time(instant_time: str) -> datetime:
    validate_instant_time(instant_time)
    base = datetime.strptime(instant_time[:14], INSTANT_TIME_FORMAT).replace(tzinfo=timezone.utc)
    millis = int(instant_time[14:] or 0)
    return base + timedelta(milliseconds=millis)


_clock_lock = threading.Lock()
_last_issued = "0"


def new_instant_time(after: str | None = None) -> str:
    """A fresh instant time (UTC ms), strictly later than any issued in this process and than ``after``."""
    global _last_issued
    with _clock_lock:
        candidate = instant_time_of(datetime.now(timezone.utc))
        floor = max(_last_issued, after or "0")
        if candidate <= floor:
            candidate = instant_time_of(parse_instant_time(floor.ljust(17, "0")) + timedelta(milliseconds=1))
        _last_issued = candidate
        return candidate


def plan_instant_time(requested: str | None, latest: str | None, what: str) -> str:
    """The instant time of a new table-service plan: ``requested`` if given (it must follow ``latest``, the
    newest instant on the timeline, so the plan cannot slip in behind work already there), else a fresh one."""
    if requested is None:
        return new_instant_time(after=latest)
    if latest is not None and validate_instant_time(requested) <= latest:
        raise InvalidInstantError(f"{what} instant {requested} must be later than the latest instant "
                                  f"{latest} on the timeline")
    return requested

"""Instants: an action at an instant time in a state, and their timeline file names (layout version 1)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum

from hoodpy.errors import InvalidInstantError

INSTANT_TIME_FORMAT = "%Y%m%d%H%M%S"
_INSTANT_TIME_RE = re.compile(r"^\d{14}(\d{3})?$")


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
    """One timeline entry. Ordered by time, then action, then state, as Hudi compares them."""

    timestamp: str
    action: Action
    state: State = State.COMPLETED

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state == State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state == State.INFLIGHT

    def with_state(self, state: State) -> Instant:
        return Instant(self.timestamp, self.action, state)

    @property
    def file_name(self) -> str:
        """The file name under .hoodie/ (timeline layout version 1)."""
        t, a = self.timestamp, self.action
        if self.state == State.COMPLETED:
            # A completed compaction is a commit.
            return f"{t}.{Action.COMMIT.value if a == Action.COMPACTION else a.value}"
        if self.state == State.INFLIGHT:
            return f"{t}.inflight" if a == Action.COMMIT else f"{t}.{a.value}.inflight"
        return f"{t}.{a.value}.requested"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action.value}__{self.state.value}]"


_SUFFIXES: dict[str, tuple[Action, State]] = {"inflight": (Action.COMMIT, State.INFLIGHT)}
for _action in Action:
    _SUFFIXES[f"{_action.value}.requested"] = (_action, State.REQUESTED)
    _SUFFIXES[f"{_action.value}.inflight"] = (_action, State.INFLIGHT)
    if _action != Action.COMPACTION:
        _SUFFIXES[_action.value] = (_action, State.COMPLETED)


def parse_instant_file_name(name: str) -> Instant | None:
    """The instant a .hoodie/ file name stands for, or None for files that are not instants."""
    timestamp, _, suffix = name.partition(".")
    if not _INSTANT_TIME_RE.match(timestamp) or suffix not in _SUFFIXES:
        return None
    action, state = _SUFFIXES[suffix]
    return Instant(timestamp, action, state)


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
    """A modification time as Hudi's instant format (yyyyMMddHHmmssSSS, UTC like hoodpy's timeline)."""
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

"""When each state of each instant was written: the modification times of the files under ``.hoodie/``.

Hudi's listings show them in two forms: the instant format (``yyyyMMddHHmmssSSS``, e.g. a commit's
``state_transition_time``) and a clock (``MM-dd HH:mm:ss``, the timeline's state columns); both in UTC,
hoodpy's timeline time zone.
"""

from __future__ import annotations

from datetime import datetime, timezone

from hoodpy.storage import Storage
from hoodpy.timeline.instant import Instant, format_instant_millis, parse_instant_file_name, timeline_folder
from hoodpy.timeline.timeline import read_layout

StateTimes = dict[tuple[str, str], dict[str, int | None]]


def state_file_times(storage: Storage) -> StateTimes:
    """(instant time, action) -> {state: modification time in ns} of the instant files under ``.hoodie/``
    (``.hoodie/timeline/`` in table versions 8 and 9). A compaction's states are filed under the commit it
    completes as (:attr:`Instant.comparable_action`); look them up with :func:`state_key`."""
    out: StateTimes = {}
    layout = read_layout(storage)
    for info in storage.list_files(timeline_folder(layout)):
        instant = parse_instant_file_name(info.path.rsplit("/", 1)[-1], layout)
        if instant is not None:
            out.setdefault(state_key(instant), {})[instant.state.value] = info.mtime_ns
    return out


def state_key(instant: Instant) -> tuple[str, str]:
    """The key of an instant's states in :func:`state_file_times`."""
    return instant.timestamp, instant.comparable_action.value


def format_clock(mtime_ns: int | None) -> str | None:
    """A modification time as ``MM-dd HH:mm:ss`` (UTC)."""
    if mtime_ns is None:
        return None
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=timezone.utc).strftime("%m-%d %H:%M:%S")


def completed_time(times: StateTimes, instant: Instant) -> str | None:
    """When ``instant`` completed, in instant format (None while it is pending)."""
    return format_instant_millis(times.get(state_key(instant), {}).get("COMPLETED"))

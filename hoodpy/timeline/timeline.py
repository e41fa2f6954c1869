"""The active timeline: the instants under .hoodie/, loaded once and filtered by action, state and range.

In timeline layout 2 (table versions 8 and 9) the archived instants keep their completion times in the LSM
history (:mod:`hoodpy.timeline.history`): completion-time questions about writes older than the active
timeline (time travel, incremental windows, which slice a log file joins) are answered from it, read on first
need. Layout 1's archive records no completion times: there such writes count as completed at their instant
time, as Hudi 0.x has it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.storage import FileInfo, Storage
from hoodpy.timeline.history import HistoryInstant, history_folder, read_history
from hoodpy.timeline.instant import (
    LAYOUT_1, LAYOUT_2, METAFOLDER, Action, Instant, State, parse_instant_file_name, timeline_folder,
)
from hoodpy.timeline.metadata import CommitMetadata, OperationType

TEMPFOLDER = f"{METAFOLDER}/.temp"  # per-instant working files (Hudi keeps its markers here)


def instant_temp_dir(instant_time: str) -> str:
    return f"{TEMPFOLDER}/{instant_time}"

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT)


def layout_of(props: Mapping[str, str] | None) -> int:
    """The timeline layout version ``hoodie.properties`` declares (1 when it says nothing)."""
    return int((props or {}).get(TableConfig.TIMELINE_LAYOUT_VERSION.key) or LAYOUT_1)


def read_layout(storage: Storage) -> int:
    return layout_of(load_table_properties(storage))


@dataclass(frozen=True)
class CommittedInstants:
    """Which instant times count as committed writes as of an instant: completed on the active timeline (by
    then: ``completed`` holds those whose completion time is at or before it), or older than its earliest
    instant (archived; their instant time decides). Picklable, so Spark tasks filter log blocks with it."""

    completed: frozenset[str]
    earliest_active: str | None
    as_of: str | None = None
    archived_later: frozenset[str] = frozenset()  # archived writes (layout 2) that completed after as_of
    layout: int = LAYOUT_1  # the timeline's layout: 2 for table versions 8 and 9, whose log blocks Hudi 1.x writes

    def __contains__(self, instant_time: object) -> bool:
        # An instant completes after it starts: one later than as_of cannot have completed by then.
        if not isinstance(instant_time, str) or (self.as_of is not None and instant_time > self.as_of):
            return False
        if instant_time in self.archived_later:
            return False
        return instant_time in self.completed or (
            self.earliest_active is not None and instant_time < self.earliest_active)


class Timeline:
    """A loaded snapshot of the active timeline. Reload (``Timeline.load``) to see newer instants."""

    def __init__(self, storage: Storage, instants: Iterable[Instant], layout: int = LAYOUT_1):
        self.storage = storage
        self.layout = layout
        # One entry per (timestamp, action): the most advanced state present wins. A compaction and the commit
        # it completes as are one entry (``<t>.compaction.requested`` / ``.inflight``, then ``<t>.commit``).
        latest: dict[tuple[str, Action], Instant] = {}
        rank = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
        for i in instants:
            key = (i.timestamp, i.comparable_action)
            if key not in latest or rank[i.state] > rank[latest[key].state]:
                latest[key] = i
        self.instants: list[Instant] = sorted(latest.values(), key=lambda i: (i.timestamp, i.action.value))
        self._metadata: dict[Instant, CommitMetadata] = {}
        self._history: dict[bool, list[HistoryInstant]] = {}

    @classmethod
    def load(cls, storage: Storage, layout: int | None = None) -> Timeline:
        """The active timeline (``layout``: the table's timeline layout, read from its properties if None)."""
        layout = read_layout(storage) if layout is None else layout
        return cls.from_listing(storage, storage.list_files(timeline_folder(layout)), layout)

    @classmethod
    def from_listing(cls, storage: Storage, listing: Iterable[FileInfo], layout: int) -> Timeline:
        """The timeline of a listing of the layout's timeline folder."""
        names = (f.path.rsplit("/", 1)[-1] for f in listing)
        parsed = (parse_instant_file_name(name, layout) for name in names)
        return cls(storage, (i for i in parsed if i is not None), layout)

    def new_instant(self, instant_time: str, action: Action, state: State = State.REQUESTED) -> Instant:
        """An instant of this timeline's layout (not yet on storage)."""
        return Instant(instant_time, action, state, layout=self.layout)

    # -- filters -----------------------------------------------------------------------------
    def filter(self, *, actions: Iterable[Action] | None = None, states: Iterable[State] | None = None,
               ) -> list[Instant]:
        acts = set(actions) if actions is not None else None
        sts = set(states) if states is not None else None
        return [i for i in self.instants
                if (acts is None or i.action in acts) and (sts is None or i.state in sts)]

    def completed_commits(self) -> list[Instant]:
        """Completed commit / deltacommit / replacecommit instants, oldest first."""
        return self.filter(actions=_WRITE_ACTIONS, states=[State.COMPLETED])

    def completed_replacecommits(self) -> list[Instant]:
        return self.filter(actions=[Action.REPLACECOMMIT], states=[State.COMPLETED])

    def savepoint_times(self) -> list[str]:
        """Instant times of the completed savepoints, oldest first."""
        return [i.timestamp for i in self.filter(actions=[Action.SAVEPOINT], states=[State.COMPLETED])]

    def pending(self, actions: Iterable[Action] | None = None) -> list[Instant]:
        return [i for i in self.filter(actions=actions) if not i.is_completed]

    def pending_writes(self) -> list[Instant]:
        return self.pending(_WRITE_ACTIONS)

    @cached_property
    def _completed_write_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.completed_commits())

    def is_completed_write(self, instant_time: str) -> bool:
        return instant_time in self._completed_write_times

    def committed(self, as_of: str | None = None) -> CommittedInstants:
        """The committed write times, as of ``as_of`` (by completion time) when given."""
        if as_of is None:
            return CommittedInstants(self._completed_write_times, self.earliest_instant_time(), layout=self.layout)
        completed = {i.timestamp for i in self.completed_commits() if i.completed_at <= as_of}
        archived = self.archived_writes()
        completed |= {t for t, i in archived.items() if i.completed_at <= as_of}
        later = frozenset(t for t, i in archived.items() if i.completed_at > as_of)
        return CommittedInstants(frozenset(completed), self.earliest_instant_time(), as_of, later, self.layout)

    def last_completed_commit(self) -> Instant | None:
        commits = self.completed_commits()
        return commits[-1] if commits else None

    def latest_instant_time(self) -> str | None:
        """The newest instant or completion time of any action or state (new instants must come after it)."""
        return max((i.completed_at for i in self.instants), default=None)

    def earliest_instant_time(self) -> str | None:
        return self.instants[0].timestamp if self.instants else None

    def completed_commits_in_range(self, start: str | None, end: str | None, *, archived: bool = False,
                                   ) -> list[Instant]:
        """Completed write instants that completed in (start, end] (either bound may be open), in completion
        order: in layout 2 by completion time, as Hudi 1.x selects incremental windows; in layout 1 by
        instant time. With ``archived``, layout 2's archived writes count too (their metadata is read from
        the history by :meth:`commit_metadata`)."""
        candidates = self.completed_commits()
        if archived:
            candidates = list(self.archived_writes().values()) + candidates
        return sorted((i for i in candidates
                       if (start is None or i.completed_at > start) and (end is None or i.completed_at <= end)),
                      key=lambda i: i.completed_at)

    def earliest_recorded_write(self) -> str | None:
        """The instant time of the oldest completed write whose completion time the timeline records: on the
        active timeline or, in layout 2, in the history. Writes before it are known only by their files."""
        times = [*self.archived_writes(), *(i.timestamp for i in self.completed_commits())]
        return min(times, default=None)

    @cached_property
    def _completion_times(self) -> dict[str, str]:
        return {i.timestamp: i.completed_at for i in self.completed_commits()}

    def completion_time(self, instant_time: str) -> str | None:
        """When the completed write ``instant_time`` completed (layout 1: its instant time); a write older
        than the active timeline (archived) completed when the history says (layout 2), else it is taken to
        have completed at its instant time; None for a write that has not completed."""
        if instant_time in self._completion_times:
            return self._completion_times[instant_time]
        earliest = self.earliest_instant_time()
        if earliest is None or instant_time >= earliest:
            return None
        archived = self.archived_writes().get(instant_time)
        return archived.completed_at if archived is not None else instant_time

    def visible_as_of(self, instant_time: str, as_of: str | None) -> bool:
        """Whether the files a completed write of ``instant_time`` wrote are part of the table as of ``as_of``
        (None: now): it completed at or before ``as_of``. A write older than the active timeline (archived)
        is judged by its completion time in the history (layout 2), else by its instant time."""
        if as_of is None:
            return True
        return (self.completion_time(instant_time) or instant_time) <= as_of

    # -- the archived timeline (layout 2's LSM history) ---------------------------------------------
    def history(self, *, with_metadata: bool = False) -> list[HistoryInstant]:
        """The archived instants of layout 2's history, oldest first ([] in layout 1), read once per timeline
        (``with_metadata``: with their metadata and plan bytes)."""
        if self.layout != LAYOUT_2:
            return []
        if with_metadata not in self._history:
            if not with_metadata and True in self._history:
                return self._history[True]
            folder = history_folder(load_table_properties(self.storage))
            self._history[with_metadata] = read_history(self.storage, folder, with_metadata=with_metadata)
        return self._history[with_metadata]

    def archived_writes(self) -> dict[str, Instant]:
        """Completed commits, deltacommits and replacecommits of the history by instant time (layout 2)."""
        return self._archived_writes

    @cached_property
    def _archived_writes(self) -> dict[str, Instant]:
        instants = (entry.instant() for entry in self.history())
        return {i.timestamp: i for i in instants if i is not None and i.action.is_write}

    def find(self, instant_time: str, action: Action | None = None) -> Instant | None:
        for i in self.instants:
            if i.timestamp == instant_time and (action is None or i.action == action):
                return i
        return None

    # -- metadata ----------------------------------------------------------------------------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Metadata of a completed commit / replacecommit, active or (layout 2) archived in the history
        (cached for the life of this timeline)."""
        if instant not in self._metadata:
            if self.find(instant.timestamp, instant.action) is None and instant.timestamp in self.archived_writes():
                self._metadata[instant] = self._archived_metadata(instant)
            else:
                data = self.storage.read_bytes(instant.path)
                self._metadata[instant] = CommitMetadata.from_bytes(data, source=self.storage.full_path(instant.path))
        return self._metadata[instant]

    def _archived_metadata(self, instant: Instant) -> CommitMetadata:
        for entry in self.history(with_metadata=True):
            if entry.instant_time == instant.timestamp and entry.action == instant.completed_action:
                if not entry.metadata:
                    return CommitMetadata(OperationType.UNKNOWN)  # Java archives an empty completed file as null
                return CommitMetadata.from_bytes(entry.metadata, source=f"archived instant {instant}")
        return CommitMetadata(OperationType.UNKNOWN)

    def latest_schema(self) -> str | None:
        """The Avro schema string of the newest completed write that recorded one."""
        for instant in reversed(self.completed_commits()):
            schema = self.commit_metadata(instant).schema
            if schema:
                return schema
        return None

    def latest_extra_metadata(self, key: str) -> tuple[Instant, str] | None:
        """The newest completed write (by completion) whose commit metadata holds ``key`` in its extraMetadata,
        with the value: where a pipeline finds the checkpoint it stored with its last successful commit, as
        Hudi's streamer does."""
        for instant in sorted(self.completed_commits(), key=lambda i: i.completed_at, reverse=True):
            value = self.commit_metadata(instant).extra_metadata.get(key)
            if value is not None:
                return instant, value
        return None

    def __len__(self) -> int:
        return len(self.instants)

    def __repr__(self) -> str:
        return f"Timeline({', '.join(map(str, self.instants))})"

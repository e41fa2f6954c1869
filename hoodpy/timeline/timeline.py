"""The active timeline: the instants under .hoodie/, loaded once and filtered by action, state and range."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action, Instant, State, parse_instant_file_name
from hoodpy.timeline.metadata import CommitMetadata

METAFOLDER = ".hoodie"
TEMPFOLDER = f"{METAFOLDER}/.temp"  # per-instant working files (Hudi keeps its markers here)


def instant_temp_dir(instant_time: str) -> str:
    return f"{TEMPFOLDER}/{instant_time}"

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT)


@dataclass(frozen=True)
class CommittedInstants:
    """Which instant times count as committed writes as of an instant: completed on the active timeline, or
    older than its earliest instant (archived). Picklable, so Spark tasks filter log blocks with it."""

    completed: frozenset[str]
    earliest_active: str | None
    as_of: str | None = None

    def __contains__(self, instant_time: object) -> bool:
        if not isinstance(instant_time, str) or (self.as_of is not None and instant_time > self.as_of):
            return False
        return instant_time in self.completed or (
            self.earliest_active is not None and instant_time < self.earliest_active)


class Timeline:
    """A loaded snapshot of the active timeline. Reload (``Timeline.load``) to see newer instants."""

    def __init__(self, storage: Storage, instants: Iterable[Instant]):
        self.storage = storage
        # One entry per (timestamp, action): the most advanced state present wins.
        latest: dict[tuple[str, Action], Instant] = {}
        rank = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
        for i in instants:
            key = (i.timestamp, i.action)
            if key not in latest or rank[i.state] > rank[latest[key].state]:
                latest[key] = i
        self.instants: list[Instant] = sorted(latest.values(), key=lambda i: (i.timestamp, i.action.value))
        self._metadata: dict[Instant, CommitMetadata] = {}

    @classmethod
    def load(cls, storage: Storage) -> Timeline:
        names = (f.path.rsplit("/", 1)[-1] for f in storage.list_files(METAFOLDER))
        return cls(storage, (i for i in map(parse_instant_file_name, names) if i is not None))

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
        """The committed write times, up to ``as_of`` when given."""
        return CommittedInstants(self._completed_write_times, self.earliest_instant_time(), as_of)

    def last_completed_commit(self) -> Instant | None:
        commits = self.completed_commits()
        return commits[-1] if commits else None

    def latest_instant_time(self) -> str | None:
        """The newest instant time of any action or state (new instants must come after it)."""
        return self.instants[-1].timestamp if self.instants else None

    def earliest_instant_time(self) -> str | None:
        return self.instants[0].timestamp if self.instants else None

    def completed_commits_in_range(self, start: str | None, end: str | None) -> list[Instant]:
        """Completed write instants with start < time <= end (either bound may be open)."""
        return [i for i in self.completed_commits()
                if (start is None or i.timestamp > start) and (end is None or i.timestamp <= end)]

    def find(self, instant_time: str, action: Action | None = None) -> Instant | None:
        for i in self.instants:
            if i.timestamp == instant_time and (action is None or i.action == action):
                return i
        return None

    # -- metadata ----------------------------------------------------------------------------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Metadata of a completed commit / replacecommit (cached for the life of this timeline)."""
        if instant not in self._metadata:
            rel = f"{METAFOLDER}/{instant.file_name}"
            data = self.storage.read_bytes(rel)
            self._metadata[instant] = CommitMetadata.from_json_bytes(data, source=self.storage.full_path(rel))
        return self._metadata[instant]

    def latest_schema(self) -> str | None:
        """The Avro schema string of the newest completed write that recorded one."""
        for instant in reversed(self.completed_commits()):
            schema = self.commit_metadata(instant).schema
            if schema:
                return schema
        return None

    def __len__(self) -> int:
        return len(self.instants)

    def __repr__(self) -> str:
        return f"Timeline({', '.join(map(str, self.instants))})"

"""Savepoints: pin a completed commit's files against cleaning, list and delete them, and restore to one.

A savepoint is written as Hudi writes it: ``<t>.savepoint.inflight`` (empty), then ``<t>.savepoint`` (in
table versions 8 and 9 ``<t>_<completion>.savepoint`` in ``.hoodie/timeline``) holding Avro
HoodieSavepointMetadata with, per partition, the file names of the table's latest file slices as of commit
``t`` (base files and, on merge-on-read tables, log files; the savepoint shares the commit's instant time).
The cleaner never deletes those files and archival never
passes the oldest savepoint.

A savepoint is not planned and executed like the table services: Hudi writes it in one step, under the table
lock. Restoring to one (``rollback_to``) is a table service, :class:`~hoodpy.services.restore.RestoreService`.

Deleting a savepoint leaves the partitions it pinned in ``.hoodie/.aux/.hoodpy_deleted_savepoints/<t>`` so
that the next incremental clean revisits them (Hudi 0.14's clean metadata has no field to carry this).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from hoodpy.errors import SavepointError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.services.clean.retention import check_retained
from hoodpy.services.restore import RestoreService
from hoodpy.services.table_service import Options, ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, Instant, State, validate_instant_time
from hoodpy.timeline.timeline import METAFOLDER, Timeline, read_layout

DELETED_SAVEPOINTS_DIR = f"{METAFOLDER}/.aux/.hoodpy_deleted_savepoints"


@dataclass(frozen=True)
class Savepoint:
    instant_time: str
    savepointed_by: str
    savepointed_at: int  # epoch millis
    comments: str
    files: dict[str, list[str]] = field(default_factory=dict)  # partition -> base and log file names


def _rel(instant: Instant) -> str:
    return instant.path


# -- reading --------------------------------------------------------------------------------------------
def read_savepoint(storage: Storage, instant_time: str) -> Savepoint:
    # Read by clean on every table version: in layout 2 the completed name holds a completion time.
    pending = Instant(instant_time, Action.SAVEPOINT, State.INFLIGHT, layout=read_layout(storage))
    rel = _rel(transitions.completed_file(storage, pending) or pending.with_state(State.COMPLETED))
    d = deserialize(AvroModel.SAVEPOINT_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))
    return Savepoint(instant_time, d.get("savepointedBy") or "", int(d.get("savepointedAt") or 0),
                     d.get("comments") or "",
                     {p: list(m.get("savepointDataFile") or []) for p, m in (d.get("partitionMetadata") or {}).items()})


def savepointed_files(storage: Storage, timeline: Timeline) -> set[str]:
    """File names (base and log files) any savepoint pins."""
    return {name for t in timeline.savepoint_times() for names in read_savepoint(storage, t).files.values()
            for name in names}


def partitions_of_deleted_savepoints(storage: Storage) -> set[str]:
    out: set[str] = set()
    for info in storage.list_files(DELETED_SAVEPOINTS_DIR):
        try:
            out |= set(json.loads(storage.read_bytes(info.path)))
        except (ValueError, TypeError):
            continue
    return out


def forget_deleted_savepoints(storage: Storage) -> None:
    """Called once a clean has scanned the partitions deleted savepoints pinned."""
    for info in storage.list_files(DELETED_SAVEPOINTS_DIR):
        storage.delete(info.path)


class SavepointService:
    """``HoodieTable.savepoints``: create, list, delete and restore savepoints of one table."""

    def __init__(self, context: ServiceContext):
        self.context = context

    @classmethod
    def of(cls, target: Any, options: Options = None) -> SavepointService:
        """The savepoints of a table (or of a bare Storage)."""
        return cls(ServiceContext.of(target, options))

    def create(self, instant_time: str | None = None, *, user: str = "", comment: str = "") -> Savepoint:
        """Savepoint a completed commit (default: the latest). Raises SavepointError naming the problem."""
        storage, name = self.context.storage, self.context.name
        with self.context.transaction(merge_on_read=True).locked():
            timeline = Timeline.load(storage)
            commits = timeline.completed_commits()
            if instant_time in (None, ""):
                if not commits:
                    raise SavepointError(f"Table {name} has no completed commit to savepoint")
                instant_time = commits[-1].timestamp
            validate_instant_time(instant_time)
            if not timeline.is_completed_write(instant_time):
                raise SavepointError(f"Cannot savepoint {instant_time}: it is not a completed commit of {name}")
            if instant_time in timeline.savepoint_times():
                raise SavepointError(f"Commit {instant_time} is already savepointed")
            try:
                check_retained(storage, timeline, instant_time)
            except Exception as e:
                raise SavepointError(f"Cannot savepoint {instant_time}: {e}") from e
            view = FileSystemView.load(storage, timeline, as_of=instant_time)
            files: dict[str, list[str]] = {}
            for file_slice in view.latest_file_slices():  # base file and log files, as Java lists a slice
                names = [f.file_name for f in (file_slice.base_file, *file_slice.log_files) if f is not None]
                files.setdefault(file_slice.partition_path, []).extend(names)
            savepoint = Savepoint(instant_time, user or "", int(time.time() * 1000), comment or "",
                                  {p: sorted(v) for p, v in sorted(files.items())})
            body = {"savepointedBy": savepoint.savepointed_by, "savepointedAt": savepoint.savepointed_at,
                    "comments": savepoint.comments,
                    "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names}
                                          for p, names in savepoint.files.items()},
                    "version": 1}
            inflight = transitions.create_requested(storage, instant_time, Action.SAVEPOINT)
            complete_instant(storage, inflight, serialize(AvroModel.SAVEPOINT_METADATA, body), self.context.config)
            return savepoint

    def list(self) -> list[Savepoint]:
        """Savepoints, oldest first."""
        storage = self.context.storage
        return [read_savepoint(storage, t) for t in Timeline.load(storage).savepoint_times()]

    def delete(self, instant_time: str) -> None:
        """Remove a savepoint; its files become eligible for cleaning again."""
        storage = self.context.storage
        validate_instant_time(instant_time)
        timeline = Timeline.load(storage)
        if instant_time not in timeline.savepoint_times():
            raise SavepointError(f"No savepoint at {instant_time} in {self.context.name} "
                                 f"(savepoints: {', '.join(timeline.savepoint_times()) or 'none'})")
        savepoint = read_savepoint(storage, instant_time)
        storage.write_atomic(f"{DELETED_SAVEPOINTS_DIR}/{instant_time}", json.dumps(sorted(savepoint.files)).encode())
        transitions.delete_completed(storage, timeline.new_instant(instant_time, Action.SAVEPOINT, State.COMPLETED))

    def rollback_to(self, instant_time: str) -> Instant:
        """Restore the table to the savepoint (a ``restore`` instant); returns the restore instant."""
        return RestoreService(self.context).run(savepoint_time=instant_time)

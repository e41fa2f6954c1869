"""Savepoints: pin a completed commit's files against cleaning, list and delete them, and restore to one.

A savepoint is written as Hudi writes it: ``<t>.savepoint.inflight`` (empty), then ``<t>.savepoint`` holding
Avro HoodieSavepointMetadata with, per partition, the base file names of the table as of commit ``t`` (the
savepoint shares the commit's instant time). The cleaner never deletes those files and archival never
passes the oldest savepoint.

Restoring (``rollback_to_savepoint``) follows Hudi's restore: ``<r>.restore.requested`` (Avro
HoodieRestorePlan naming every write instant after the savepoint, newest first), ``.restore.inflight``, then
each instant is rolled back in that order (its completed file hidden first, its base files deleted, its
pending files removed) and ``<r>.restore`` completes with HoodieRestoreMetadata embedding one
HoodieRollbackMetadata per instant. As in Hudi, the rollbacks a restore performs get no rollback instants of
their own. Every step is idempotent, so a restore interrupted by a crash is finished by the next
``rollback_to`` (or :func:`finish_pending_restores`).

Deleting a savepoint leaves the partitions it pinned in ``.hoodie/.aux/.hoodpy_deleted_savepoints/<t>`` so
that the next incremental clean revisits them (Hudi 0.14's clean metadata has no field to carry this).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hoodpy.errors import SavepointError
from hoodpy.file_group.fs_view import FileSystemView, list_base_files
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, Instant, State, new_instant_time, validate_instant_time
from hoodpy.timeline.timeline import METAFOLDER, Timeline
from hoodpy.transaction.heartbeat import heartbeat_path

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

DELETED_SAVEPOINTS_DIR = f"{METAFOLDER}/.aux/.hoodpy_deleted_savepoints"
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


@dataclass(frozen=True)
class Savepoint:
    instant_time: str
    savepointed_by: str
    savepointed_at: int  # epoch millis
    comments: str
    files: dict[str, list[str]] = field(default_factory=dict)  # partition -> base file names


def _rel(instant: Instant) -> str:
    return f"{METAFOLDER}/{instant.file_name}"


# -- reading --------------------------------------------------------------------------------------------
def read_savepoint(storage: Storage, instant_time: str) -> Savepoint:
    rel = _rel(Instant(instant_time, Action.SAVEPOINT, State.COMPLETED))
    d = deserialize(AvroModel.SAVEPOINT_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))
    return Savepoint(instant_time, d.get("savepointedBy") or "", int(d.get("savepointedAt") or 0),
                     d.get("comments") or "",
                     {p: list(m.get("savepointDataFile") or []) for p, m in (d.get("partitionMetadata") or {}).items()})


def savepoint_times(timeline: Timeline) -> list[str]:
    """Completed savepoints, oldest first."""
    return [i.timestamp for i in timeline.filter(actions=[Action.SAVEPOINT], states=[State.COMPLETED])]


def savepointed_files(storage: Storage, timeline: Timeline) -> set[str]:
    """Base file names any savepoint pins."""
    return {name for t in savepoint_times(timeline) for names in read_savepoint(storage, t).files.values()
            for name in names}


def list_savepoints(storage: Storage) -> list[Savepoint]:
    timeline = Timeline.load(storage)
    return [read_savepoint(storage, t) for t in savepoint_times(timeline)]


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


# -- create / delete ------------------------------------------------------------------------------------
def create_savepoint(table: HoodieTable, instant_time: str | None = None, *, user: str = "", comment: str = "",
                     ) -> Savepoint:
    """Savepoint a completed commit (default: the latest). Raises SavepointError naming the problem."""
    from hoodpy.services.clean.retention import check_retained
    from hoodpy.transaction.transaction import WriteTransaction

    storage = table.storage
    with WriteTransaction(storage, table.config).locked():
        timeline = Timeline.load(storage)
        commits = timeline.completed_commits()
        if instant_time in (None, ""):
            if not commits:
                raise SavepointError(f"Table {table.name} has no completed commit to savepoint")
            instant_time = commits[-1].timestamp
        validate_instant_time(instant_time)
        if not timeline.is_completed_write(instant_time):
            raise SavepointError(f"Cannot savepoint {instant_time}: it is not a completed commit of {table.name}")
        if instant_time in savepoint_times(timeline):
            raise SavepointError(f"Commit {instant_time} is already savepointed")
        try:
            check_retained(storage, timeline, instant_time)
        except Exception as e:
            raise SavepointError(f"Cannot savepoint {instant_time}: {e}") from e
        view = FileSystemView.load(storage, timeline, as_of=instant_time)
        files: dict[str, list[str]] = {}
        for bf in view.latest_base_files():
            files.setdefault(bf.partition_path, []).append(bf.file_name)
        savepoint = Savepoint(instant_time, user or "", int(time.time() * 1000), comment or "",
                              {p: sorted(v) for p, v in sorted(files.items())})
        body = {"savepointedBy": savepoint.savepointed_by, "savepointedAt": savepoint.savepointed_at,
                "comments": savepoint.comments,
                "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": names}
                                      for p, names in savepoint.files.items()},
                "version": 1}
        inflight = transitions.create_requested(storage, instant_time, Action.SAVEPOINT)
        transitions.complete(storage, inflight, serialize(AvroModel.SAVEPOINT_METADATA, body))
        return savepoint


def delete_savepoint(table: HoodieTable, instant_time: str) -> None:
    """Remove a savepoint; its files become eligible for cleaning again."""
    storage = table.storage
    validate_instant_time(instant_time)
    timeline = Timeline.load(storage)
    if instant_time not in savepoint_times(timeline):
        raise SavepointError(f"No savepoint at {instant_time} in {table.name} "
                             f"(savepoints: {', '.join(savepoint_times(timeline)) or 'none'})")
    savepoint = read_savepoint(storage, instant_time)
    storage.write_atomic(f"{DELETED_SAVEPOINTS_DIR}/{instant_time}", json.dumps(sorted(savepoint.files)).encode())
    transitions.delete_completed(storage, Instant(instant_time, Action.SAVEPOINT, State.COMPLETED))


# -- restore --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestorePlan:
    instant_time: str
    savepoint_time: str
    instants: tuple[Instant, ...]  # newest first


def _plan_rel(instant_time: str) -> str:
    return _rel(Instant(instant_time, Action.RESTORE, State.REQUESTED))


def load_restore_plan(storage: Storage, instant_time: str) -> RestorePlan:
    rel = _plan_rel(instant_time)
    d = deserialize(AvroModel.RESTORE_PLAN, storage.read_bytes(rel), source=storage.full_path(rel))
    instants = tuple(Instant(i["commitTime"], Action(i["action"]), State.COMPLETED) for i in d["instantsToRollback"])
    return RestorePlan(instant_time, d.get("savepointToRestoreTimestamp") or "", instants)


def rollback_to_savepoint(table: HoodieTable, instant_time: str) -> Instant:
    """Restore the table to a savepoint: every write after it is rolled back. Returns the restore instant."""
    from hoodpy.transaction.transaction import WriteTransaction

    storage = table.storage
    validate_instant_time(instant_time)
    finish_pending_restores(storage)
    with WriteTransaction(storage, table.config).locked():
        timeline = Timeline.load(storage)
        savepoints = savepoint_times(timeline)
        if instant_time not in savepoints:
            raise SavepointError(f"No savepoint at {instant_time} in {table.name} "
                                 f"(savepoints: {', '.join(savepoints) or 'none'})")
        later = [t for t in savepoints if t > instant_time]
        if later:
            raise SavepointError(f"Cannot restore to savepoint {instant_time}: later savepoints "
                                 f"{', '.join(later)} pin commits it would roll back; delete them first")
        targets = sorted((i for i in timeline.filter(actions=_WRITE_ACTIONS) if i.timestamp > instant_time),
                         key=lambda i: i.timestamp, reverse=True)
        restore_time = new_instant_time(after=timeline.latest_instant_time())
        body = {"instantsToRollback": [{"commitTime": i.timestamp, "action": i.action.value} for i in targets],
                "version": 2, "savepointToRestoreTimestamp": instant_time}
        transitions.create_requested(storage, restore_time, Action.RESTORE, serialize(AvroModel.RESTORE_PLAN, body))
        # Under optimistic concurrency no writer may commit while commits are being taken away.
        return execute_restore(storage, load_restore_plan(storage, restore_time))


def _rollback_one(storage: Storage, target: Instant, restore_time: str, files: list) -> dict:
    started = time.monotonic()
    storage.delete(_rel(target.with_state(State.COMPLETED)))  # hide it first: readers see the older state
    deleted: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for bf in files:
        if bf.instant_time != target.timestamp:
            continue
        storage.delete(bf.path)
        (failed if storage.exists(bf.path) else deleted).setdefault(bf.partition_path, []).append(
            storage.full_path(bf.path))
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(_rel(target.with_state(state)))
    storage.delete(heartbeat_path(target.timestamp))
    return {
        "startRollbackTime": restore_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [target.timestamp],
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": deleted.get(p, []), "failedDeleteFiles": failed.get(p, []),
                "rollbackLogFiles": None, "logFilesFromFailedCommit": None}
            for p in sorted(set(deleted) | set(failed))},
        "version": 1,
        "instantsRollback": [{"commitTime": target.timestamp, "action": target.action.value}],
    }


def execute_restore(storage: Storage, plan: RestorePlan) -> Instant:
    started = time.monotonic()
    requested = Instant(plan.instant_time, Action.RESTORE, State.REQUESTED)
    inflight = requested.with_state(State.INFLIGHT)
    if not storage.exists(_rel(inflight)):
        inflight = transitions.transition_to_inflight(storage, requested, storage.read_bytes(_rel(requested)))
    files = list_base_files(storage)
    per_instant = {}
    for target in plan.instants:  # newest first, as a chain of rollbacks would go
        per_instant[target.timestamp] = [_rollback_one(storage, target, plan.instant_time, files)]
    metadata = {
        "startRestoreTime": plan.instant_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [i.timestamp for i in plan.instants],
        "hoodieRestoreMetadata": per_instant,
        "version": 1,
        "restoreInstantInfo": [{"commitTime": i.timestamp, "action": i.action.value} for i in plan.instants],
    }
    return transitions.complete(storage, inflight, serialize(AvroModel.RESTORE_METADATA, metadata))


def finish_pending_restores(storage: Storage) -> list[Instant]:
    timeline = Timeline.load(storage)
    return [execute_restore(storage, load_restore_plan(storage, i.timestamp))
            for i in timeline.filter(actions=[Action.RESTORE]) if not i.is_completed]


def read_restore_metadata(storage: Storage, instant_time: str) -> dict:
    rel = _rel(Instant(instant_time, Action.RESTORE, State.COMPLETED))
    return deserialize(AvroModel.RESTORE_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))


class SavepointService:
    """``HoodieTable.savepoints``: create, list, delete and restore savepoints of one table."""

    def __init__(self, table: HoodieTable):
        self.table = table

    def create(self, instant_time: str | None = None, *, user: str = "", comment: str = "") -> Savepoint:
        """Savepoint a completed commit (default: the latest one)."""
        return create_savepoint(self.table, instant_time, user=user, comment=comment)

    def list(self) -> list[Savepoint]:
        """Savepoints, oldest first."""
        return list_savepoints(self.table.storage)

    def delete(self, instant_time: str) -> None:
        delete_savepoint(self.table, instant_time)

    def rollback_to(self, instant_time: str) -> Instant:
        """Restore the table to the savepoint (a ``restore`` instant); returns the restore instant."""
        return rollback_to_savepoint(self.table, instant_time)

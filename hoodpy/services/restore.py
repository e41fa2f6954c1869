"""Restore: bring the table back to a savepoint by rolling back every write after it (Hudi's restore).

``<r>.restore.requested`` holds Avro HoodieRestorePlan naming every write instant after the savepoint, newest
first; ``.restore.inflight`` follows, then each instant is rolled back in that order (its completed file
hidden first, its base files deleted, its pending files removed) and ``<r>.restore`` completes with
HoodieRestoreMetadata embedding one HoodieRollbackMetadata per instant. As in Hudi, the rollbacks a restore
performs get no rollback instants of their own. Every step is idempotent, so a restore interrupted by a crash
is finished by the next ``run`` (or ``finish_pending()``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hoodpy.errors import SavepointError
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.services.rollback import delete_files, rollback_metadata
from hoodpy.services.table_service import Options, TableService, instant_time_of_plan
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, Instant, State, new_instant_time, plan_instant_time, validate_instant_time
from hoodpy.transaction.heartbeat import heartbeat_path

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


@dataclass(frozen=True)
class RestorePlan:
    instant_time: str
    savepoint_time: str
    instants: tuple[Instant, ...]  # newest first


def _rel(instant: Instant) -> str:
    return instant.path


def _rollback_one(storage: Storage, target: Instant, restore_time: str, files: list[BaseFile]) -> dict:
    started = time.monotonic()
    storage.delete(_rel(target.with_state(State.COMPLETED)))  # hide it first: readers see the older state
    mine: dict[str, list[str]] = {}
    for bf in files:
        if bf.instant_time == target.timestamp:
            mine.setdefault(bf.partition_path, []).append(bf.path)
    deleted, failed = delete_files(storage, mine)
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(_rel(target.with_state(state)))
    storage.delete(heartbeat_path(target.timestamp))
    return rollback_metadata(restore_time, target, deleted, failed, int((time.monotonic() - started) * 1000))


class RestoreService(TableService[RestorePlan, Instant]):
    """Restores of one table to a savepoint; ``execute`` returns the completed restore instant.

    ``schedule`` and ``execute`` take no lock; ``run`` holds the table lock across both, so that under
    optimistic concurrency no writer commits while commits are being taken away.
    """

    action = Action.RESTORE
    run_holds_lock = True

    def schedule(self, options: Options = None, *, savepoint_time: str, instant_time: str | None = None,
                 ) -> RestorePlan:
        """Plan rolling back every write after the savepoint at ``savepoint_time``, and save the plan."""
        storage, name = self.storage, self.context.name
        timeline = self.context.timeline()
        savepoints = timeline.savepoint_times()
        if savepoint_time not in savepoints:
            raise SavepointError(f"No savepoint at {savepoint_time} in {name} "
                                 f"(savepoints: {', '.join(savepoints) or 'none'})")
        later = [t for t in savepoints if t > savepoint_time]
        if later:
            raise SavepointError(f"Cannot restore to savepoint {savepoint_time}: later savepoints "
                                 f"{', '.join(later)} pin commits it would roll back; delete them first")
        targets = sorted((i for i in timeline.filter(actions=_WRITE_ACTIONS) if i.timestamp > savepoint_time),
                         key=lambda i: i.timestamp, reverse=True)
        latest = timeline.latest_instant_time()
        restore_time = (new_instant_time(after=latest) if instant_time is None
                        else plan_instant_time(instant_time, latest, "Restore"))
        body = {"instantsToRollback": [{"commitTime": i.timestamp, "action": i.action.value} for i in targets],
                "version": 2, "savepointToRestoreTimestamp": savepoint_time}
        transitions.create_requested(storage, restore_time, Action.RESTORE, serialize(AvroModel.RESTORE_PLAN, body))
        return self.plan(restore_time)

    def plan(self, instant_time: str) -> RestorePlan:
        storage = self.storage
        rel = _rel(Instant(instant_time, Action.RESTORE, State.REQUESTED))
        d = deserialize(AvroModel.RESTORE_PLAN, storage.read_bytes(rel), source=storage.full_path(rel))
        instants = tuple(Instant(i["commitTime"], Action(i["action"]), State.COMPLETED)
                         for i in d["instantsToRollback"])
        return RestorePlan(instant_time, d.get("savepointToRestoreTimestamp") or "", instants)

    def execute(self, plan: RestorePlan | str, *, options: Options = None) -> Instant:
        storage = self.storage
        plan = self.plan(instant_time_of_plan(plan))  # as saved: a rerun after a crash does the same work
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
        return complete_instant(storage, inflight, serialize(AvroModel.RESTORE_METADATA, metadata),
                                self._context(options).config)

    def run(self, options: Options = None, *, savepoint_time: str) -> Instant:
        """Finish interrupted restores, then restore to the savepoint under the table lock."""
        validate_instant_time(savepoint_time)
        self.finish_pending(options)
        return super().run(options, savepoint_time=savepoint_time)


def read_restore_metadata(storage: Storage, instant_time: str) -> dict:
    rel = _rel(Instant(instant_time, Action.RESTORE, State.COMPLETED))
    return deserialize(AvroModel.RESTORE_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))

"""Rollback: undo a failed (pending) write, or the latest completed commit, recording a rollback instant.

Plan and execute are separate, as for every table service: the plan (Avro HoodieRollbackPlan listing the
files to delete) is saved as ``<r>.rollback.requested``; execution moves it to inflight, deletes the
files and the target's instant files, and completes ``<r>.rollback`` (Avro HoodieRollbackMetadata). A
crash at any step leaves a pending rollback that :func:`finish_pending_rollbacks` re-runs from its plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hoodpy.errors import RollbackError
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, Instant, State, new_instant_time
from hoodpy.timeline.timeline import METAFOLDER, Timeline, instant_temp_dir
from hoodpy.transaction.heartbeat import heartbeat_path


@dataclass(frozen=True)
class RollbackPlan:
    instant_time: str  # the rollback instant
    target: Instant  # the instant being rolled back
    files: dict[str, list[str]]  # partition path -> relative paths to delete


def _full(storage: Storage, rel: str) -> str:
    return storage.full_path(rel)


def _rel(storage: Storage, full: str) -> str:
    prefix = storage.root + "/"
    return full[len(prefix):] if full.startswith(prefix) else full


def plan_rollback(storage: Storage, timeline: Timeline, target: Instant) -> RollbackPlan:
    """Schedule the rollback of ``target`` (pending write, or the latest completed commit)."""
    if target.is_completed:
        latest = timeline.last_completed_commit()
        if latest is None or latest.timestamp != target.timestamp:
            raise RollbackError(
                f"Only the latest completed commit can be rolled back; {target.timestamp} is not "
                f"(latest: {latest.timestamp if latest else 'none'})")
        later = [i for i in timeline.instants if i.timestamp > target.timestamp and i.action.is_write]
        if later:
            raise RollbackError(f"Cannot roll back {target.timestamp}: later writes {[str(i) for i in later]} exist")
    files: dict[str, list[str]] = {}
    for bf in list_base_files(storage):
        if bf.instant_time == target.timestamp:
            files.setdefault(bf.partition_path, []).append(bf.path)
    plan = RollbackPlan(new_instant_time(after=timeline.latest_instant_time()), target, files)
    body = {
        "instantToRollback": {"commitTime": target.timestamp, "action": target.action.value},
        "RollbackRequests": [
            {"partitionPath": partition, "fileId": None, "latestBaseInstant": target.timestamp,
             "filesToBeDeleted": [_full(storage, p) for p in paths], "logBlocksToBeDeleted": None}
            for partition, paths in sorted(files.items())
        ],
        "version": 1,
    }
    transitions.create_requested(storage, plan.instant_time, Action.ROLLBACK,
                                 serialize(AvroModel.ROLLBACK_PLAN, body))
    return plan


def load_rollback_plan(storage: Storage, instant_time: str, timeline: Timeline) -> RollbackPlan:
    rel = f"{METAFOLDER}/{Instant(instant_time, Action.ROLLBACK, State.REQUESTED).file_name}"
    body = deserialize(AvroModel.ROLLBACK_PLAN, storage.read_bytes(rel), source=storage.full_path(rel))
    info = body["instantToRollback"]
    action = Action(info["action"])
    current = timeline.find(info["commitTime"], action)
    target = current or Instant(info["commitTime"], action, State.INFLIGHT)
    files: dict[str, list[str]] = {}
    for req in body.get("RollbackRequests") or []:
        files.setdefault(req["partitionPath"], []).extend(_rel(storage, f) for f in req["filesToBeDeleted"])
    return RollbackPlan(instant_time, target, files)


def execute_rollback(storage: Storage, plan: RollbackPlan) -> Instant:
    """Run a saved rollback plan; safe to re-run after a crash."""
    started = time.monotonic()
    requested = Instant(plan.instant_time, Action.ROLLBACK, State.REQUESTED)
    inflight = requested.with_state(State.INFLIGHT)
    if not storage.exists(f"{METAFOLDER}/{inflight.file_name}"):
        inflight = transitions.transition_to_inflight(storage, requested)
    target = plan.target
    completed = target.with_state(State.COMPLETED)
    # Hide a completed target first: from then on readers see the previous state, and a crash leaves a
    # pending instant that the next rollback attempt cleans up.
    storage.delete(f"{METAFOLDER}/{completed.file_name}")
    deleted: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for partition, paths in plan.files.items():
        for rel in paths:
            if storage.delete(rel) or not storage.exists(rel):
                deleted.setdefault(partition, []).append(_full(storage, rel))
            else:
                failed.setdefault(partition, []).append(_full(storage, rel))
    storage.delete_dir(instant_temp_dir(target.timestamp))
    transitions.delete_pending(storage, target.with_state(State.INFLIGHT))
    storage.delete(heartbeat_path(target.timestamp))
    metadata = {
        "startRollbackTime": plan.instant_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(v) for v in deleted.values()),
        "commitsRollback": [target.timestamp],
        "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": deleted.get(p, []), "failedDeleteFiles": failed.get(p, []),
                "rollbackLogFiles": None, "logFilesFromFailedCommit": None}
            for p in sorted(set(deleted) | set(failed))
        },
        "version": 1,
        "instantsRollback": [{"commitTime": target.timestamp, "action": target.action.value}],
    }
    return transitions.complete(storage, inflight, serialize(AvroModel.ROLLBACK_METADATA, metadata))


def rollback(storage: Storage, timeline: Timeline, target: Instant) -> Instant:
    return execute_rollback(storage, plan_rollback(storage, timeline, target))


def finish_pending_rollbacks(storage: Storage, timeline: Timeline) -> list[Instant]:
    """Complete rollbacks that a crash interrupted, from their saved plans."""
    done = []
    for instant in timeline.pending([Action.ROLLBACK]):
        done.append(execute_rollback(storage, load_rollback_plan(storage, instant.timestamp, timeline)))
    return done


def read_rollback_metadata(storage: Storage, instant: Instant) -> dict:
    rel = f"{METAFOLDER}/{instant.with_state(State.COMPLETED).file_name}"
    return deserialize(AvroModel.ROLLBACK_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))

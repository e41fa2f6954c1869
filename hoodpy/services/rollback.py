"""Rollback: undo a failed (pending) write, or the latest completed commit, recording a rollback instant.
An inflight compaction is rolled back to requested: its files go, its plan stays for the next attempt.

What a write leaves is deleted: its base files (their names carry its instant) and, in a merge-on-read table,
the log files it created (named by its markers while it is pending, by its write stats once completed). hoodpy
never appends to a log file, so each of those holds the write's blocks only, and deleting it is the whole
undo: no rollback command block is needed (Java, which may append, writes one instead; both read the same).

:class:`RollbackService` follows the table-service contract: ``schedule(target=...)`` saves the plan (Avro
HoodieRollbackPlan listing the files to delete) as ``<r>.rollback.requested``; ``execute`` moves it to
inflight, deletes the files and the target's instant files, and completes ``<r>.rollback`` (Avro
HoodieRollbackMetadata). A crash at any step leaves a pending rollback that ``finish_pending()`` re-runs
from its plan. Restore (``restore.py``) undoes instants the same way and records the same metadata per
instant, built by :func:`rollback_metadata`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hoodpy.config.concurrency import EAGER, LAZY
from hoodpy.config.properties import load_table_properties
from hoodpy.errors import RollbackError
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.file_group.markers import marked_files, marked_log_files, marker_folders
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.services.table_service import Options, ServiceContext, TableService, instant_time_of_plan
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.archived import ARCHIVE_FOLDER
from hoodpy.timeline.history import history_folder
from hoodpy.timeline.instant import Action, Instant, State, new_instant_time, plan_instant_time
from hoodpy.timeline.timeline import Timeline, instant_temp_dir
from hoodpy.transaction.conflict import pending_clustering_file_groups
from hoodpy.transaction.heartbeat import heartbeat_path, is_expired

if TYPE_CHECKING:
    from hoodpy.transaction.transaction import WriteTransaction


@dataclass(frozen=True)
class RollbackPlan:
    instant_time: str  # the rollback instant
    target: Instant  # the instant being rolled back
    files: dict[str, list[str]]  # partition path -> relative paths to delete


def _rel(storage: Storage, full: str) -> str:
    prefix = storage.root + "/"
    return full[len(prefix):] if full.startswith(prefix) else full


def delete_files(storage: Storage, files: Mapping[str, Iterable[str]],
                 ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Delete relative paths, per partition; returns (deleted, failed) full paths per partition. A file
    already gone counts as deleted: a rerun after a crash finds what the first attempt removed."""
    deleted: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    for partition, paths in files.items():
        for rel in paths:
            gone = storage.delete(rel) or not storage.exists(rel)
            (deleted if gone else failed).setdefault(partition, []).append(storage.full_path(rel))
    return deleted, failed


def rollback_metadata(rollback_time: str, target: Instant, deleted: Mapping[str, list[str]],
                      failed: Mapping[str, list[str]], time_taken_ms: int) -> dict:
    """HoodieRollbackMetadata of undoing ``target``: a rollback instant's, or one entry of a restore's."""
    return {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": time_taken_ms,
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


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class RollbackService(TableService[RollbackPlan, Instant]):
    """Rollbacks of one table; ``execute`` returns the completed rollback instant.

    ``schedule`` and ``execute`` take no lock: the writers' transaction calls them while it holds the lock
    (rolling back failed writes); ``run(target=...)`` takes it, for a rollback asked for on its own, so that
    no writer commits while a commit is taken away.
    """

    action = Action.ROLLBACK
    run_holds_lock = True
    supports_table_version_8 = True  # a write into a version 8/9 table rolls back failed writes first
    supports_merge_on_read = True  # the log files of a deltacommit go with it

    def schedule(self, options: Options = None, *, target: Instant, instant_time: str | None = None,
                 ) -> RollbackPlan:
        """Plan the rollback of ``target`` (a pending write, or the latest completed commit) and save it."""
        storage = self.storage
        timeline = self.context.timeline()
        if target.is_completed:
            latest = timeline.last_completed_commit()
            if latest is None or latest.timestamp != target.timestamp:
                raise RollbackError(
                    f"Only the latest completed commit can be rolled back; {target.timestamp} is not "
                    f"(latest: {latest.timestamp if latest else 'none'})")
            later = [i for i in timeline.instants if i.timestamp > target.timestamp and i.action.is_write]
            if later:
                raise RollbackError(f"Cannot roll back {target.timestamp}: later writes {[str(i) for i in later]} "
                                    "exist")
        files: dict[str, list[str]] = {}
        for bf in list_base_files(storage):
            if bf.instant_time == target.timestamp:
                files.setdefault(bf.partition_path, []).append(bf.path)
        for rel in _created_log_files(storage, timeline, target):
            files.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else "", []).append(rel)
        latest_time = timeline.latest_instant_time()
        rollback_time = (new_instant_time(after=latest_time) if instant_time is None
                         else plan_instant_time(instant_time, latest_time, "Rollback"))
        plan = RollbackPlan(rollback_time, target, files)
        body = {
            "instantToRollback": {"commitTime": target.timestamp, "action": target.action.value},
            "RollbackRequests": [
                {"partitionPath": partition, "fileId": None, "latestBaseInstant": target.timestamp,
                 "filesToBeDeleted": [storage.full_path(p) for p in paths], "logBlocksToBeDeleted": None}
                for partition, paths in sorted(files.items())
            ],
            "version": 1,
        }
        transitions.create_requested(storage, plan.instant_time, Action.ROLLBACK,
                                     serialize(AvroModel.ROLLBACK_PLAN, body))
        return plan

    def plan(self, instant_time: str) -> RollbackPlan:
        storage = self.storage
        timeline = self.context.timeline()
        rel = timeline.new_instant(instant_time, Action.ROLLBACK).path
        body = deserialize(AvroModel.ROLLBACK_PLAN, storage.read_bytes(rel), source=storage.full_path(rel))
        info = body["instantToRollback"]
        action = Action(info["action"])
        current = timeline.find(info["commitTime"], action)
        target = current or timeline.new_instant(info["commitTime"], action, State.INFLIGHT)
        files: dict[str, list[str]] = {}
        for req in body.get("RollbackRequests") or []:
            files.setdefault(req["partitionPath"], []).extend(_rel(storage, f) for f in req["filesToBeDeleted"])
        return RollbackPlan(instant_time, target, files)

    def execute(self, plan: RollbackPlan | str, *, options: Options = None) -> Instant:
        """Run a saved rollback plan; safe to re-run after a crash."""
        if isinstance(plan, str):
            plan = self.plan(instant_time_of_plan(plan))
        storage = self.storage
        started = time.monotonic()
        requested = self.context.timeline().new_instant(plan.instant_time, Action.ROLLBACK)
        inflight = requested.with_state(State.INFLIGHT)
        if not storage.exists(inflight.path):
            inflight = transitions.transition_to_inflight(storage, requested)
        target = plan.target
        completed = transitions.completed_file(storage, target)
        # Hide a completed target first: from then on readers see the previous state, and a crash leaves a
        # pending instant that the next rollback attempt cleans up.
        if completed is not None:
            storage.delete(completed.path)
        deleted, failed = delete_files(storage, plan.files)
        storage.delete_dir(instant_temp_dir(target.timestamp))
        if target.action == Action.COMPACTION:
            # A failed compaction attempt: its plan stays, to be executed again (Hudi's rollbackInflightCompaction).
            transitions.revert_to_requested(storage, target.with_state(State.INFLIGHT))
        else:
            transitions.delete_pending(storage, target.with_state(State.INFLIGHT))
        storage.delete(heartbeat_path(target.timestamp))
        metadata = rollback_metadata(plan.instant_time, target, deleted, failed, _elapsed_ms(started))
        return complete_instant(storage, inflight, serialize(AvroModel.ROLLBACK_METADATA, metadata),
                                self._context(options).config)



def _created_log_files(storage: Storage, timeline: Timeline, target: Instant) -> list[str]:
    """The log files ``target`` created (relative paths): those its markers name that exist, and for a completed
    deltacommit those its write stats name (for a completed commit, the CDC log files they name). A log file it appended to (Java on HDFS; logOffset > 0) would hold
    earlier blocks too: such a write is refused rather than half undone."""
    found = [rel for rel in marked_log_files(storage, target.timestamp) if storage.exists(rel)]
    if target.is_completed and target.action in (Action.COMMIT, Action.REPLACECOMMIT):
        # The CDC log files a copy-on-write commit wrote (its markers are gone once it completed).
        found += [rel for stat in timeline.commit_metadata(target).write_stats for rel in (stat.cdc_stats or {})
                  if storage.exists(rel)]
    if target.is_completed and target.action == Action.DELTACOMMIT:
        for stat in timeline.commit_metadata(target).write_stats:
            if not stat.is_log_write or not stat.path:
                continue
            if stat.log_offset > 0:
                raise RollbackError(f"Cannot roll back {target.timestamp}: it appended to the existing log file "
                                    f"{stat.path} (at byte {stat.log_offset}); hoodpy rolls back log files a write "
                                    "created")
            found.append(stat.path)
    return sorted(set(found))


def rollback_failed_writes(transaction: WriteTransaction, timeline: Timeline) -> Timeline:
    """What a write does before it starts (Hudi's rollbackFailedWrites): finish rollbacks a crash
    interrupted, then roll back failed writes per the failed-writes policy (EAGER: every pending write;
    LAZY: those whose heartbeat expired), all under the transaction's lock. Returns the timeline after."""
    rollbacks = RollbackService(ServiceContext(transaction.storage, transaction.config))
    with transaction.locked():
        for pending in timeline.pending([Action.ROLLBACK]):  # interrupted by a crash: finish from the plan
            rollbacks.execute(pending.timestamp)
        timeline = Timeline.load(transaction.storage)
        clustering = pending_clustering_file_groups(transaction.storage, timeline)
        for instant in timeline.pending_writes():
            if instant.timestamp in clustering:
                continue  # a scheduled table service, not a failed write
            if transaction.policy == EAGER or (
                    transaction.policy == LAZY and is_expired(transaction.storage, instant.timestamp,
                                                              transaction.heartbeat_ms, transaction.misses)):
                rollbacks.execute(rollbacks.schedule(target=instant))
        folders = marker_folders(transaction.storage)  # before the timeline: see remove_abandoned_files
        timeline = Timeline.load(transaction.storage)
        remove_abandoned_files(transaction.storage, folders, timeline)
        return timeline


def remove_abandoned_files(storage: Storage, folders: Iterable[str], timeline: Timeline) -> int:
    """Delete the files named by marker ``folders`` (instant times, listed before ``timeline`` was loaded) of
    instants the timeline holds in no state, and those folders: files a task of a failed job marked after the
    write was aborted (:func:`hoodpy.write.commit.abort`), invisible to readers. A write's instant exists
    before its first marker, so a write started since the listing is in the timeline. When instants were
    archived, only folders newer than the active timeline's first instant are taken (an older one may be a
    completed write's that a crash kept). Returns the files deleted."""
    known = {i.timestamp for i in timeline.instants}
    abandoned = [t for t in folders if t not in known]
    if abandoned and _has_archive(storage):
        earliest = timeline.earliest_instant_time()
        abandoned = [t for t in abandoned if earliest is not None and t > earliest]
    removed = 0
    for instant_time in abandoned:
        removed += sum(storage.delete(rel) for rel in marked_files(storage, instant_time))
        storage.delete_dir(instant_temp_dir(instant_time))
    return removed


def _has_archive(storage: Storage) -> bool:
    """Whether completed instants were archived (layout 1's archive or layout 2's history holds a file)."""
    if storage.list_files(ARCHIVE_FOLDER):
        return True
    return bool(storage.list_files(history_folder(load_table_properties(storage))))


def read_rollback_metadata(storage: Storage, instant: Instant) -> dict:
    completed = transitions.completed_file(storage, instant)
    rel = (completed or instant.with_state(State.COMPLETED)).path
    return deserialize(AvroModel.ROLLBACK_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))

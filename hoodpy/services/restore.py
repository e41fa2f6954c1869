"""Restore: bring the table back to a savepoint by rolling back every write after it (Hudi's restore).

``<r>.restore.requested`` holds Avro HoodieRestorePlan naming every write instant after the savepoint, newest
first; ``.restore.inflight`` follows, then each instant is rolled back in that order (its completed file
hidden first, its base files deleted, its pending files removed; on merge-on-read tables its log files deleted
or rolled back with a rollback command block, see :mod:`hoodpy.services.restore_logs`; a compaction commit's
compaction files and plan copy go too) and ``<r>.restore`` completes with
HoodieRestoreMetadata embedding one HoodieRollbackMetadata per instant. As in Hudi, the rollbacks a restore
performs get no rollback instants of their own. Every step is idempotent, so a restore interrupted by a crash
is finished by the next ``run`` (or ``finish_pending()``).

In table versions 8 and 9 (timeline layout 2) "after the savepoint" is by completion time, as Hudi 1.x's
RestorePlanActionExecutor has it: pending clusterings that started after the savepoint first (named by their
pending action, ``clustering``), then the writes that completed after the savepointed commit did, newest
completion first, and pending writes that started after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import MERGE_ON_READ, TableConfig
from hoodpy.errors import SavepointError, UnsupportedServiceError
from hoodpy.file_group.file_group import BaseFile, LogFile
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.services.restore_logs import LogRollback, plan_log_rollback, write_rollback_block
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.services.rollback import delete_files, rollback_metadata
from hoodpy.services.table_service import Options, TableService, instant_time_of_plan
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.compaction_plan import AUX_FOLDER
from hoodpy.timeline.instant import (
    CLUSTERING, LAYOUT_2, Action, Instant, State, new_instant_time, plan_instant_time, validate_instant_time,
)
from hoodpy.timeline.timeline import Timeline, read_layout
from hoodpy.transaction.heartbeat import heartbeat_path

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


@dataclass(frozen=True)
class RestorePlan:
    instant_time: str
    savepoint_time: str
    instants: tuple[Instant, ...]  # newest first


def _rel(instant: Instant) -> str:
    return instant.path


def _rollback_one(storage: Storage, target: Instant, restore_time: str, base_files: list[BaseFile],
                  logs: LogRollback) -> dict:
    started = time.monotonic()
    completed = transitions.completed_file(storage, target)
    if completed is not None:
        storage.delete(_rel(completed))  # hide it first: readers see the older state
    mine: dict[str, list[str]] = {}
    for bf in base_files:
        if bf.instant_time == target.timestamp:
            mine.setdefault(bf.partition_path, []).append(bf.path)
    for lf in logs.deletes.get(target.timestamp, []):
        mine.setdefault(lf.partition_path, []).append(lf.path)
    deleted, failed = delete_files(storage, mine)
    blocks: dict[str, dict[str, int]] = {}
    for sid in logs.rollback_blocks.get(target.timestamp, []):
        rel, size = write_rollback_block(storage, logs, sid, restore_time, target.timestamp)
        blocks.setdefault(sid[0], {})[storage.full_path(rel)] = size
    # A layout-2 replacecommit's pending files are named clustering when it is one: remove either name; a
    # commit may be a completed compaction, whose pending files (and plan copy in .aux) are compaction ones.
    names = {target, replace(target, clustering=True)} if target.layout == LAYOUT_2 else {target}
    if target.action in (Action.COMMIT, Action.COMPACTION):
        names.add(replace(target, action=Action.COMPACTION))
        storage.delete(f"{AUX_FOLDER}/{target.timestamp}.compaction.requested")
    for state in (State.INFLIGHT, State.REQUESTED):
        for named in names:
            storage.delete(_rel(named.with_state(state)))
    storage.delete(heartbeat_path(target.timestamp))
    metadata = rollback_metadata(restore_time, target, deleted, failed, int((time.monotonic() - started) * 1000))
    for partition, files in blocks.items():  # Java records the log files it appended rollback blocks to
        entry = metadata["partitionMetadata"].setdefault(partition, {
            "partitionPath": partition, "successDeleteFiles": [], "failedDeleteFiles": [],
            "rollbackLogFiles": None, "logFilesFromFailedCommit": None})
        entry["rollbackLogFiles"] = files
    return metadata


def _action_name(instant: Instant) -> str:
    """The action a restore plan records: a pending layout-2 clustering's is ``clustering``."""
    return CLUSTERING if instant.clustering and not instant.is_completed else instant.action.value


def _targets(timeline: Timeline, savepoint_time: str) -> list[Instant]:
    """The writes a restore to ``savepoint_time`` rolls back, in the order it rolls them back."""
    writes = timeline.filter(actions=_WRITE_ACTIONS)
    if timeline.layout != LAYOUT_2:
        return sorted((i for i in writes if i.timestamp > savepoint_time), key=lambda i: i.timestamp, reverse=True)
    clusterings = sorted((i for i in writes if i.clustering and not i.is_completed and i.timestamp > savepoint_time),
                         key=lambda i: i.timestamp, reverse=True)
    saved_at = timeline.completion_time(savepoint_time) or savepoint_time
    pending = sorted((i for i in writes if not i.is_completed and i.timestamp > savepoint_time
                      and i not in clusterings), key=lambda i: i.timestamp, reverse=True)
    done = sorted((i for i in writes if i.is_completed and i.completed_at > saved_at),
                  key=lambda i: i.completed_at, reverse=True)
    return clusterings + pending + done


class RestoreService(TableService[RestorePlan, Instant]):
    """Restores of one table to a savepoint; ``execute`` returns the completed restore instant.

    ``schedule`` and ``execute`` take no lock; ``run`` holds the table lock across both, so that under
    optimistic concurrency no writer commits while commits are being taken away.
    """

    action = Action.RESTORE
    run_holds_lock = True
    supports_table_version_8 = True
    supports_merge_on_read = True  # log files: see restore_logs

    def schedule(self, options: Options = None, *, savepoint_time: str, instant_time: str | None = None,
                 ) -> RestorePlan:
        """Plan rolling back every write after the savepoint at ``savepoint_time``, and save the plan."""
        storage, name = self.storage, self.context.name
        timeline = self.context.timeline()
        props = load_table_properties(storage) or {}
        if timeline.layout == LAYOUT_2 and props.get(TableConfig.TYPE.key) == MERGE_ON_READ:
            # Log files there are named after the deltacommit that wrote them: restore_logs reads version 6's.
            raise UnsupportedServiceError(storage.base_uri, "Restoring a merge-on-read table",
                                          props.get(TableConfig.VERSION.key, "?"), "table version 6")
        savepoints = timeline.savepoint_times()
        if savepoint_time not in savepoints:
            raise SavepointError(f"No savepoint at {savepoint_time} in {name} "
                                 f"(savepoints: {', '.join(savepoints) or 'none'})")
        later = [t for t in savepoints if t > savepoint_time]
        if later:
            raise SavepointError(f"Cannot restore to savepoint {savepoint_time}: later savepoints "
                                 f"{', '.join(later)} pin commits it would roll back; delete them first")
        targets = _targets(timeline, savepoint_time)
        latest = timeline.latest_instant_time()
        restore_time = (new_instant_time(after=latest) if instant_time is None
                        else plan_instant_time(instant_time, latest, "Restore"))
        body = {"instantsToRollback": [{"commitTime": i.timestamp, "action": _action_name(i)} for i in targets],
                "version": 2, "savepointToRestoreTimestamp": savepoint_time}
        transitions.create_requested(storage, restore_time, Action.RESTORE, serialize(AvroModel.RESTORE_PLAN, body),
                                     layout=timeline.layout)
        return self.plan(restore_time)

    def plan(self, instant_time: str) -> RestorePlan:
        storage = self.storage
        timeline = self.context.timeline()
        rel = _rel(timeline.new_instant(instant_time, Action.RESTORE, State.REQUESTED))
        d = deserialize(AvroModel.RESTORE_PLAN, storage.read_bytes(rel), source=storage.full_path(rel))
        instants = []
        for info in d["instantsToRollback"]:
            clustering = info["action"] == CLUSTERING
            action = Action.REPLACECOMMIT if clustering else Action(info["action"])
            instants.append(Instant(info["commitTime"], action, State.COMPLETED, layout=timeline.layout,
                                    clustering=clustering))
        return RestorePlan(instant_time, d.get("savepointToRestoreTimestamp") or "", tuple(instants))

    def execute(self, plan: RestorePlan | str, *, options: Options = None) -> Instant:
        storage = self.storage
        plan = self.plan(instant_time_of_plan(plan))  # as saved: a rerun after a crash does the same work
        started = time.monotonic()
        requested = self.context.timeline().new_instant(plan.instant_time, Action.RESTORE, State.REQUESTED)
        inflight = requested.with_state(State.INFLIGHT)
        if not storage.exists(_rel(inflight)):
            inflight = transitions.transition_to_inflight(storage, requested, storage.read_bytes(_rel(requested)))
        files = list_group_files(storage)
        base_files = [f for f in files if isinstance(f, BaseFile)]
        logs = plan_log_rollback(storage, [f for f in files if isinstance(f, LogFile)],
                                 {i.timestamp for i in plan.instants})
        per_instant = {}
        for target in plan.instants:  # newest first, as a chain of rollbacks would go
            per_instant[target.timestamp] = [_rollback_one(storage, target, plan.instant_time, base_files, logs)]
        metadata = {
            "startRestoreTime": plan.instant_time,
            "timeTakenInMillis": int((time.monotonic() - started) * 1000),
            "instantsToRollback": [i.timestamp for i in plan.instants],
            "hoodieRestoreMetadata": per_instant,
            "version": 1,
            "restoreInstantInfo": [{"commitTime": i.timestamp, "action": _action_name(i)} for i in plan.instants],
        }
        return complete_instant(storage, inflight, serialize(AvroModel.RESTORE_METADATA, metadata),
                                self._context(options).config)

    def run(self, options: Options = None, *, savepoint_time: str) -> Instant:
        """Finish interrupted restores, then restore to the savepoint under the table lock."""
        validate_instant_time(savepoint_time)
        self.finish_pending(options)
        return super().run(options, savepoint_time=savepoint_time)


def read_restore_metadata(storage: Storage, instant_time: str) -> dict:
    pending = Instant(instant_time, Action.RESTORE, State.INFLIGHT, layout=read_layout(storage))
    rel = _rel(transitions.completed_file(storage, pending) or pending.with_state(State.COMPLETED))
    return deserialize(AvroModel.RESTORE_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))

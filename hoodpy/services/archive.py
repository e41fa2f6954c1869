"""Archival: move old completed instants off the active timeline into ``.hoodie/archived`` (Hudi 0.14's
HoodieTimelineArchiver), and read them back.

Which instants (``hoodie.keep.max.commits`` / ``hoodie.keep.min.commits``):

* completed commits, deltacommits and replacecommits once there are more than ``max``: the oldest, down to
  ``min``, but never at or after the oldest pending instant, the first savepoint, or the last clean's
  earliest commit to retain (so no file a retained query reads loses its commit), and never a replacecommit
  whose replaced file groups still have files (the groups would come back to life without it);
* completed cleans and rollbacks, per action, once there are more than ``max``: the oldest, down to ``min``.

Each instant's state files (requested, inflight, completed) become HoodieArchivedMetaEntry records, written
in Avro data blocks of ``hoodie.commits.archival.batch`` records into a new log file
``.commits_.archive.<n>_1-0-1`` (the file is complete before any instant is removed); then the instant files
are deleted. The active-timeline loader lists ``.hoodie/`` only, so it never sees the archive
(:mod:`hoodpy.timeline.archived` reads it back).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hoodpy.config import HoodieConfig
from hoodpy.config.clean import ArchivalConfig
from hoodpy.errors import PlanNotFoundError
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.services.table_service import Options, ServiceContext, TableService
from hoodpy.storage import Storage
from hoodpy.timeline import log_format, transitions
from hoodpy.timeline.archived import ARCHIVE_FOLDER
from hoodpy.timeline.avro_models import AvroModel, deserialize, encode_record, schema_json
from hoodpy.timeline.instant import LAYOUT_1, Action, Instant, State, format_instant_millis
from hoodpy.timeline.timeline import METAFOLDER, Timeline, read_layout

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

_log = logging.getLogger(__name__)
_AVRO_STAT_FIELDS = ("fileId", "path", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes",
                     "totalWriteErrors", "partitionPath", "totalLogRecords", "totalUpdatedRecordsCompacted",
                     "numInserts", "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes")


@dataclass
class ArchiveResult:
    archived: list[Instant] = field(default_factory=list)  # completed instants moved off the active timeline
    archive_file: str | None = None
    entries: int = 0


# -- which instants --------------------------------------------------------------------------------------
def _replaced_groups_still_on_storage(storage: Storage, timeline: Timeline, instant: Instant) -> bool:
    replaced = timeline.commit_metadata(instant).replaced_file_ids()
    if not replaced:
        return False
    present = {(bf.partition_path, bf.file_id) for bf in list_base_files(storage, {p for p, _ in replaced})}
    return bool(replaced & present)


def instants_to_archive(storage: Storage, timeline: Timeline, config: HoodieConfig) -> list[Instant]:
    from hoodpy.services.clean.service import last_completed_clean_earliest
    
    ArchivalConfig.validate(config)
    low, high = config.get(ArchivalConfig.MIN_COMMITS), config.get(ArchivalConfig.MAX_COMMITS)
    out: list[Instant] = []
    for action in (Action.CLEAN, Action.ROLLBACK):
        done = timeline.filter(actions=[action], states=[State.COMPLETED])
        if len(done) > high:
            out += done[: len(done) - low]
    commits = timeline.completed_commits()
    if len(commits) > high:
        bounds = [i.timestamp for i in timeline.instants if not i.is_completed][:1]
        bounds += timeline.savepoint_times()[:1]
        earliest = last_completed_clean_earliest(storage, timeline)
        if earliest:
            bounds.append(earliest)
        limit = min(bounds) if bounds else None
        for c in commits[: len(commits) - low]:
            if limit is not None and c.timestamp >= limit:
                break
            if c.action == Action.REPLACECOMMIT and _replaced_groups_still_on_storage(storage, timeline, c):
                break
            out.append(c)
    return sorted(out, key=lambda i: (i.timestamp, i.action.value))


# -- HoodieArchivedMetaEntry -------------------------------------------------------------------------------
def _avro_commit_metadata(data: bytes, *, replace: bool) -> dict[str, Any] | None:
    try:
        d = json.loads(data.decode("utf-8")) if data.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(d, dict):
        return None
    stats = {p: [{k: s.get(k) for k in _AVRO_STAT_FIELDS} for s in lst or []]
             for p, lst in (d.get("partitionToWriteStats") or {}).items() if p is not None}
    out = {"partitionToWriteStats": stats,
           "extraMetadata": {k: str(v) for k, v in (d.get("extraMetadata") or {}).items() if v is not None},
           "version": 1, "operationType": d.get("operationType")}
    if replace:
        out["partitionToReplaceFileIds"] = dict(d.get("partitionToReplaceFileIds") or {})
    return out


def meta_entry(storage: Storage, instant: Instant, mtime_ns: int | None) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry of one instant state file (Hudi's MetadataConversionUtils)."""
    data = storage.read_bytes(instant.path)
    entry: dict[str, Any] = {"commitTime": instant.timestamp, "actionType": instant.action.value,
                             "actionState": instant.state.value, "version": 1,
                             "stateTransitionTime": format_instant_millis(mtime_ns)}
    a, done = instant.action, instant.is_completed
    if a in (Action.COMMIT, Action.DELTACOMMIT):
        entry["hoodieCommitMetadata"] = _avro_commit_metadata(data, replace=False)
    elif a == Action.REPLACECOMMIT:
        if done:
            entry["hoodieReplaceCommitMetadata"] = _avro_commit_metadata(data, replace=True)
        elif instant.is_inflight:
            entry["HoodieInflightReplaceMetadata"] = _avro_commit_metadata(data, replace=False)
        elif data:
            entry["hoodieRequestedReplaceMetadata"] = deserialize(AvroModel.REQUESTED_REPLACE_METADATA, data)
    elif a == Action.CLEAN and data:
        key, model = (("hoodieCleanMetadata", AvroModel.CLEAN_METADATA) if done
                      else ("hoodieCleanerPlan", AvroModel.CLEANER_PLAN))
        entry[key] = deserialize(model, data)
    elif a == Action.ROLLBACK and done and data:
        entry["hoodieRollbackMetadata"] = deserialize(AvroModel.ROLLBACK_METADATA, data)
    elif a == Action.SAVEPOINT and done and data:
        entry["hoodieSavePointMetadata"] = deserialize(AvroModel.SAVEPOINT_METADATA, data)
    return entry


# -- writing and reading the archive ------------------------------------------------------------------------
def _next_archive_version(storage: Storage) -> int:
    versions = [log_format.archive_file_version(f.path.rsplit("/", 1)[-1]) for f in storage.list_files(ARCHIVE_FOLDER)]
    return max([v for v in versions if v is not None], default=0) + 1


@dataclass(frozen=True)
class ArchivePlan:
    """The completed instants one archival moves off the active timeline. Hudi records no archival instant,
    so the plan is never persisted: ``instant_time`` is None."""

    instants: tuple[Instant, ...]
    instant_time: str | None = None


class ArchiveService(TableService[ArchivePlan, ArchiveResult]):
    """Archival of one table (``HoodieTable.archive``), on the table-service contract.

    There is no archival instant: ``schedule`` only selects and ``execute`` takes the plan itself. ``run``
    holds the table lock across both, so the selection cannot go stale (a new savepoint, a pending write)
    before its instants are archived; ``schedule`` / ``execute`` alone expect the caller to hold it.
    """

    action = None  # archival has no instant of its own
    run_holds_lock = True

    def schedule(self, options: Options = None, *, instant_time: str | None = None) -> ArchivePlan | None:
        """The instants :func:`instants_to_archive` selects now; None when nothing qualifies."""
        context = self._context(options)
        chosen = instants_to_archive(context.storage, context.timeline(), context.config)
        return ArchivePlan(tuple(chosen)) if chosen else None

    def execute(self, plan: ArchivePlan | str, *, options: Options = None) -> ArchiveResult:
        """Write the plan's instants into a new archive file, then remove them from the active timeline."""
        if isinstance(plan, str):
            raise PlanNotFoundError(f"Archival has no saved plans (no instant {plan}): pass the ArchivePlan")
        context = self._context(options)
        storage, config = context.storage, context.config
        chosen = list(plan.instants)
        mtimes = {f.path.rsplit("/", 1)[-1]: f.mtime_ns for f in storage.list_files(METAFOLDER)}
        entries = []
        for instant in chosen:
            for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
                s = instant.with_state(state)
                if s.file_name in mtimes:
                    entries.append(encode_record(AvroModel.ARCHIVED_META_ENTRY,
                                                 meta_entry(storage, s, mtimes[s.file_name])))
        batch = config.get(ArchivalConfig.BATCH)
        schema = schema_json(AvroModel.ARCHIVED_META_ENTRY)
        data = b"".join(log_format.avro_data_block(entries[i:i + batch], schema)
                        for i in range(0, len(entries), batch))
        name = log_format.archive_file_name(_next_archive_version(storage))
        storage.write_atomic(f"{ARCHIVE_FOLDER}/{name}", data)
        for instant in chosen:
            transitions.delete_archived(storage, instant)
        return ArchiveResult(archived=chosen, archive_file=f"{ARCHIVE_FOLDER}/{name}", entries=len(entries))

    def run(self, options: Options = None) -> ArchiveResult:
        """Archive what qualifies now, under the table lock (an empty result when nothing does)."""
        return super().run(options) or ArchiveResult()

    def plan(self, instant_time: str) -> ArchivePlan:
        raise PlanNotFoundError(f"Archival has no saved plans (no instant {instant_time})")

    def pending_instant_times(self) -> list[str]:
        return []  # archival leaves nothing pending: the archive file is complete before any instant goes


def archive_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None) -> ArchiveResult | None:
    """``hoodie.archive.automatic``: archive after each commit (cheap when nothing qualifies)."""
    context = ServiceContext.of(table, options)
    config = context.config
    if not config.get(ArchivalConfig.AUTOMATIC):
        return None
    if read_layout(context.storage) != LAYOUT_1:
        # Tables of version 8 and 9 archive into the LSM timeline, which hoodpy does not write: their
        # active timeline keeps growing (readers are unaffected) until a Java Hudi archives it.
        _log.info("Automatic archival skipped on %s: table version 8/9 (timeline layout 2)", context.name)
        return None
    service = ArchiveService(context)
    timeline = service.context.timeline()
    high = config.get(ArchivalConfig.MAX_COMMITS)
    counts = [len(timeline.completed_commits())] + [
        len(timeline.filter(actions=[a], states=[State.COMPLETED])) for a in (Action.CLEAN, Action.ROLLBACK)]
    if max(counts) <= high:
        return None
    return service.run()

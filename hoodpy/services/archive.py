"""Archival: move old completed instants off the active timeline into ``.hoodie/archived`` (Hudi 0.14's
HoodieTimelineArchiver), and read them back.

Which instants (``hoodie.keep.max.commits`` / ``hoodie.keep.min.commits``):

* completed commits, deltacommits and replacecommits once there are more than ``max``: the oldest, down to
  ``min``, but never at or after the oldest pending instant, the first savepoint, or the last clean's
  earliest commit to retain (so no file a retained query reads loses its commit), and never a replacecommit
  whose replaced file groups still have files (the groups would come back to life without it);
* completed cleans and rollbacks, per action, once there are more than ``max``: the oldest, down to ``min``;
* merge-on-read (table version 6): a pending compaction bounds the commits like any pending instant, and
  with the NUM_COMMITS / NUM_AND_TIME compaction trigger the deltacommits the trigger counts stay (Java's
  CompactionUtils.getOldestInstantToRetainForCompaction). A compaction is archived with the commit it completed
  as: its requested entry holds the plan (actionType ``compaction``), its inflight entry nothing, and the
  plan's copy in ``.hoodie/.aux`` is removed (Java removes aux instants at or before the newest archived
  commit or deltacommit).

Each instant's state files (requested, inflight, completed) become HoodieArchivedMetaEntry records, written
in Avro data blocks of ``hoodie.commits.archival.batch`` records into a new log file
``.commits_.archive.<n>_1-0-1`` (the file is complete before any instant is removed); then the instant files
are deleted. The active-timeline loader lists ``.hoodie/`` only, so it never sees the archive
(:mod:`hoodpy.timeline.archived` reads it back).

Table versions 8 and 9 archive as Hudi 1.x's TimelineArchiverV2 does: the commits as above (but never at or
after the newest completed commit before the oldest pending write), then every completed clean and rollback
older than the newest archived commit; each instant becomes one row of a new layer-0 file of the LSM history
(:mod:`hoodpy.timeline.history`: its completion time, the completed file's bytes, the plan's bytes), the
history is compacted and cleaned, and the instant files are deleted (pending states first, then completed ones
oldest first). hoodpy also keeps the last clean's earliest retained commit, as for version 6, so that
time-travel retention checks keep the clean they need.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any


from hoodpy.config import HoodieConfig
from hoodpy.config.clean import ArchivalConfig
from hoodpy.config.compaction import NUM_AND_TIME, NUM_COMMITS, CompactionConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.config.storage import StorageConfig
from hoodpy.config.table import MERGE_ON_READ, TableConfig
from hoodpy.errors import PlanNotFoundError
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.services.compaction.trigger import oldest_instant_to_retain_for_compaction
from hoodpy.metadata_table.reader import before_latest_compaction
from hoodpy.services.table_service import Options, ServiceContext, TableService
from hoodpy.storage import Storage
from hoodpy.timeline import log_format, transitions
from hoodpy.timeline.archived import ARCHIVE_FOLDER
from hoodpy.timeline.avro_models import AvroModel, deserialize, encode_record, schema_json
from hoodpy.timeline.compaction_plan import AUX_FOLDER
from hoodpy.timeline.history import HistoryInstant, HistoryWriter, history_folder
from hoodpy.timeline.instant import (
    LAYOUT_2, Action, Instant, State, format_instant_millis, parse_instant_file_name, timeline_folder,
)
from hoodpy.timeline.timeline import METAFOLDER, Timeline, instant_temp_dir, layout_of

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

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
    # Base files or, on merge-on-read tables, log files (a group may be log files only).
    present = {(f.partition_path, f.file_id) for f in list_group_files(storage, {p for p, _ in replaced})}
    return bool(replaced & present)


_PENDING_WRITES = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


def _commits_to_archive(storage: Storage, timeline: Timeline, low: int, bounds: list[str]) -> list[Instant]:
    """The oldest completed commits down to ``low``, stopping at the first savepoint, the last clean's
    earliest retained commit, the first of ``bounds`` and a replacecommit whose replaced groups still have
    files."""
    from hoodpy.services.clean.service import last_completed_clean_earliest

    commits = timeline.completed_commits()
    bounds = bounds + timeline.savepoint_times()[:1]
    earliest = last_completed_clean_earliest(storage, timeline)
    if earliest:
        bounds.append(earliest)
    limit = min(bounds) if bounds else None
    out = []
    for c in commits[: len(commits) - low]:
        if limit is not None and c.timestamp >= limit:
            break
        if c.action == Action.REPLACECOMMIT and _replaced_groups_still_on_storage(storage, timeline, c):
            break
        out.append(c)
    return out


def instants_to_archive(storage: Storage, timeline: Timeline, config: HoodieConfig,
                        bounds: Iterable[str] = ()) -> list[Instant]:
    """The instants to archive now (see the module docstring); no commit at or after any of ``bounds``."""
    ArchivalConfig.validate(config)
    bounds = list(bounds)
    low, high = config.get(ArchivalConfig.MIN_COMMITS), config.get(ArchivalConfig.MAX_COMMITS)
    commits = timeline.completed_commits()
    if timeline.layout == LAYOUT_2:
        if len(commits) <= high:
            return []
        # Hudi 1.x keeps the newest completed commit before the oldest pending write (or that write).
        pending = timeline.pending(_PENDING_WRITES)[:1]
        before = [c.timestamp for c in commits if pending and c.timestamp < pending[0].timestamp]
        out = _commits_to_archive(storage, timeline, low, (before[-1:] or [p.timestamp for p in pending]) + bounds)
        if out:  # cleans and rollbacks go with the commits they are older than
            out += [i for i in timeline.filter(actions=[Action.CLEAN, Action.ROLLBACK], states=[State.COMPLETED])
                    if i.timestamp < out[-1].timestamp]
        return sorted(out, key=lambda i: (i.timestamp, i.action.value))
    out: list[Instant] = []
    for action in (Action.CLEAN, Action.ROLLBACK):
        done = timeline.filter(actions=[action], states=[State.COMPLETED])
        if len(done) > high:
            out += done[: len(done) - low]
    if len(commits) > high:
        # The oldest pending instant bounds it (a pending compaction too: its plan names the slices it reads).
        bounds += [i.timestamp for i in timeline.instants if not i.is_completed][:1]
        out += _commits_to_archive(storage, timeline, low, bounds + _merge_on_read_bounds(storage, timeline, config))
    return sorted(out, key=lambda i: (i.timestamp, i.action.value))


def _merge_on_read_bounds(storage: Storage, timeline: Timeline, config: HoodieConfig) -> list[str]:
    """Merge-on-read with the NUM_COMMITS or NUM_AND_TIME compaction trigger: keep the deltacommits the
    trigger counts (Java's HoodieTimelineArchiver, table version 6)."""
    props = load_table_properties(storage) or {}
    if props.get(TableConfig.TYPE.key) != MERGE_ON_READ or \
            config.get(CompactionConfig.INLINE_TRIGGER_STRATEGY) not in (NUM_COMMITS, NUM_AND_TIME):
        return []
    oldest = oldest_instant_to_retain_for_compaction(timeline, config.get(CompactionConfig.INLINE_MAX_DELTA_COMMITS))
    return [oldest] if oldest else []


# -- HoodieArchivedMetaEntry -------------------------------------------------------------------------------
def archived_commit_metadata(data: bytes, *, replace: bool) -> dict[str, Any] | None:
    """JSON commit metadata as the archived entry's HoodieCommitMetadata (or replace) record; None when
    ``data`` is empty or not a JSON object."""
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
        entry["hoodieCommitMetadata"] = archived_commit_metadata(data, replace=False)
    elif a == Action.REPLACECOMMIT:
        if done:
            entry["hoodieReplaceCommitMetadata"] = archived_commit_metadata(data, replace=True)
        elif instant.is_inflight:
            entry["HoodieInflightReplaceMetadata"] = archived_commit_metadata(data, replace=False)
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
    elif a == Action.COMPACTION and instant.is_requested and data:
        entry["hoodieCompactionPlan"] = deserialize(AvroModel.COMPACTION_PLAN, data)
    return entry


# -- writing and reading the archive ------------------------------------------------------------------------
def _state_forms(instant: Instant) -> list[Instant]:
    """The state files one archived instant may have, oldest state first: a commit also has the requested
    and inflight files of the compaction it completed (Java groups them by its comparable action)."""
    forms = [instant.with_state(State.REQUESTED), instant.with_state(State.INFLIGHT)]
    if instant.action == Action.COMMIT:
        compaction = Instant(instant.timestamp, Action.COMPACTION, State.REQUESTED)
        forms = [compaction, compaction.with_state(State.INFLIGHT), *forms]
    return [*forms, instant.with_state(State.COMPLETED)]


def _delete_archived_aux_plans(storage: Storage, archived: list[Instant]) -> None:
    """Java 0.14 also removes the instants in ``.hoodie/.aux`` (the compaction plans' copies) at or before the
    newest archived commit or deltacommit."""
    newest = max((i.timestamp for i in archived if i.action in (Action.COMMIT, Action.DELTACOMMIT)), default=None)
    if newest is None:
        return
    for f in storage.list_files(AUX_FOLDER):
        parsed = parse_instant_file_name(f.path.rsplit("/", 1)[-1])
        if parsed is not None and parsed.timestamp <= newest:
            storage.delete(f.path)


def _next_archive_version(storage: Storage) -> int:
    versions = [log_format.archive_file_version(f.path.rsplit("/", 1)[-1]) for f in storage.list_files(ARCHIVE_FOLDER)]
    return max([v for v in versions if v is not None], default=0) + 1


def write_archive_file(storage: Storage, entries: list[bytes], batch: int) -> str:
    """A new archive log file of ``entries`` (encoded HoodieArchivedMetaEntry records), ``batch`` records
    per Avro data block; returns its path. The file is written whole (atomically) before anything refers to
    it."""
    schema = schema_json(AvroModel.ARCHIVED_META_ENTRY)
    data = b"".join(log_format.avro_data_block(entries[i:i + batch], schema) for i in range(0, len(entries), batch))
    rel = f"{ARCHIVE_FOLDER}/{log_format.archive_file_name(_next_archive_version(storage))}"
    storage.write_atomic(rel, data)
    return rel


def archive_instants(storage: Storage, config: HoodieConfig, chosen: list[Instant]) -> ArchiveResult:
    """Move ``chosen`` (completed instants) off the active timeline of the table at ``storage``: into a new
    archive file (version 6) or the LSM history (versions 8 and 9)."""
    props = load_table_properties(storage)
    if layout_of(props) == LAYOUT_2:
        return _archive_into_history(storage, config, history_folder(props), chosen)
    mtimes = {f.path.rsplit("/", 1)[-1]: f.mtime_ns for f in storage.list_files(METAFOLDER)}
    entries = []
    for instant in chosen:
        for s in _state_forms(instant):
            if s.file_name in mtimes:
                entries.append(encode_record(AvroModel.ARCHIVED_META_ENTRY,
                                             meta_entry(storage, s, mtimes[s.file_name])))
    rel = write_archive_file(storage, entries, config.get(ArchivalConfig.BATCH))
    for instant in chosen:
        transitions.delete_archived(storage, instant)
    _delete_archived_aux_plans(storage, chosen)
    return ArchiveResult(archived=chosen, archive_file=rel, entries=len(entries))


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
    supports_table_version_8 = True  # into the LSM history
    supports_merge_on_read = True  # deltacommits and compactions, bounded as Java bounds them (version 6)

    def schedule(self, options: Options = None, *, instant_time: str | None = None) -> ArchivePlan | None:
        """The instants :func:`instants_to_archive` selects now; None when nothing qualifies."""
        context = self._context(options)
        chosen = before_latest_compaction(context.storage,
                                          instants_to_archive(context.storage, context.timeline(), context.config))
        return ArchivePlan(tuple(chosen)) if chosen else None

    def execute(self, plan: ArchivePlan | str, *, options: Options = None) -> ArchiveResult:
        """Write the plan's instants into a new archive file, then remove them from the active timeline."""
        if isinstance(plan, str):
            raise PlanNotFoundError(f"Archival has no saved plans (no instant {plan}): pass the ArchivePlan")
        context = self._context(options)
        return archive_instants(context.storage, context.config, list(plan.instants))

    def run(self, options: Options = None) -> ArchiveResult:
        """Archive what qualifies now, under the table lock (an empty result when nothing does)."""
        return super().run(options) or ArchiveResult()

    def plan(self, instant_time: str) -> ArchivePlan:
        raise PlanNotFoundError(f"Archival has no saved plans (no instant {instant_time})")

    def pending_instant_times(self) -> list[str]:
        return []  # archival leaves nothing pending: the archive file is complete before any instant goes


# -- table versions 8 and 9: the LSM history ------------------------------------------------------------------
def _state_files(storage: Storage) -> dict[tuple[str, Action], list[Instant]]:
    """Every layout-2 instant file by (instant time, action); a compaction's pending files go with the commit
    it completes as (Java's comparable action)."""
    out: dict[tuple[str, Action], list[Instant]] = {}
    for f in storage.list_files(timeline_folder(LAYOUT_2)):
        instant = parse_instant_file_name(f.path.rsplit("/", 1)[-1], LAYOUT_2)
        if instant is not None:
            action = Action.COMMIT if instant.action == Action.COMPACTION else instant.action
            out.setdefault((instant.timestamp, action), []).append(instant)
    return out


def _non_empty(storage: Storage, instant: Instant | None) -> bytes | None:
    return (storage.read_bytes(instant.path) or None) if instant is not None else None


def history_instant(storage: Storage, files: list[Instant]) -> HistoryInstant:
    """The HoodieLSMTimelineInstant of one completed instant and its pending files (Java's
    MetadataConversionUtils.createLSMTimelineInstant): the completed file's bytes as metadata; as plan the
    clean's plan, a replacecommit's requested metadata or, when not empty, its inflight metadata, a
    compaction's plan."""
    [completed] = [i for i in files if i.is_completed]
    requested = next((i for i in files if i.is_requested), None)
    inflight = next((i for i in files if i.is_inflight), None)
    pending = requested or inflight
    plan = None
    if pending is not None and pending.action == Action.CLEAN:
        plan = storage.read_bytes(pending.path)
    elif pending is not None and pending.action == Action.REPLACECOMMIT:
        plan = _non_empty(storage, inflight) or _non_empty(storage, requested)
    elif pending is not None and pending.action == Action.COMPACTION:
        plan = _non_empty(storage, requested)
    return HistoryInstant(completed.timestamp, completed.completion_time, completed.completed_action,
                          _non_empty(storage, completed), plan)


def _archive_into_history(storage: Storage, config: HoodieConfig, folder: str, chosen: list[Instant],
                          ) -> ArchiveResult:
    files = _state_files(storage)
    groups = [files.get((i.timestamp, i.action), []) for i in chosen]
    groups = [g for g in groups if any(i.is_completed for i in g)]  # another archival took the rest
    if not groups:
        return ArchiveResult()
    for group in groups:  # a write's leftover markers go before its instant does, as in Java
        storage.delete_dir(instant_temp_dir(group[0].timestamp))
    writer = HistoryWriter(storage, folder, compression=config.get(StorageConfig.PARQUET_COMPRESSION_CODEC),
                           batch_size=config.get(ArchivalConfig.TIMELINE_COMPACTION_BATCH))
    name = writer.append([history_instant(storage, g) for g in groups])
    # Pending states first: a completed file removed first would leave what looks like a pending instant.
    for group in groups:
        for instant in group:
            if not instant.is_completed:
                storage.delete(instant.path)
    for group in groups:
        storage.delete(next(i for i in group if i.is_completed).path)
    writer.compact_and_clean()
    archived = [next(i for i in g if i.is_completed) for g in groups]
    return ArchiveResult(archived=archived, archive_file=f"{folder}/{name}", entries=len(groups))


def archive_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None) -> ArchiveResult | None:
    """``hoodie.archive.automatic``: archive after each commit (cheap when nothing qualifies)."""
    context = ServiceContext.of(table, options)
    config = context.config
    if not config.get(ArchivalConfig.AUTOMATIC):
        return None
    service = ArchiveService(context)
    if not archival_due(service.context.timeline(), config):
        return None
    return service.run()


def archival_due(timeline: Timeline, config: HoodieConfig) -> bool:
    """Whether commits, cleans or rollbacks number more than ``hoodie.keep.max.commits`` (cheap: no selection)."""
    high = config.get(ArchivalConfig.MAX_COMMITS)
    counts = [len(timeline.completed_commits())] + [
        len(timeline.filter(actions=[a], states=[State.COMPLETED])) for a in (Action.CLEAN, Action.ROLLBACK)]
    return max(counts) > high

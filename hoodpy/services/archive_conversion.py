"""The archived timeline across an upgrade (6 -> 8) or downgrade (8 -> 6), as Hudi 1.x converts it.

Version 6 keeps archived instants in ``.hoodie/archived`` log files (HoodieArchivedMetaEntry records, one per
instant state), version 8 in the LSM history ``.hoodie/timeline/history`` (one HoodieLSMTimelineInstant per
completed instant). Java's SixToEightUpgradeHandler migrates the first into the second
(UpgradeDowngradeUtils.upgradeToLSMTimeline: LegacyArchivedMetaEntryReader, then LSMTimelineWriter), and
EightToSixDowngradeHandler back (downgradeFromLSMTimeline: one COMPLETED summary entry per instant,
MetadataConversionUtils.createMetaWrapper, written by the 0.x archiver).

* Upgrade: an instant's completed entry gives its completion time (``stateTransitionTime``; the instant time
  when an old archive lacks it) and its metadata, written as the completed instant file of version 8 holds it
  (commit metadata in Avro, clean / rollback / savepoint metadata with the 1.x writer schema); its pending
  entries give the plan (clean plan, compaction plan, a replacecommit's inflight or requested metadata).
  Instants archived without a completed entry are left out, as Java's reader leaves them out.
* Downgrade: each history instant becomes one COMPLETED entry (state transition time = completion time),
  with its metadata decoded; a commit's compaction plan goes with it.

Where hoodpy differs from Java, on purpose: Java leaves the old form in place (the new version's readers
ignore it); hoodpy removes it once the properties name the new version, so a later round trip does not
archive every instant twice. A leftover of the new form from a crashed run is replaced, never appended to.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hoodpy.config.clean import ArchivalConfig
from hoodpy.config import HoodieConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.services.archive import archived_commit_metadata, write_archive_file
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.archived import ARCHIVE_FOLDER, read_archived_entries
from hoodpy.timeline.avro_models import AvroModel, deserialize, encode_record, serialize_for_layout
from hoodpy.timeline.history import HistoryInstant, HistoryWriter
from hoodpy.timeline.instant import LAYOUT_2, Action, State
from hoodpy.timeline.metadata import CommitMetadata

_COMPLETED = State.COMPLETED.value
# Completed metadata other than commit metadata: (archived entry field, Avro record).
_METADATA = {Action.CLEAN.value: ("hoodieCleanMetadata", AvroModel.CLEAN_METADATA),
             Action.ROLLBACK.value: ("hoodieRollbackMetadata", AvroModel.ROLLBACK_METADATA),
             Action.SAVEPOINT.value: ("hoodieSavePointMetadata", AvroModel.SAVEPOINT_METADATA)}
_COMMIT_FIELDS = {Action.COMMIT.value: "hoodieCommitMetadata", Action.DELTACOMMIT.value: "hoodieCommitMetadata",
                  Action.REPLACECOMMIT.value: "hoodieReplaceCommitMetadata"}


# -- version 6 -> 8 ------------------------------------------------------------------------------------------
def _commit_avro(record: dict[str, Any] | None, *, replace: bool) -> bytes | None:
    if record is None:
        return None
    metadata = CommitMetadata.from_dict(record)
    if replace and metadata.partition_to_replace_file_ids is None:
        metadata.partition_to_replace_file_ids = {}
    return metadata.to_avro_bytes()


def _plan(group: list[dict[str, Any]]) -> bytes | None:
    """The plan Java's LSM instant keeps: the clean plan, the compaction plan, or a replacecommit's inflight
    metadata (when not empty) else its requested metadata."""
    by_field = {k: v for e in group for k, v in e.items() if v is not None}
    if by_field.get("hoodieCleanerPlan") is not None:
        return serialize_for_layout(AvroModel.CLEANER_PLAN, by_field["hoodieCleanerPlan"], LAYOUT_2)
    if by_field.get("hoodieCompactionPlan") is not None:
        return serialize_for_layout(AvroModel.COMPACTION_PLAN, by_field["hoodieCompactionPlan"], LAYOUT_2)
    if by_field.get("HoodieInflightReplaceMetadata") is not None:
        return _commit_avro(by_field["HoodieInflightReplaceMetadata"], replace=False)
    if by_field.get("hoodieRequestedReplaceMetadata") is not None:
        return serialize_for_layout(AvroModel.REQUESTED_REPLACE_METADATA, by_field["hoodieRequestedReplaceMetadata"],
                                    LAYOUT_2)
    return None


def history_instant_of(group: list[dict[str, Any]]) -> HistoryInstant | None:
    """The LSM history instant of one archived instant's entries (any order); None when none is completed."""
    done = next((e for e in group if e.get("actionState") == _COMPLETED), None)
    if done is None:
        return None
    action = done["actionType"]
    metadata = None
    if action in _COMMIT_FIELDS:
        metadata = _commit_avro(done.get(_COMMIT_FIELDS[action]), replace=action == Action.REPLACECOMMIT.value)
    elif action in _METADATA and done.get(_METADATA[action][0]) is not None:
        key, model = _METADATA[action]
        metadata = serialize_for_layout(model, done[key], LAYOUT_2)
    return HistoryInstant(done["commitTime"], done.get("stateTransitionTime") or done["commitTime"], action,
                          metadata, _plan([e for e in group if e is not done]))


def legacy_history(storage: Storage) -> list[HistoryInstant]:
    """The legacy archive's completed instants as LSM history instants, in instant-time order. A compaction's
    pending entries group with the commit it completed as."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in read_archived_entries(storage):
        action = e.get("actionType") or ""
        action = Action.COMMIT.value if action == Action.COMPACTION.value else action
        groups.setdefault((e.get("commitTime") or "", action), []).append(e)
    out = [history_instant_of(groups[k]) for k in sorted(groups)]
    return [h for h in out if h is not None]


def write_history(storage: Storage, folder: str, instants: list[HistoryInstant], config: HoodieConfig) -> None:
    """Replace whatever is in ``folder`` (a crashed run's leftover) by a history of ``instants``."""
    storage.delete_dir(folder)
    if not instants:
        return
    writer = HistoryWriter(storage, folder, compression=config.get(StorageConfig.PARQUET_COMPRESSION_CODEC),
                           batch_size=config.get(ArchivalConfig.TIMELINE_COMPACTION_BATCH))
    writer.append(instants)
    writer.compact_and_clean()


# -- version 8 -> 6 ------------------------------------------------------------------------------------------
def legacy_entry(instant: HistoryInstant) -> dict[str, Any]:
    """One history instant as the single COMPLETED HoodieArchivedMetaEntry Java's downgrade writes."""
    source = f"{instant.instant_time}.{instant.action} (LSM history)"
    entry: dict[str, Any] = {"commitTime": instant.instant_time, "actionType": instant.action,
                             "actionState": _COMPLETED, "version": 1,
                             "stateTransitionTime": instant.completion_time}
    data = instant.metadata
    if instant.action in _COMMIT_FIELDS and data:
        json_bytes = CommitMetadata.from_bytes(data, source=source).to_json_bytes()
        entry[_COMMIT_FIELDS[instant.action]] = archived_commit_metadata(
            json_bytes, replace=instant.action == Action.REPLACECOMMIT.value)
        if instant.action == Action.COMMIT.value and instant.plan:
            entry["hoodieCompactionPlan"] = deserialize(AvroModel.COMPACTION_PLAN, instant.plan, source=source)
    elif instant.action in _METADATA and data:
        key, model = _METADATA[instant.action]
        entry[key] = deserialize(model, data, source=source)
    return entry


def legacy_archive_files(storage: Storage) -> list[str]:
    """The archive log files of ``.hoodie/archived``."""
    return [f.path for f in storage.list_files(ARCHIVE_FOLDER)
            if log_format.archive_file_version(f.path.rsplit("/", 1)[-1]) is not None]


def write_legacy_archive(storage: Storage, instants: Iterable[HistoryInstant], config: HoodieConfig) -> None:
    """Replace the archive log files (a crashed run's leftover, or the archive an upgrade by Java kept) by
    one file of ``instants``' entries."""
    for rel in legacy_archive_files(storage):
        storage.delete(rel)
    entries = [encode_record(AvroModel.ARCHIVED_META_ENTRY, legacy_entry(h)) for h in instants]
    if entries:
        write_archive_file(storage, entries, config.get(ArchivalConfig.BATCH))


__all__ = ["history_instant_of", "legacy_archive_files", "legacy_entry", "legacy_history", "write_history",
           "write_legacy_archive"]

"""What a data-table instant changes in the file listing, read from the metadata it completes with
(HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords and its siblings):

* commit, deltacommit, replacecommit (and a compaction, which completes as a commit): every file a write stat
  names, with its size (the larger one when two stats name one log file); every partition of the write stats
  joins the partition list. Files a replacecommit replaces stay listed until the cleaner deletes them, as Hudi
  does;
* clean: the deleted files of each partition (deletePathPatterns), and the partitions it deleted;
* rollback, and each rollback inside a restore: the files it deleted and the log files it appended to (rollback
  command blocks, with their new sizes). The instants rolled back also lose the metadata-table deltacommits
  that recorded them (:mod:`hoodpy.metadata_table.writer`);
* savepoint: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hoodpy.metadata_table.records import FilesChange
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.metadata import CommitMetadata


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def changes_of(instant: Instant, data: bytes, source: str = "instant") -> FilesChange:
    """The listing change of ``instant`` completing with ``data`` (its completed file's bytes)."""
    change = FilesChange()
    if instant.action in (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION):
        metadata = CommitMetadata.from_bytes(data, source=source)
        for partition, stats in metadata.partition_to_write_stats.items():
            change.partitions_added.add(partition)
            for stat in stats:
                if stat.path:  # an empty partition's stat names no file
                    change.add(partition, _name(stat.path), stat.file_size_in_bytes)
                for path, size in (stat.cdc_stats or {}).items():  # CDC log files are files of the table too
                    change.add(partition, _name(path), size)
    elif instant.action == Action.CLEAN:
        clean = deserialize(AvroModel.CLEAN_METADATA, data, source=source)
        for partition, pm in (clean.get("partitionMetadata") or {}).items():
            names = pm.get("deletePathPatterns") or pm.get("successDeleteFiles") or []
            change.delete(partition, (_name(n) for n in names))
            if pm.get("isPartitionDeleted"):
                change.partitions_deleted.add(partition)
    elif instant.action == Action.ROLLBACK:
        _add_rollback(change, deserialize(AvroModel.ROLLBACK_METADATA, data, source=source))
    elif instant.action == Action.RESTORE:
        restore = deserialize(AvroModel.RESTORE_METADATA, data, source=source)
        for rollbacks in (restore.get("hoodieRestoreMetadata") or {}).values():
            for rollback in rollbacks or ():
                if rollback is not None:
                    _add_rollback(change, rollback)
    return change


def rolled_back_instants(instant: Instant, data: bytes, source: str = "instant") -> list[str]:
    """The instant times a rollback or restore undoes (none for other actions)."""
    if instant.action == Action.ROLLBACK:
        return list(deserialize(AvroModel.ROLLBACK_METADATA, data, source=source).get("commitsRollback") or [])
    if instant.action == Action.RESTORE:
        return list(deserialize(AvroModel.RESTORE_METADATA, data, source=source).get("instantsToRollback") or [])
    return []


def _add_rollback(change: FilesChange, rollback: Mapping[str, Any]) -> None:
    for partition, pm in (rollback.get("partitionMetadata") or {}).items():
        deleted = [_name(p) for p in pm.get("successDeleteFiles") or ()]
        if deleted:
            change.delete(partition, deleted)
        for appended in (pm.get("rollbackLogFiles") or {}, pm.get("logFilesFromFailedCommit") or {}):
            for path, size in appended.items():
                if _name(path) not in deleted:
                    change.add(partition, _name(path), int(size))


def only_listed(change: FilesChange, listed: Mapping[str, Iterable[str]]) -> FilesChange:
    """``change`` with deletions of files the listing does not hold left out (a failed write's files never
    reached it: a tombstone for them would only be carried along)."""
    out = FilesChange(dict(change.added), {}, set(change.partitions_added), set(change.partitions_deleted))
    for partition, names in change.deleted.items():
        kept = set(names) & set(listed.get(partition, ()))
        if kept:
            out.deleted[partition] = kept
    return out

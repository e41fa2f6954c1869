"""Which instants a time-travel read may still ask for, once cleans have deleted old file versions.

The file-system view is built from a storage listing, so after a clean it would silently fall back to an
older version of a file group (or none) and return a partial table. Instead a read as of ``t`` is checked:

* a savepointed instant is always readable (its files are pinned);
* if any clean on the active timeline deleted the version (file slice) of a file group that ``t`` reads (the newest
  version at or before ``t`` of a group not replaced by then), ``t`` is no longer retained;
* ``t`` older than the active timeline and older than the last clean's earliest retained commit is not
  retained either (the cleans that removed its files may have been archived).

Raises :class:`~hoodpy.errors.InstantNotRetainedError`, naming the earliest commit that is retained.
"""

from __future__ import annotations

from hoodpy.errors import InstantNotRetainedError
from hoodpy.file_group.fs_view import list_group_files, slice_instant
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action
from hoodpy.timeline.timeline import Timeline

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


def _hint(earliest: str | None) -> str:
    return (f"the cleaner retains commits from {earliest} on" if earliest
            else "an older file version it needs was cleaned") + "; savepoint an instant to keep it readable"


def _slice_of_name(name: str) -> tuple[str, str] | None:
    """(file id, base instant) of the file slice a base file or log file name belongs to."""
    if (base := parse_base_file_name(name)) is not None:
        return base.file_id, base.instant_time
    if (log := parse_log_file_name(name, cdc=True)) is not None:
        return log.file_id, log.base_instant_time
    return None


def check_retained(storage: Storage, timeline: Timeline, as_of: str) -> None:
    """Raise InstantNotRetainedError when cleaning removed files a read as of ``as_of`` needs."""
    from hoodpy.services.clean.execute import read_clean_metadata
    
    cleans = [i for i in timeline.filter(actions=[Action.CLEAN]) if i.is_completed]
    if not cleans or as_of in timeline.savepoint_times():
        return
    metas = [(c.timestamp, read_clean_metadata(storage, c.timestamp)) for c in cleans]
    last_earliest = metas[-1][1].get("earliestCommitToRetain") or None
    writes = timeline.filter(actions=_WRITE_ACTIONS)
    if last_earliest and as_of < last_earliest and (not writes or as_of < writes[0].timestamp):
        raise InstantNotRetainedError(as_of, "it is older than the active timeline; " + _hint(last_earliest))
    deleted: dict[tuple[str, str], dict[str, str]] = {}  # group -> {version instant: clean instant}
    for clean_time, meta in metas:
        for partition, pm in (meta.get("partitionMetadata") or {}).items():
            for name in pm.get("successDeleteFiles") or []:
                version = _slice_of_name(name.rsplit("/", 1)[-1])
                if version is not None and version[1] <= as_of:
                    deleted.setdefault((partition, version[0]), {})[version[1]] = clean_time
    if not deleted:
        return
    replaced: set[tuple[str, str]] = set()
    for instant in timeline.completed_replacecommits():
        if instant.timestamp <= as_of:
            replaced |= timeline.commit_metadata(instant).replaced_file_ids()
    existing: dict[tuple[str, str], set[str]] = {}
    first = timeline.earliest_instant_time()
    for f in list_group_files(storage, {p for p, _ in deleted}):
        instant = slice_instant(f)
        committed = timeline.is_completed_write(instant) or (first is not None and instant < first)
        if instant <= as_of and committed:
            existing.setdefault((f.partition_path, f.file_id), set()).add(instant)
    for group, versions in sorted(deleted.items()):
        if group in replaced:
            continue
        newest = max(set(versions) | existing.get(group, set()))
        if newest in versions:
            raise InstantNotRetainedError(
                as_of, f"clean {versions[newest]} deleted version {newest} of file group {group[1]} "
                f"(partition {group[0]!r}) that it reads; " + _hint(last_earliest))

"""Cleaning the metadata table: deleting the file slices of its file groups that no retained instant reads (Java's
metadata-table cleaner, policy KEEP_LATEST_COMMITS with ``hoodie.metadata.cleaner.commits.retained``).

The earliest retained instant is the N-th newest completed deltacommit or compaction of the metadata table. In
every partition folder (files, column_stats, record_index, and any other, the same rule holding for all) and
every file group, the newest committed base file at or before that instant starts the oldest slice kept; older
base files and the log files of their slices go (also the slice of log files only that a group Java created
empty has before its first compaction). A reader that loaded the timeline just before a compaction
still finds the slice it reads: that slice holds retained instants. Uncommitted base files (a compaction a
crash interrupted) and the partition metadata file are left alone.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from hoodpy.metadata_table.layout import MetadataBaseFile, MetadataLogFile, parse_base_file, parse_log_file
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, METAFOLDER, Action

_log = logging.getLogger(__name__)


def earliest_retained(table: MetadataTable, retained: int) -> str | None:
    """The oldest instant whose slices stay; None while the metadata table has no more than ``retained``."""
    done = sorted(i.timestamp for i in table.timeline.instants
                  if i.is_completed and i.action in (Action.DELTACOMMIT, Action.COMMIT))
    return done[-retained] if len(done) > retained else None


def _file_groups(meta: Storage) -> dict[tuple[str, str], tuple[list[MetadataBaseFile], list[MetadataLogFile]]]:
    """(partition, file id) -> (base files, log files) of every metadata partition folder."""
    groups: dict[tuple[str, str], tuple[list, list]] = defaultdict(lambda: ([], []))
    for f in meta.list_files("", recursive=True):
        partition, _, name = f.path.rpartition("/")
        if not partition or partition.startswith(METAFOLDER) or "/" in partition:
            continue
        if (b := parse_base_file(name, f.size, partition)) is not None:
            groups[(partition, b.file_id)][0].append(b)
        elif (lf := parse_log_file(name, f.size, partition)) is not None:
            groups[(partition, lf.file_id)][1].append(lf)
    return groups


def clean(meta: Storage, table: MetadataTable, retained: int) -> list[str]:
    """Delete the slices no retained instant reads (see the module docstring); the paths deleted."""
    earliest = earliest_retained(table, retained)
    if earliest is None:
        return []
    completed = {i.timestamp: i.completed_at for i in table.timeline.instants if i.is_completed}
    removed: list[str] = []
    for bases, logs in _file_groups(meta).values():
        committed = sorted((b for b in bases if b.instant_time in completed), key=lambda b: b.instant_time)
        start = max((k for k, b in enumerate(committed) if b.instant_time <= earliest), default=None)
        if start is None:
            continue  # every committed slice may hold a retained instant
        oldest_kept = committed[start].instant_time
        old = [b.path for b in committed[:start]]
        if table.layout == LAYOUT_2:
            # A log file belongs to the newest base file at or before its deltacommit's completion.
            old += [lf.path for lf in logs if lf.instant_time in completed and completed[lf.instant_time] < oldest_kept]
        else:  # named after its slice's base instant
            old += [lf.path for lf in logs if lf.instant_time < oldest_kept]
        for path in old:
            if meta.delete(path):
                removed.append(path)
    if removed:
        _log.info("Cleaned %d files of old metadata-table slices of %s (before %s)", len(removed),
                  table.data_storage.base_uri, earliest)
    return removed


def due(table: MetadataTable) -> bool:
    """Whether a clean may find anything: the files partition, compacted with every other, has an older
    committed slice (cheap: its listing is loaded already)."""
    completed = table.completed_times()
    return sum(b.instant_time in completed for b in table.base_files) > 1

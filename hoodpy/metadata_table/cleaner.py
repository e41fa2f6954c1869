"""Cleaning the metadata table: deleting the file slices of its file groups that no retained instant reads (Java's
metadata-table cleaner, policy KEEP_LATEST_COMMITS with ``hoodie.metadata.cleaner.commits.retained``).

The earliest retained instant is the N-th newest completed deltacommit or compaction of the metadata table. In
every partition folder (files, column_stats, record_index, and any other, the same rule holding for all) and
every file group, the newest committed base file at or before that instant starts the oldest slice kept; older
base files and the log files of their slices go (also the slice of log files only that a group Java created
empty has before its first compaction). A reader that loaded the timeline just before a compaction
still finds the slice it reads: that slice holds retained instants. Uncommitted base files (a compaction a
crash interrupted) and the partition metadata file are left alone.

Each clean is a ``clean`` instant on the metadata table's own timeline, as Java's (the metadata table's write
client runs the ordinary cleaner): ``<t>.clean.requested`` and ``.clean.inflight`` hold the HoodieCleanerPlan
(policy KEEP_LATEST_COMMITS, the earliest retained instant, the full paths to delete), the completed
``<t>.clean`` the HoodieCleanMetadata. ``t`` is the latest deltacommit plus ``002`` in version 6 (Java 0.14's
createCleanTimestamp, after the ``001`` of a compaction) and a new instant time in versions 8 and 9 (Hudi
1.x's ``writeClient.clean()``). Nothing to delete: no instant. A clean a crash interrupted runs again, from its
saved plan, before the next one is planned. As Java's cleanIfNecessary, no clean runs until three instants
have completed after the latest compaction (a reader that listed the slice just before it still finds its
files).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from hoodpy.config.clean import KEEP_LATEST_COMMITS
from hoodpy.metadata_table.layout import MetadataBaseFile, MetadataLogFile, parse_base_file, parse_log_file
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.clean_records import CleanerPlan, CleanResult, clean_metadata
from hoodpy.timeline.instant import LAYOUT_2, METAFOLDER, Action, Instant, State, new_instant_time

# Java 0.14's createCleanTimestamp: a metadata-table clean after deltacommit t is at t + "002".
CLEAN_SUFFIX = "002"
# Java's cleanIfNecessary: completed instants after the latest compaction before the metadata table cleans.
_INSTANTS_AFTER_COMPACTION = 3

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


def _doomed(meta: Storage, table: MetadataTable, earliest: str) -> dict[str, list[str]]:
    """partition -> the paths of the slices no instant at or after ``earliest`` reads."""
    completed = {i.timestamp: i.completed_at for i in table.timeline.instants if i.is_completed}
    committed_times = table.completed_times()  # archived base instants too
    doomed: dict[str, list[str]] = {}
    for (partition, _), (bases, logs) in sorted(_file_groups(meta).items()):
        committed = sorted((b for b in bases if b.instant_time in committed_times), key=lambda b: b.instant_time)
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
        if old:
            doomed.setdefault(partition, []).extend(sorted(old))
    return doomed


def _instant_time(table: MetadataTable) -> str | None:
    """The new clean's instant time (see the module docstring); None when version 6 already has it."""
    if table.layout == LAYOUT_2:
        return new_instant_time(after=max((i.timestamp for i in table.timeline.instants), default=None))
    latest = max((i.timestamp for i in table.timeline.filter(actions=[Action.DELTACOMMIT], states=[State.COMPLETED])),
                 default=None)
    if latest is None or any(i.timestamp == latest + CLEAN_SUFFIX for i in table.timeline.instants):
        return None
    return latest + CLEAN_SUFFIX


def _execute(meta: Storage, plan: CleanerPlan, inflight: Instant) -> list[str]:
    """Delete the plan's files (a file already gone counts as deleted) and complete the clean instant."""
    result = CleanResult(instant_time=inflight.timestamp, policy=plan.policy,
                         earliest_retained_instant=plan.earliest_commit_to_retain,
                         last_completed_commit_timestamp=plan.last_completed_commit_timestamp)
    for partition, paths in plan.files_per_partition.items():
        for path in paths:
            meta.delete(path)
            (result.failed_files if meta.exists(path) else result.deleted_files).setdefault(partition, []).append(path)
    transitions.complete(meta, inflight, serialize(AvroModel.CLEAN_METADATA, clean_metadata(plan, result)),
                         metadata_table_updated=True)
    return [p for paths in result.deleted_files.values() for p in paths]


def _relative(meta: Storage, path: str) -> str:
    prefix = meta.full_path("") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def finish_pending(meta: Storage, table: MetadataTable) -> list[str]:
    """Run again the cleans of the metadata table a crash interrupted (from their saved plans); the paths
    deleted."""
    removed: list[str] = []
    for instant in table.timeline.pending([Action.CLEAN]):
        data = meta.read_bytes(instant.path)
        plan = CleanerPlan.from_avro(deserialize(AvroModel.CLEANER_PLAN, data, source=meta.full_path(instant.path)),
                                     lambda p: _relative(meta, p), instant.timestamp)
        if instant.state == State.REQUESTED:
            instant = transitions.transition_to_inflight(meta, instant, data)
        removed += _execute(meta, plan, instant)
    return removed


def clean(meta: Storage, table: MetadataTable, retained: int) -> list[str]:
    """Delete the slices no retained instant reads (see the module docstring), as a clean instant of the
    metadata table; the paths deleted."""
    earliest = earliest_retained(table, retained)
    if earliest is None:
        return []
    doomed = _doomed(meta, table, earliest)
    instant_time = _instant_time(table) if doomed else None
    if instant_time is None:
        return []
    writes = table.timeline.filter(actions=[Action.DELTACOMMIT, Action.COMMIT], states=[State.COMPLETED])
    retained_from = next(i for i in writes if i.timestamp == earliest)
    plan = CleanerPlan(policy=KEEP_LATEST_COMMITS,
                       earliest_instant_to_retain=Instant(earliest, retained_from.action, State.COMPLETED),
                       last_completed_commit_timestamp=writes[-1].timestamp,
                       files_per_partition={p: tuple(paths) for p, paths in doomed.items()}, instant_time=instant_time)
    data = serialize(AvroModel.CLEANER_PLAN, plan.to_avro(meta.full_path))
    requested = transitions.create_requested(meta, instant_time, Action.CLEAN, data, layout=table.layout)
    removed = _execute(meta, plan, transitions.transition_to_inflight(meta, requested, data))
    _log.info("Cleaned %d files of old metadata-table slices of %s at %s (before %s)", len(removed),
              table.data_storage.base_uri, instant_time, earliest)
    return removed


def due(table: MetadataTable) -> bool:
    """Whether a clean may find anything: the files partition, compacted with every other, has an older
    committed slice (cheap: its listing is loaded already), and three instants completed after the latest
    compaction (Java's cleanIfNecessary)."""
    completed = table.completed_times()
    if sum(b.instant_time in completed for b in table.base_files) <= 1:
        return False
    compaction = table.latest_compaction_time()
    after = [i for i in table.timeline.instants if i.is_completed and (compaction is None or i.timestamp > compaction)]
    return len(after) >= _INSTANTS_AFTER_COMPACTION

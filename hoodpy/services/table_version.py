"""Upgrade a table from version 6 to 8 and downgrade it back (Hudi's ``upgrade_table`` / ``downgrade_table``).

Upgrade 6 -> 8, as Hudi's SixToEightUpgradeHandler does for a copy-on-write table: failed writes are rolled
back first; every active instant moves from ``.hoodie/`` into ``.hoodie/timeline/`` (timeline layout 2),
a completed one named ``<t>_<c>.<action>`` with ``c`` its file's modification time, a pending clustering
becoming a ``clustering`` instant, and JSON commit metadata rewritten as Avro; the properties gain the
version-8 keys (``hoodie.table.initial.version=SIX``, merge mode, key generator type, timeline paths).
Downgrade 8 -> 6 is the reverse (Hudi's EightToSixDowngradeHandler).

The archived timeline is converted too (:mod:`hoodpy.services.archive_conversion`): version 6's
``.hoodie/archived`` log files into version 8's LSM history and back, as Hudi 1.x's handlers do.

A metadata table is removed before the conversion (its partitions cleared in the properties, so readers list
files meanwhile) and, when it held the ``files`` partition, built again from the converted table at the new
version with the partitions hoodpy maintains that it had: ``files``, ``column_stats`` and ``bloom_filters``
(from the base files' footers) and ``record_index`` (every key of the latest slices), each with the file-group
count it had (read from the old metadata table's file names, not the configured default: Java keeps the file
groups, and readers shard keys by their count). Java upgrades the metadata
table in place as a table of its own; the rebuilt one holds the same listing, statistics, filters and key
locations. Partitions hoodpy does not maintain (partition_stats, secondary and expression indexes) are left out,
as its next write would drop them anyway.

A merge-on-read table is compacted first, every file slice with log files (as Hudi's handlers do: rollback
of failed writes and an unbounded compaction, "in one step"), so that the latest slices hold base files only
and version 8 readers, which slice log files by completion time, never merge version 6 log files (nor version 6
readers version 8 ones, named after their deltacommits). Both directions compact, at the version the table has.

Pending table services are refused before anything changes, naming them. Order of the steps: the new archive
and instant files first, then ``hoodie.properties`` (the switch), then the old files are removed; a crash
before the switch leaves files the old layout ignores (the next run replaces them), after it the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.config.keygen import KeyGeneratorConfig
from hoodpy.config.compaction import CompactionConfig
from hoodpy.config.table import INITIAL_VERSION_KEY, MERGE_ON_READ, TableConfig
from hoodpy.config.table_version import MERGE_MODE_PROPERTY, versioned_properties
from hoodpy.config.write import WriteConfig
from hoodpy.config.metadata import (
    BLOOM_FILTERS_PARTITION, COLUMN_STATS_PARTITION, METADATA_TABLE_FOLDER, RECORD_INDEX_PARTITION, MetadataConfig,
)
from hoodpy.errors import HoodieError, TableVersionChangeError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.metadata_table import bloom_filters, record_index_writer
from hoodpy.metadata_table.column_stats import has_column_stats
from hoodpy.metadata_table.layout import parse_base_file, parse_log_file
from hoodpy.metadata_table.reader import has_files_partition
from hoodpy.metadata_table.record_index import has_partition as has_record_index
from hoodpy.metadata_table.writer import MetadataTableWriter, create_metadata_table
from hoodpy.services.archive_conversion import (
    legacy_archive_files, legacy_history, write_history, write_legacy_archive,
)
from hoodpy.services.compaction.service import CompactionService
from hoodpy.services.rollback import rollback_failed_writes
from hoodpy.services.table_service import ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline.history import history_folder, read_history
from hoodpy.timeline.instant import (
    LAYOUT_1, LAYOUT_2, Instant, State, format_instant_millis, parse_instant_time, timeline_folder,
)
from hoodpy.timeline.metadata import AVRO_MAGIC, CommitMetadata
from hoodpy.timeline.metadata_table import listed_partitions, remove_stale_metadata_table
from hoodpy.timeline.timeline import Timeline

_UNBOUNDED_IO_MB = 2**40  # a compaction plan's IO budget that takes every slice (UnBoundedCompactionStrategy)
VERSION_NAMES = {"SIX": 6, "EIGHT": 8}  # Hudi's HoodieTableVersion names the procedures take
BOOTSTRAP_INDEX_TYPE = "hoodie.bootstrap.index.type"  # added by Hudi's upgrade, dropped by its downgrade


def parse_version(text: str) -> int:
    """``6`` / ``8`` or Hudi's enum names ``SIX`` / ``EIGHT``."""
    value = str(text).strip().upper()
    version = VERSION_NAMES.get(value) or (int(value) if value.isdigit() else None)
    if version not in (6, 8):
        raise TableVersionChangeError(f"to_version {text!r}: hoodpy upgrades and downgrades between table "
                                      "versions 6 (SIX) and 8 (EIGHT) only")
    return version


@dataclass(frozen=True)
class _Move:
    source: str
    target: str
    data: bytes
    completed_at: str | None = None  # downgrade: the completion time the layout-1 file's mtime must carry


def change_table_version(context: ServiceContext, to_version: int) -> bool:
    """Upgrade (6 -> 8) or downgrade (8 -> 6) the table; False when it already has ``to_version``."""
    storage = context.storage
    props = load_table_properties(storage) or {}
    merge_on_read = props.get(TableConfig.TYPE.key) == MERGE_ON_READ
    if merge_on_read and int(props.get(TableConfig.VERSION.key, "6")) != to_version:
        _check_versions(context, int(props.get(TableConfig.VERSION.key, "6")), to_version)  # before compacting
        _compact_log_files(context)
    with context.transaction(merge_on_read=merge_on_read).locked():
        props = load_table_properties(storage) or {}
        current = int(props.get(TableConfig.VERSION.key, "6"))
        if current == to_version:
            return False
        _check_versions(context, current, to_version)
        timeline = _without_pending(context)
        if merge_on_read:
            _require_base_files_only(context, timeline)
        rebuild = has_files_partition(props)
        indexes = set(listed_partitions(props)) & {COLUMN_STATS_PARTITION, BLOOM_FILTERS_PARTITION,
                                                   RECORD_INDEX_PARTITION}
        counts = _file_group_counts(storage, indexes)
        if remove_stale_metadata_table(storage, reason=f"the table changes from version {current} to {to_version}"
                                       + (", and it is built again at the new version" if rebuild else "")):
            props = load_table_properties(storage) or {}  # the metadata partitions are cleared
        listing = {f.path.rsplit("/", 1)[-1]: f.mtime_ns for f in storage.list_files(timeline_folder(
            timeline.layout))}
        moves = [_move(storage, i, state, listing, to_version) for i in timeline.instants
                 for state in _states(i)]
        new_props = _properties(props, context, to_version)
        if to_version == 8:
            write_history(storage, history_folder(new_props), legacy_history(storage), context.config)
        else:
            write_legacy_archive(storage, read_history(storage, history_folder(props)), context.config)
        storage.mkdirs(timeline_folder(LAYOUT_2 if to_version == 8 else LAYOUT_1))
        for m in moves:
            if m is not None:
                storage.write_atomic(m.target, m.data)
                if m.completed_at is not None:  # as Java's downgrade: layout 1 reads completion times from mtimes
                    at = parse_instant_time(m.completed_at)
                    storage.set_modification_time(m.target, int(at.timestamp()) * 10**9 + at.microsecond * 1000)
        save_table_properties(storage, new_props)
        for m in moves:
            if m is not None and m.source != m.target:
                storage.delete(m.source)
        if to_version == 8:
            for rel in legacy_archive_files(storage):
                storage.delete(rel)
        else:
            storage.delete_dir(history_folder(props))
        if to_version == 6 and not storage.list_files(timeline_folder(LAYOUT_2), recursive=True):
            storage.delete_dir(timeline_folder(LAYOUT_2))
        if rebuild:
            _rebuild_metadata_table(context.with_options(_count_options(counts)), indexes)
    return True


def _rebuild_metadata_table(context: ServiceContext, indexes: set[str]) -> None:
    """Build the metadata table at the new version: ``files``, then the ``indexes`` it had (column_stats,
    bloom_filters, record_index) unless the configuration built them already."""
    storage = context.storage
    create_metadata_table(storage, context.config)
    writer = MetadataTableWriter(storage, context.config)
    timeline = Timeline.load(storage)
    props = load_table_properties(storage) or {}
    if COLUMN_STATS_PARTITION in indexes and not has_column_stats(props):
        writer.bootstrap_column_stats(timeline)
    if BLOOM_FILTERS_PARTITION in indexes and not bloom_filters.has_partition(props):
        bloom_filters.build(writer, timeline)
    if RECORD_INDEX_PARTITION in indexes and not has_record_index(props):
        record_index_writer.build(writer, timeline)


def _file_group_counts(storage: Storage, partitions: set[str]) -> dict[str, int]:
    """How many file groups each of the metadata table's ``partitions`` has: the distinct file ids of its base
    and log files (a partition without files is left out)."""
    counts = {}
    for partition in partitions:
        ids = set()
        for f in storage.list_files(f"{METADATA_TABLE_FOLDER}/{partition}"):
            name = f.path.rsplit("/", 1)[-1]
            parsed = parse_base_file(name, partition=partition) or parse_log_file(name, partition=partition)
            if parsed is not None:
                ids.add(parsed.file_id)
        if ids:
            counts[partition] = len(ids)
    return counts


def _count_options(counts: dict[str, int]) -> dict[str, str]:
    """Options that build each partition of ``counts`` with that many file groups (record_index: its minimum
    and maximum both, so the key count does not resize it)."""
    keys = {COLUMN_STATS_PARTITION: (MetadataConfig.COLUMN_STATS_FILE_GROUPS,),
            BLOOM_FILTERS_PARTITION: (MetadataConfig.BLOOM_FILTER_FILE_GROUPS,),
            RECORD_INDEX_PARTITION: (MetadataConfig.RECORD_INDEX_MIN_FILE_GROUP_COUNT,
                                     MetadataConfig.RECORD_INDEX_MAX_FILE_GROUP_COUNT)}
    return {key.key: str(n) for partition, n in counts.items() for key in keys[partition]}


def _without_pending(context: ServiceContext) -> Timeline:
    """The timeline once failed writes are rolled back; TableVersionChangeError while instants are pending."""
    failed_writes = context.with_options({"hoodie.cleaner.policy.failed.writes": "EAGER"}).transaction(
        merge_on_read=True)
    timeline = rollback_failed_writes(failed_writes, Timeline.load(context.storage))
    pending = [str(i) for i in timeline.instants if not i.is_completed]
    if pending:  # e.g. a scheduled clean or clustering: Hudi would carry it over, hoodpy asks to finish it
        raise TableVersionChangeError(f"Table {context.name} has pending instants {pending}: finish them "
                                      "(or roll them back) before changing its version")
    return timeline


def _check_versions(context: ServiceContext, current: int, to_version: int) -> None:
    if (current, to_version) not in ((6, 8), (8, 6)):
        raise TableVersionChangeError(f"Table {context.name} has table version {current}: hoodpy changes "
                                      "versions 6 and 8 into each other only")


def _compact_log_files(context: ServiceContext) -> None:
    """Compact every file slice of a merge-on-read table that has log files, after rolling back
    failed writes (Hudi's rollbackFailedWritesAndCompact with an unbounded compaction strategy)."""
    if context.table is None:
        raise TableVersionChangeError(f"Table {context.name} is merge-on-read: changing its version compacts it, "
                                      "which needs the table (its Spark session), not a bare storage")
    _without_pending(context)
    CompactionService.of(context.table).run({CompactionConfig.TARGET_IO.key: str(_UNBOUNDED_IO_MB),
                                             CompactionConfig.LOG_FILE_SIZE_THRESHOLD.key: "0"})


def _require_base_files_only(context: ServiceContext, timeline: Timeline) -> None:
    """Refuse a merge-on-read table whose latest file slices still have log files (naming one): a write that
    slipped in between the compaction and the lock."""
    with_logs = [s for s in FileSystemView.load(context.storage, timeline).latest_file_slices() if s.log_files]
    if with_logs:
        first = with_logs[0]
        raise TableVersionChangeError(
            f"Table {context.name} is merge-on-read and {len(with_logs)} latest file slice(s) have log files (file "
            f"group {first.file_id} in partition {first.partition_path!r}), written after the compaction that "
            "changing its version ran: run it again")


def _states(instant: Instant) -> list[State]:
    return [s for s in (State.REQUESTED, State.INFLIGHT, State.COMPLETED)
            if s != State.COMPLETED or instant.is_completed]


def _move(storage: Storage, instant: Instant, state: State, mtimes: dict[str, int], to_version: int,
          ) -> _Move | None:
    """One instant file of ``instant`` in ``state``, as the other layout names and encodes it."""
    source = instant.with_state(state, instant.completion_time if state == State.COMPLETED else None)
    if source.file_name not in mtimes and state != State.COMPLETED:
        source = replace(source, clustering=True)  # layout 2: a completed clustering's pending files
    if source.file_name not in mtimes:
        return None  # e.g. a savepoint has no requested file, a write may lack its requested file
    data = storage.read_bytes(source.path)
    layout = LAYOUT_2 if to_version == 8 else LAYOUT_1
    completion = None
    if state == State.COMPLETED:
        completion = format_instant_millis(mtimes[source.file_name]) if to_version == 8 else None
        if completion is not None and completion <= instant.timestamp:
            completion = instant.timestamp  # a file touched in the past: never complete before starting
    target = Instant(instant.timestamp, instant.action, state, completion, layout)
    if instant.action.is_write and data and state != State.REQUESTED:
        data = _convert_commit_metadata(data, to_version)
    completed_at = instant.completion_time if state == State.COMPLETED and to_version == 6 else None
    return _Move(source.path, target.path, data, completed_at)


def _convert_commit_metadata(data: bytes, to_version: int) -> bytes:
    try:
        metadata = CommitMetadata.from_bytes(data)
    except HoodieError:
        return data  # an inflight file Hudi wrote in a form hoodpy does not read: kept as it is
    if to_version == 8 and not data.startswith(AVRO_MAGIC):
        return metadata.to_avro_bytes()
    if to_version == 6 and data.startswith(AVRO_MAGIC):
        return metadata.to_json_bytes()
    return data


def _properties(props: dict[str, str], context: ServiceContext, to_version: int) -> dict[str, str]:
    if to_version == 8:
        mode = context.config.get(WriteConfig.RECORD_MERGE_MODE)
        keygen = getattr(context.table, "keygen", None)  # a HoodieTable's; a bare storage has none
        out = versioned_properties(props, 8, mode, keygen.kind if keygen is not None else None)
        out[INITIAL_VERSION_KEY] = "SIX"  # as Hudi's upgrade records it (an enum name)
        return out
    out = {k: v for k, v in props.items() if k not in (
        INITIAL_VERSION_KEY, MERGE_MODE_PROPERTY, KeyGeneratorConfig.TYPE.key, BOOTSTRAP_INDEX_TYPE,
        TableConfig.TIMELINE_PATH.key, TableConfig.TIMELINE_HISTORY_PATH.key)}
    out[TableConfig.VERSION.key] = "6"
    out[TableConfig.TIMELINE_LAYOUT_VERSION.key] = "1"
    return out


__all__ = ["TableVersionChangeError", "change_table_version", "parse_version"]

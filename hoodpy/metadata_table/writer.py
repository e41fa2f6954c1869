"""Keeping the metadata table in step with the data table, inside the commit protocol of every instant.

:func:`complete_instant` is how every data-table action hoodpy completes (commit, deltacommit, replacecommit,
compaction, clean, rollback, restore, savepoint) publishes its completed instant. Before the data instant is
published, with the writer's lock held when there is one:

1. ``hoodie.metadata.enable`` decides (unset: whether hoodie.properties lists ``files``). Off: a metadata
   table is removed (:mod:`hoodpy.timeline.metadata_table`). On, and the table has none: it is built from the
   committed files (:meth:`MetadataTableWriter.bootstrap`; not while other instants are pending, as Java's
   HoodieBackedTableMetadataWriter refuses too) and ``hoodie.table.metadata.partitions=files`` is set.
2. Metadata partitions hoodpy does not maintain (record_index unless it is wanted, see
   :mod:`hoodpy.metadata_table.record_index_writer`; column_stats when
   ``hoodie.metadata.index.column.stats.enable`` is false; any other) are dropped: they would be stale after
   this instant (Java's deleteMetadataIndexIfNecessary for indexes a writer disables). An enabled column_stats
   the table lacks is built from the listed base files' footers (:mod:`hoodpy.metadata_table.column_stats`), so
   is a wanted bloom_filters (:mod:`hoodpy.metadata_table.bloom_filters`, which also writes its log files in
   step 6); a wanted record_index the table lacks is built from the keys of the latest file slices.
3. Deltacommits of the metadata table whose data instant did not complete (a crash between the two, or the
   instants a rollback or restore takes away) are removed with their log files; so is a compaction a crash
   interrupted. Readers ignore them anyway; this keeps them from counting later.
4. Slices older than ``hoodie.metadata.cleaner.commits.retained`` instants need are deleted, as a ``clean``
   instant of the metadata table (:mod:`hoodpy.metadata_table.cleaner`), before the compaction as in Java's
   performTableServices (clean, compact, archive; then the deltacommit). The metadata table's archival runs
   with the data table's (:mod:`hoodpy.services.metadata_archive`).
5. After ``hoodie.metadata.compact.max.delta.commits`` deltacommits the log blocks of every file group (files,
   column_stats, record_index) are compacted into new base HFiles, at ``<latest deltacommit>001`` (version 6) or
   1 ms before the data instant being recorded (versions 8 and 9); not while an older data instant is pending:
   the base file must hold every instant before it.
6. The instant's change (:mod:`hoodpy.metadata_table.changes`) is written as a deltacommit of the metadata
   table at the same instant time, completed before the data instant: one log file with one HFile data block
   in the files partition, and in the same deltacommit one log file per column_stats file group it touches
   (the new base files' footer statistics, tombstones for the files removed) and one per record_index file
   group it touches (the keys written and deleted).

A crash after step 6 leaves a completed metadata deltacommit whose data instant is pending: readers skip it
(:mod:`hoodpy.metadata_table.reader`), and the next instant completed (the rollback of the failed write, or the
write retried) removes it in step 3.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Container, Iterable, Sequence
from datetime import datetime, timedelta, timezone

from hoodpy.config import HoodieConfig
from hoodpy.config.metadata import (
    BLOOM_FILTERS_PARTITION, COLUMN_STATS_PARTITION, FILES_PARTITION, METADATA_TABLE_FOLDER, RECORD_INDEX_PARTITION,
    MetadataConfig,
)
from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.errors import HFileFormatError, HoodieIOError, InvalidInstantError, MetadataTableError
from hoodpy.file_group.naming import PARTITION_METAFILE, parse_base_file_name, parse_log_file_name
from hoodpy.hfile import DEFAULT_BLOCK_SIZE, file_info, write_records
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.metadata_table import changes as change_log
from hoodpy.metadata_table import bloom_filters, cleaner, column_stats, record_index_writer
from hoodpy.metadata_table.layout import (
    COMPACTION_SUFFIX, FILES_FILE_ID, INIT_WRITE_TOKEN, MetadataBaseFile, MetadataLogFile, base_file_name,
    log_file_name, metadata_storage, metadata_table_properties, parse_base_file, partition_init_instant,
    unique_init_instant,
)
from hoodpy.metadata_table.reader import MetadataTable, has_files_partition
from hoodpy.metadata_table.record_index import HFILE_BLOCK_SIZE as RECORD_INDEX_BLOCK_SIZE
from hoodpy.metadata_table.record_index import has_partition as has_record_index
from hoodpy.metadata_table.records import ALL_PARTITIONS_KEY, SCHEMA, FileListing, FilesChange, partition_key
from hoodpy.storage import Storage
from hoodpy.timeline import log_format, transitions
from hoodpy.timeline.avro_models import AvroModel, serialize
from hoodpy.timeline.instant import (
    LAYOUT_2, METAFOLDER, Action, Instant, State, instant_time_of, parse_instant_time, timeline_folder,
)
from hoodpy.timeline.metadata import NULL_COMMIT, CommitMetadata, WriteStat
from hoodpy.timeline.metadata_table import listed_partitions, remove_stale_metadata_table
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)

COMPACTION_PLAN_VERSION = 2
DELETE_BLOCK_VERSION = 3
# Hudi sizes the bloom filter of a metadata-table base file for 10,000 keys at fpp 1e-9 (dynamic, up to 100,000):
# the v9 samples' base files rebuild byte for byte with it.
_BLOOM = (10000, 1e-9, 100000)


def complete_instant(storage: Storage, inflight: Instant, data: bytes, config: HoodieConfig | None = None) -> Instant:
    """Bring the metadata table in step with ``inflight`` (see the module docstring), then publish the data
    instant with ``data`` as its completed file. The caller holds the table lock when writers may race."""
    MetadataTableWriter(storage, config).before_complete(inflight, data)
    return transitions.complete(storage, inflight, data, metadata_table_updated=True)


def _data_like(instant_time: str) -> bool:
    """A metadata instant that records a data instant (not a partition initialisation or a compaction)."""
    return len(instant_time) == 17 and not instant_time.startswith("0" * 14)


def _completed_stamps(storage: Storage, layout: int) -> set[str]:
    """Instant times of every completed instant file of the data table, also of actions hoodpy does not model
    (Hudi 1.x's ``indexing``, whose instant the metadata table shares)."""
    out = set()
    for f in storage.list_files(timeline_folder(layout)):
        stem, _, suffix = f.path.rsplit("/", 1)[-1].partition(".")
        if suffix and "." not in suffix and suffix != "inflight" and stem[:1].isdigit():
            out.add(stem.split("_", 1)[0])
    return out


def _instant_of(name: str) -> str | None:
    """The instant a data file name carries (a log file of version 6: its slice's base instant)."""
    base, log = parse_base_file_name(name), parse_log_file_name(name, cdc=True)
    return base.instant_time if base else log.base_instant_time if log else None


def partition_files_on_storage(storage: Storage) -> dict[str, dict[str, int]]:
    """partition path -> base and log file name -> size, listed on storage, committed or not: the folders holding
    a partition metadata file (Hudi's FileSystemBackedTableMetadata)."""
    by_folder: dict[str, dict[str, int]] = {}
    partitions: set[str] = set()
    for f in storage.list_files("", recursive=True):
        if f.path.startswith(METAFOLDER + "/"):
            continue
        folder, _, name = f.path.rpartition("/")
        if name == PARTITION_METAFILE:
            partitions.add(folder)
        elif _instant_of(name) is not None:
            by_folder.setdefault(folder, {})[name] = f.size
    return {p: by_folder.get(p, {}) for p in sorted(partitions)}


def _partition_metadata(instant_time: str) -> bytes:
    stamp = datetime.now(timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    return f"#partition metadata\n#{stamp}\ncommitTime={instant_time}\npartitionDepth=1\n".encode()


def _delete_block(instant_time: str) -> bytes:
    """An empty delete block (version 3, an empty HoodieDeleteRecordList): what creates a file group."""
    content = struct.pack(">ii", DELETE_BLOCK_VERSION, 1) + b"\x00"
    return log_format.encode_block(log_format.DELETE_BLOCK, {log_format.INSTANT_TIME: instant_time}, content)


def _compaction_operation(partition: str, file_id: str, base_instant: str, base_name: str | None,
                          logs: list[MetadataLogFile]) -> dict:
    """A HoodieCompactionOperation of a metadata-table file slice."""
    return {"baseInstantTime": base_instant, "deltaFilePaths": [lf.name for lf in logs], "dataFilePath": base_name,
            "fileId": file_id, "partitionPath": partition,
            "metrics": {"TOTAL_LOG_FILES": float(len(logs)), "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0,
                        "TOTAL_LOG_FILES_SIZE": float(sum(lf.size for lf in logs)), "TOTAL_IO_WRITE_MB": 0.0}}


class MetadataTableWriter:
    """Builds, updates, compacts and removes a table's metadata table (its files, column_stats and record_index
    partitions)."""

    def __init__(self, storage: Storage, config: HoodieConfig | None = None):
        self.storage = storage
        self.config = config or HoodieConfig()
        self.meta = metadata_storage(storage)

    # -- the commit protocol ---------------------------------------------------------------------------
    def enabled(self, properties: dict[str, str]) -> bool:
        """hoodie.metadata.enable; unset: whether the table has a metadata table or this write wants one of its
        indexes (record_index, or column_stats named true)."""
        wanted = self.config.get(MetadataConfig.ENABLE)
        if wanted is None:
            return (has_files_partition(properties) or record_index_writer.wanted(self.config, properties)
                    or self.config.get(MetadataConfig.COLUMN_STATS_ENABLE) is True
                    or self.config.get(MetadataConfig.BLOOM_FILTER_ENABLE) is True)
        return wanted

    def warn_ignored_indexes(self) -> list[str]:
        """The index keys set to true that hoodie.metadata.enable=false overrides, logged as a warning: the
        metadata table is removed, so those indexes are not built (no option ignored silently)."""
        ignored = [k.key for k in (MetadataConfig.RECORD_INDEX_ENABLE, MetadataConfig.COLUMN_STATS_ENABLE,
                                   MetadataConfig.BLOOM_FILTER_ENABLE) if self.config.get(k) is True]
        if ignored and self.config.get(MetadataConfig.ENABLE) is False:
            _log.warning("%s=true ignored for %s: %s=false turns the metadata table off, so the index is not built",
                         "=true and ".join(ignored), self.storage.base_uri, MetadataConfig.ENABLE.key)
            return ignored
        return []

    def before_complete(self, inflight: Instant, data: bytes) -> None:
        properties = load_table_properties(self.storage) or {}
        if not self.enabled(properties):
            self.warn_ignored_indexes()
            remove_stale_metadata_table(self.storage)
            return
        data_timeline = Timeline.load(self.storage)
        if not has_files_partition(properties):
            if not self.bootstrap(data_timeline, exclude=inflight.timestamp):
                return
            properties = load_table_properties(self.storage) or {}
        keep_index = record_index_writer.wanted(self.config, properties)
        keep_bloom = bloom_filters.wanted(self.config, properties)
        keep = {p for p, kept in ((RECORD_INDEX_PARTITION, keep_index), (BLOOM_FILTERS_PARTITION, keep_bloom))
                if kept}
        self.drop_unmaintained_partitions(properties, keep=keep)
        if self.column_stats_enabled(properties) and not column_stats.has_column_stats(properties):
            self.bootstrap_column_stats(data_timeline, exclude=inflight.timestamp)
        if keep_bloom and not bloom_filters.has_partition(properties):
            bloom_filters.build(self, data_timeline, exclude=inflight.timestamp)
        if keep_index and not has_record_index(properties):
            record_index_writer.build(self, data_timeline, exclude=inflight.timestamp)
        # Before step 3 removes the deltacommits of the instants a rollback or restore takes away.
        rebuild_index = keep_index and record_index_writer.covered_by_base(
            self.storage, change_log.rolled_back_instants(inflight, data, self.storage.full_path(inflight.path)))
        try:
            self.update(inflight, data, data_timeline)
        except (MetadataTableError, HFileFormatError, InvalidInstantError, HoodieIOError) as e:
            # Unreadable (a file lost or corrupt): build it again from the committed files, or, while other
            # instants are pending, remove it so that no reader uses it.
            _log.warning("Metadata table of %s unreadable (%s): building it again", self.storage.base_uri, e)
            if self.bootstrap(data_timeline, exclude=inflight.timestamp):
                self.update(inflight, data, data_timeline)
            else:
                remove_stale_metadata_table(self.storage, f"it cannot be read ({e})")
        if rebuild_index:
            record_index_writer.build(self, Timeline.load(self.storage), exclude=inflight.timestamp)

    def update(self, inflight: Instant, data: bytes, data_timeline: Timeline) -> None:
        """Steps 3 to 6 for the data instant ``inflight`` completing with ``data``."""
        table = MetadataTable(self.storage)
        if self.remove_orphans(table, data_timeline):
            table = MetadataTable(self.storage)
        if self.clean_if_due(table):
            table = MetadataTable(self.storage)
        if self.compact_if_due(table, data_timeline, inflight.timestamp):
            table = MetadataTable(self.storage)
        # Read it whole: an unreadable metadata table is found here, not by the next reader.
        current = table.read(data_timeline)
        source = self.storage.full_path(inflight.path)
        change = change_log.changes_of(inflight, data, source)
        if change_log.rolled_back_instants(inflight, data, source):
            change = change_log.only_listed(change, {p: current.files(p) for p in change.deleted})
        others = []
        properties = load_table_properties(self.storage)
        if has_record_index(properties):
            others = record_index_writer.deltacommit_logs(self, table, inflight, data, data_timeline, current)
        if bloom_filters.has_partition(properties):
            others += bloom_filters.deltacommit_logs(self, table, inflight.timestamp, change.added, change.deleted)
        if not change.is_empty() or others:
            self.write_deltacommit(table, inflight.timestamp, change, data_timeline, others)

    def clean_if_due(self, table: MetadataTable) -> bool:
        """Step 4: finish a clean of the metadata table a crash interrupted, then clean it when due; True when
        a clean instant completed."""
        changed = False
        if table.timeline.pending([Action.CLEAN]):
            cleaner.finish_pending(self.meta, table)
            table, changed = MetadataTable(self.storage), True
        if cleaner.due(table):
            changed = bool(cleaner.clean(self.meta, table, self.config.get(MetadataConfig.CLEANER_COMMITS_RETAINED)))
        return changed

    # -- building ---------------------------------------------------------------------------------------
    def bootstrap(self, data_timeline: Timeline, exclude: str | None = None) -> bool:
        """Build the metadata table from the committed files (any old ``.hoodie/metadata`` is replaced); False,
        with a warning, while instants other than ``exclude`` are pending."""
        pending = sorted(i.timestamp for i in data_timeline.instants if not i.is_completed and i.timestamp != exclude)
        if pending:
            _log.warning("Not building the metadata table of %s: instants %s are pending (Hudi builds it only "
                         "when no other operation is in progress); the next write tries again",
                         self.storage.base_uri, ", ".join(pending))
            return False
        properties = load_table_properties(self.storage) or {}
        completed = [i for i in data_timeline.instants if i.is_completed]
        latest = max((i.timestamp for i in completed), default=None)
        init = partition_init_instant(data_timeline.layout, latest)
        listing = self.committed_files(data_timeline)
        self.storage.delete_dir(METADATA_TABLE_FOLDER)
        name = properties.get(TableConfig.NAME.key) or self.storage.base_uri.rstrip("/").rsplit("/", 1)[-1]
        save_table_properties(self.meta, metadata_table_properties(properties, name))
        layout = data_timeline.layout
        inflight = transitions.transition_to_inflight(
            self.meta, transitions.create_requested(self.meta, init, Action.DELTACOMMIT, layout=layout))
        self.init_partition(FILES_PARTITION, init, [FILES_FILE_ID])
        base = self._write_base_file(listing, init, layout, first=True)
        stats = [WriteStat(FILES_FILE_ID, base.path, FILES_PARTITION, num_writes=len(listing.entries),
                           num_inserts=len(listing.entries), total_write_bytes=base.size,
                           file_size_in_bytes=base.size)]
        self.complete_metadata_instant(inflight, "BULK_INSERT_PREPPED", stats)
        properties[MetadataConfig.TABLE_PARTITIONS.key] = FILES_PARTITION
        properties[MetadataConfig.TABLE_PARTITIONS_INFLIGHT.key] = ""
        save_table_properties(self.storage, properties)
        _log.info("Built the metadata table of %s at %s: %d partitions, %d files", self.storage.base_uri, init,
                  len(listing.partitions()), sum(len(v) for v in listing.all_files().values()))
        if self.column_stats_enabled(properties):
            self.bootstrap_column_stats(data_timeline, listing, exclude)
        return True

    def partition_build_instant(self, partition: str, data_timeline: Timeline,
                                init_instant: Callable[[int, str | None], str], exclude: str | None) -> str | None:
        """The metadata instant that builds ``partition`` (``init_instant``: from the layout and the latest
        completed data instant; in version 6 the next suffix free, as Java's generateUniqueCommitInstantTime);
        None, with a warning, while data instants other than ``exclude`` are pending (the partition must hold
        every instant before its own)."""
        pending = sorted(i.timestamp for i in data_timeline.instants if not i.is_completed and i.timestamp != exclude)
        if pending:
            _log.warning("Not building %s of %s: instants %s are pending; the next write tries again", partition,
                         self.storage.base_uri, ", ".join(pending))
            return None
        layout = data_timeline.layout
        latest = max((i.timestamp for i in data_timeline.instants if i.is_completed), default=None)
        return unique_init_instant(layout, init_instant(layout, latest),
                                   {i.timestamp for i in MetadataTable(self.storage).timeline.instants})

    def build_partition(self, partition: str, init: str, layout: int,
                        groups: Iterable[tuple[str, list[tuple[str, dict | bytes]]]],
                        file_ids: Sequence[str] | None = None) -> None:
        """Write ``partition`` afresh as a deltacommit at ``init``: per file group (file id, its records sorted
        by key) the log file of an empty delete block and a base HFile; then hoodie.table.metadata.partitions
        names it. A partition built before (then dropped, or cut short by a crash) goes first, its instant
        with it (versions 8 and 9 build a partition at a fixed instant). With ``file_ids`` (the groups' ids, in
        order) ``groups`` may be a generator, so one group's records are held at a time."""
        self.meta.delete_dir(partition)
        transitions.delete_completed(self.meta, Instant(init, Action.DELTACOMMIT, layout=layout))
        inflight = transitions.transition_to_inflight(
            self.meta, transitions.create_requested(self.meta, init, Action.DELTACOMMIT, layout=layout))
        if file_ids is None:
            groups = list(groups)
            file_ids = [file_id for file_id, _ in groups]
        self.init_partition(partition, init, file_ids)
        stats = []
        for file_id, records in groups:
            base = self.write_base_hfile(partition, base_file_name(init, file_id), records, layout)
            stats.append(WriteStat(file_id, base.path, partition, num_writes=len(records), num_inserts=len(records),
                                   total_write_bytes=base.size, file_size_in_bytes=base.size))
        self.complete_metadata_instant(inflight, "BULK_INSERT_PREPPED", stats)
        properties = load_table_properties(self.storage) or {}
        built = MetadataConfig.TABLE_PARTITIONS.parse(properties.get(MetadataConfig.TABLE_PARTITIONS.key, ""))
        properties[MetadataConfig.TABLE_PARTITIONS.key] = ",".join(sorted({*built, partition}))
        save_table_properties(self.storage, properties)

    def init_partition(self, partition: str, instant_time: str, file_ids: Iterable[str]) -> None:
        """A new metadata partition's folder: its partition metadata file and, per file group, the log file of
        one empty delete block that creates it (Java's initializeFileGroups)."""
        self.meta.write_atomic(f"{partition}/{PARTITION_METAFILE}", _partition_metadata(instant_time))
        for file_id in file_ids:
            self.meta.write_atomic(f"{partition}/{log_file_name(instant_time, 1, INIT_WRITE_TOKEN, file_id)}",
                                   _delete_block(instant_time))

    def committed_files(self, data_timeline: Timeline) -> FileListing:
        """The data table's partitions and the base and log files of its committed instants in them, listed on
        storage (Java's listAllPartitionsFromFilesystem)."""
        committed = data_timeline.committed()
        listing = FileListing()
        for partition, files in partition_files_on_storage(self.storage).items():
            listing.merge(ALL_PARTITIONS_KEY, {partition_key(partition): (0, False)})
            listing.merge(partition_key(partition), {name: (size, False) for name, size in files.items()
                                                     if _instant_of(name) in committed})
        return listing

    def _write_base_file(self, listing: FileListing, instant_time: str, layout: int, *, first: bool,
                         file_id: str = FILES_FILE_ID) -> MetadataBaseFile:
        """A base HFile of ``listing`` (the file's own name in ``_hoodie_file_name`` except in the base file
        that initialises the partition)."""
        name = base_file_name(instant_time, file_id)
        return self.write_base_hfile(FILES_PARTITION, name, listing.records(None if first else name), layout)

    def write_base_hfile(self, partition: str, name: str, records: list[tuple[str, dict | bytes]], layout: int,
                         ) -> MetadataBaseFile:
        """A base HFile of ``records`` (sorted by key) in ``partition`` (HoodieAvroHFileWriter: min / max key,
        bloom filter of the keys)."""
        keys = [k for k, _ in records]
        bloom = BloomFilter.create(*_BLOOM)
        bloom.add_all(keys)
        data = write_records(
            records, SCHEMA, full_index_keys=layout != LAYOUT_2,  # Hudi 0.x reads HFiles through HBase
            block_size=RECORD_INDEX_BLOCK_SIZE if partition == RECORD_INDEX_PARTITION else DEFAULT_BLOCK_SIZE,
            file_info_entries={file_info.MIN_RECORD_KEY: (min(keys) if keys else "").encode(),
                               file_info.MAX_RECORD_KEY: (max(keys) if keys else "").encode(),
                               file_info.BLOOM_FILTER_TYPE_CODE: b"DYNAMIC_V0"},
            meta_blocks={file_info.BLOOM_FILTER_META_BLOCK: bloom.serialize().encode()})
        self.meta.write_atomic(f"{partition}/{name}", data)
        parsed = parse_base_file(name, len(data), partition)
        return MetadataBaseFile(name, parsed.file_id, parsed.instant_time, len(data), partition)

    def complete_metadata_instant(self, inflight: Instant, operation: str, stats: Iterable[WriteStat], *,
                                  compacted: bool = False) -> Instant:
        metadata = CommitMetadata(operation, extra_metadata={"schema": SCHEMA}, compacted=compacted)
        for stat in stats:
            metadata.add_write_stat(stat)
        return transitions.complete(self.meta, inflight, metadata.to_bytes(inflight.layout),
                                    metadata_table_updated=True)

    # -- updating ---------------------------------------------------------------------------------------
    def write_deltacommit(self, table: MetadataTable, instant_time: str, change: FilesChange,
                          data_timeline: Timeline | None = None,
                          others: Iterable[tuple[str, bytes, WriteStat]] = ()) -> None:
        """Step 6: the change as one HFile data block in a new log file of the latest slice, with a block per
        touched col-stats file group (when the table has column_stats) and ``others`` (path, bytes, stat: the
        record_index log files), committed as one deltacommit at ``instant_time``."""
        layout = table.layout
        stats_blocks = []
        if not change.is_empty() and column_stats.has_column_stats(load_table_properties(self.storage)):
            stats_blocks = self._column_stats_blocks(table, change, data_timeline or Timeline.load(self.storage),
                                                     instant_time)
        inflight = transitions.transition_to_inflight(
            self.meta, transitions.create_requested(self.meta, instant_time, Action.DELTACOMMIT, layout=layout))
        stats = []
        if not change.is_empty():
            base = table.latest_slice().base_file
            versions = [lf.version for lf in table.log_files if lf.instant_time == base.instant_time]
            stats.append(self._append_block(FILES_PARTITION, table.file_id, base.instant_time, versions,
                                            instant_time, change.records(), layout))
        stats += [self._append_block(COLUMN_STATS_PARTITION, *args, instant_time, records, layout)
                  for args, records in stats_blocks]
        for path, data, stat in others:
            self.meta.write_atomic(path, data)
            stats.append(stat)
        self.complete_metadata_instant(inflight, "UPSERT_PREPPED", stats)

    def _append_block(self, partition: str, file_id: str, base_instant: str, versions: list[int], instant_time: str,
                      records: list[tuple[str, dict | bytes]], layout: int) -> WriteStat:
        """A new log file of ``file_id``'s latest slice (based at ``base_instant``; ``versions``: its log files'
        versions) holding ``records`` as one HFile data block of ``instant_time``."""
        if layout == LAYOUT_2:
            name = log_file_name(instant_time, 1, file_id=file_id)
        else:
            name = log_file_name(base_instant, max(versions, default=0) + 1, file_id=file_id)
        block = log_format.hfile_data_block(records, SCHEMA, instant_time, full_index_keys=layout != LAYOUT_2)
        path = f"{partition}/{name}"
        self.meta.write_atomic(path, block)
        return WriteStat(file_id, path, partition, prev_commit=base_instant, num_writes=len(records),
                         num_update_writes=len(records), total_write_bytes=len(block), file_size_in_bytes=len(block))

    def remove_orphans(self, table: MetadataTable, data_timeline: Timeline) -> bool:
        """Step 3; True when anything was removed."""
        completed = _completed_stamps(self.storage, data_timeline.layout)
        earliest = data_timeline.earliest_instant_time()
        orphans = sorted({i.timestamp for i in table.timeline.filter(actions=[Action.DELTACOMMIT])
                          if _data_like(i.timestamp) and i.timestamp not in completed
                          and (earliest is None or i.timestamp >= earliest)})
        # A compaction completes as a commit of its instant time; its requested / inflight files stay.
        done = table.completed_times()
        compactions = sorted(i.timestamp for i in table.timeline.pending([Action.COMPACTION]) if i.timestamp not in done)
        if not orphans and not compactions:
            return False
        stats_part = column_stats.ColumnStatsPartition(table)
        # Their log files first: a crash in between leaves deltacommits that count not.
        logs = [*table.log_files, *stats_part.log_files, *record_index_writer.log_files(self.meta),
                *bloom_filters.log_files(table)]
        for lf in logs:
            if self._written_only_by(lf.path, lf.instant_time, set(orphans), table.layout):
                self.meta.delete(lf.path)
        for instant_time in orphans:
            transitions.delete_completed(self.meta, Instant(instant_time, Action.DELTACOMMIT, layout=table.layout))
            _log.info("Removed metadata-table deltacommit %s of %s: its data instant did not complete",
                      instant_time, self.storage.base_uri)
        for instant_time in compactions:
            for b in [*table.base_files, *stats_part.base_files]:
                if b.instant_time == instant_time:
                    self.meta.delete(b.path)
            for state in (State.INFLIGHT, State.REQUESTED):
                self.meta.delete(Instant(instant_time, Action.COMPACTION, state, layout=table.layout).path)
        return True

    def _written_only_by(self, path: str, named: str, instant_times: set[str], layout: int) -> bool:
        """Whether every block of the log file is of one of ``instant_times`` (versions 8 and 9 name it in the
        file)."""
        if layout == LAYOUT_2:
            return named in instant_times
        blocks = list(log_format.scan_blocks(self.meta.read_bytes(path), path))
        return bool(blocks) and all(getattr(b, "instant_time", None) in instant_times for b in blocks)

    # -- compaction -------------------------------------------------------------------------------------
    def compact_if_due(self, table: MetadataTable, data_timeline: Timeline, syncing: str) -> bool:
        """Step 5, before the deltacommit of data instant ``syncing`` is written; True when a compaction ran.

        Not while a data instant at or before the latest deltacommit is pending (``syncing`` included: a write
        that started before the latest one completed), as Java's validateCompactionScheduling: the base file
        must hold every instant before it."""
        base_time = table.latest_slice().base_file.instant_time
        base_done = max((i.completed_at for i in table.timeline.instants
                         if i.timestamp == base_time and i.is_completed), default=base_time)
        deltacommits = [i for i in table.timeline.filter(actions=[Action.DELTACOMMIT], states=[State.COMPLETED])
                        if i.completed_at > base_done]
        if len(deltacommits) < self.config.get(MetadataConfig.COMPACT_MAX_DELTA_COMMITS):
            return False
        latest = max(i.timestamp for i in deltacommits)
        pending = [i.timestamp for i in data_timeline.instants if not i.is_completed and i.timestamp <= latest]
        if pending:
            _log.info("Not compacting the metadata table of %s: data instants %s are pending",
                      self.storage.base_uri, ", ".join(pending))
            return False
        if table.layout != LAYOUT_2:
            instant_time = latest + COMPACTION_SUFFIX
        else:
            # Hudi 1.x: just before the pending data instant being recorded, so that instant stays out of the
            # base file's range (data archival stops before the latest compaction).
            instant_time = instant_time_of(parse_instant_time(syncing) - timedelta(milliseconds=1))
            # Cleans write no log files: one that completed later does not stop the compaction.
            if instant_time <= max(i.completed_at for i in table.timeline.instants if i.action != Action.CLEAN):
                return False  # no room before it: the next instant compacts
        self.compact(table, data_timeline, instant_time)
        return True

    def compact(self, table: MetadataTable, data_timeline: Timeline, instant_time: str) -> Instant:
        """Merge the latest slice of every file group (files, column_stats, bloom_filters, record_index) into a
        new base HFile at ``instant_time``: a ``compaction`` instant (HoodieCompactionPlan) that completes as a
        commit (``compacted``, operation COMPACT), as the v9 fixture's metadata compaction."""
        file_slice = table.latest_slice()
        listing = table.read(data_timeline, file_slice=file_slice)
        layout = table.layout
        properties = load_table_properties(self.storage)
        operations = [_compaction_operation(FILES_PARTITION, table.file_id, file_slice.base_file.instant_time,
                                            file_slice.base_file.name, file_slice.log_files)]
        # (partition, file id, base instant of the slice merged or "null", records of a base file named as given)
        groups: list[tuple[str, str, str, Callable[[str], list[tuple[str, dict | bytes]]]]] = []
        # Per-file partitions (a record per data file, sharded by key hash): their live records, re-sharded.
        per_file = [(column_stats.has_column_stats, column_stats.ColumnStatsPartition, column_stats.live_stats,
                     column_stats.stats_record, column_stats.file_group_id),
                    (bloom_filters.has_partition, bloom_filters.BloomFiltersPartition, bloom_filters.live_filters,
                     bloom_filters.filter_record, bloom_filters.file_group_id)]
        for present, partition_class, live, record, group_id in per_file:
            if not present(properties):
                continue
            part = partition_class(table)
            slices = part.latest_slices()
            merged = live(part.read(data_timeline, slices))
            by_group: dict[int, list[tuple[str, dict]]] = {i: [] for i in range(len(part.file_ids))}
            for key in sorted(merged):
                by_group[column_stats.shard_of(key, len(part.file_ids))].append((key, merged[key]))
            operations += [_compaction_operation(part.PARTITION, s.file_id, s.base_instant,
                                                 s.base_file.name if s.base_file else None, s.log_files)
                           for s in slices]
            prev = {s.file_id: s.base_file.instant_time if s.base_file else NULL_COMMIT for s in slices}
            groups += [(part.PARTITION, group_id(i), prev.get(group_id(i), NULL_COMMIT),
                        lambda name, pairs=pairs, record=record: [(k, record(k, v, name)) for k, v in pairs])
                       for i, pairs in by_group.items()]
        if has_record_index(properties):
            for file_id, s, locations in record_index_writer.compaction_slices(self.storage, table, data_timeline):
                base_instant = s.base_file.instant_time if s.base_file else min(
                    (lf.instant_time for lf in s.log_files), default="")
                operations.append(_compaction_operation(RECORD_INDEX_PARTITION, file_id, base_instant,
                                                        s.base_file.name if s.base_file else None, s.log_files))
                groups.append((RECORD_INDEX_PARTITION, file_id,
                               s.base_file.instant_time if s.base_file else NULL_COMMIT,
                               lambda name, locs=locations: record_index_writer.base_records(self.storage, locs, name)))
        plan = {"operations": operations, "extraMetadata": {}, "version": COMPACTION_PLAN_VERSION}
        requested = transitions.create_requested(self.meta, instant_time, Action.COMPACTION,
                                                 serialize(AvroModel.COMPACTION_PLAN, plan), layout=layout)
        inflight = transitions.transition_to_inflight(self.meta, requested)
        base = self._write_base_file(listing, instant_time, layout, first=False, file_id=table.file_id)
        # prevCommit: the base instant of the slice merged ("null" for a group without a base file), as Java's.
        stats = [WriteStat(table.file_id, base.path, FILES_PARTITION, prev_commit=file_slice.base_file.instant_time,
                           num_writes=len(listing.entries), num_inserts=len(listing.entries),
                           total_write_bytes=base.size, file_size_in_bytes=base.size)]
        for partition, file_id, prev_commit, records_named in groups:
            name = base_file_name(instant_time, file_id)
            records = records_named(name)
            written = self.write_base_hfile(partition, name, records, layout)
            stats.append(WriteStat(file_id, written.path, partition, prev_commit=prev_commit, num_writes=len(records),
                                   num_inserts=len(records), total_write_bytes=written.size,
                                   file_size_in_bytes=written.size))
        return self.complete_metadata_instant(inflight, "COMPACT", stats, compacted=True)

    # -- column_stats ------------------------------------------------------------------------------------------
    def column_stats_enabled(self, properties: dict[str, str]) -> bool:
        """hoodie.metadata.index.column.stats.enable (unset: whether hoodie.properties lists column_stats)."""
        wanted = self.config.get(MetadataConfig.COLUMN_STATS_ENABLE)
        return column_stats.has_column_stats(properties) if wanted is None else wanted

    def bootstrap_column_stats(self, data_timeline: Timeline, listing: FileListing | None = None,
                               exclude: str | None = None) -> bool:
        """Build column_stats from the footers of the base files the files partition lists: a deltacommit at
        its init instant writing, per file group, a log file with an empty delete block and a base HFile; then
        hoodie.table.metadata.partitions names it. False, with a warning, while other instants are pending."""
        init = self.partition_build_instant(COLUMN_STATS_PARTITION, data_timeline, column_stats.init_instant, exclude)
        if init is None:
            return False
        layout = data_timeline.layout
        listing = listing if listing is not None else MetadataTable(self.storage).read(data_timeline)
        count = self.config.get(MetadataConfig.COLUMN_STATS_FILE_GROUPS)
        shards = self._column_stats_records(listing.all_files(), {}, data_timeline, layout, count,
                                            data_timeline.committed())
        self.build_partition(COLUMN_STATS_PARTITION, init, layout,
                             [(column_stats.file_group_id(i), shards.get(i, [])) for i in range(count)])
        _log.info("Built column_stats of %s at %s: %d records", self.storage.base_uri, init,
                  sum(len(r) for r in shards.values()))
        return True

    def _column_stats_records(self, added: dict[str, dict[str, int]], deleted: dict[str, set[str]],
                              data_timeline: Timeline, layout: int, count: int, log_instants: Container[str],
                              ) -> dict[int, list[tuple[str, dict]]]:
        """(key, record) by col-stats file group index: footer statistics of the ``added`` base files, ranges of
        the records the ``added`` log files hold of ``log_instants``, tombstones of the ``deleted`` files (per
        partition path)."""
        wanted = self.config.get(MetadataConfig.COLUMN_STATS_COLUMNS)
        versioned = layout == LAYOUT_2
        by_key: dict[str, tuple[int, tuple[str, dict]]] = {}
        removed = {p: sorted(n for n in names if column_stats.is_indexed_file(n)) for p, names in deleted.items()}
        avro_schema = data_timeline.latest_schema()
        columns = column_stats.indexed_columns(avro_schema, wanted) if any(removed.values()) else []
        batches = [(p, [column_stats.tombstone(n, c) for n in names for c in columns]) for p, names in removed.items()]
        logs = {p: [n for n in files if column_stats.is_log_file(n)] for p, files in added.items()}
        batches += [(p, column_stats.base_file_stats(self.storage, p, [n for n in files if column_stats.is_indexed_file(
            n) and n not in logs[p]], wanted, versioned)) for p, files in added.items()]
        if any(logs.values()):
            schema = column_stats.table_arrow_schema(avro_schema)
            batches += [(p, column_stats.log_file_stats(self.storage, p, names, wanted, versioned, schema,
                                                        log_instants)) for p, names in logs.items() if names]
        for partition, stats in batches:
            for index, records in column_stats.shard_records(stats, partition, count).items():
                for key, record in records:
                    by_key[key] = (index, (key, record))
        out: dict[int, list[tuple[str, dict]]] = {}
        for index, pair in by_key.values():
            out.setdefault(index, []).append(pair)
        return out

    def _column_stats_blocks(self, table: MetadataTable, change: FilesChange, data_timeline: Timeline,
                             instant_time: str) -> list[tuple[tuple[str, str, list[int]], list[tuple[str, dict]]]]:
        """What the deltacommit of data instant ``instant_time`` appends to column_stats: per touched file group,
        (file id, slice base instant, log versions) and its records."""
        part = column_stats.ColumnStatsPartition(table)
        slices = {s.file_id: s for s in part.latest_slices()}
        count = len(part.file_ids) or self.config.get(MetadataConfig.COLUMN_STATS_FILE_GROUPS)
        out = []
        for index, records in sorted(self._column_stats_records(change.added, change.deleted, data_timeline,
                                                                table.layout, count, {instant_time}).items()):
            file_id = column_stats.file_group_id(index)
            base = slices[file_id].base_instant if file_id in slices else ""
            versions = [lf.version for lf in part.log_files if lf.file_id == file_id and lf.instant_time == base]
            out.append(((file_id, base, versions), records))
        return out

    # -- partitions hoodpy does not maintain, and removal -------------------------------------------------
    def drop_unmaintained_partitions(self, properties: dict[str, str], keep: set[str] = frozenset()) -> list[str]:
        """Step 2: drop every metadata partition but ``files``, ``column_stats`` while enabled, and ``keep``
        (its folder, and its name in hoodie.properties)."""
        keep = {FILES_PARTITION, *keep, *([COLUMN_STATS_PARTITION] if self.column_stats_enabled(properties) else [])}
        listed = listed_partitions(properties)
        others = [p for p in listed if p not in keep]
        if not others:
            return []
        built = MetadataConfig.TABLE_PARTITIONS.parse(properties.get(MetadataConfig.TABLE_PARTITIONS.key, ""))
        properties[MetadataConfig.TABLE_PARTITIONS.key] = ",".join(
            sorted({FILES_PARTITION} | {p for p in built if p in keep}))
        properties[MetadataConfig.TABLE_PARTITIONS_INFLIGHT.key] = ""
        save_table_properties(self.storage, properties)  # first: readers stop using them
        for partition in others:
            self.meta.delete_dir(partition)
        _log.warning("Dropped the metadata partitions %s of %s: this write maintains only %s, and they would be "
                     "stale after this instant", ", ".join(others), self.storage.base_uri, ", ".join(sorted(keep)))
        return others


def create_metadata_table(storage: Storage, config: HoodieConfig | None = None) -> None:
    """Build the metadata table now (Hudi's create_metadata_table); MetadataTableError when ``.hoodie/metadata``
    is not empty or instants are pending. The caller holds the table lock when writers may race."""
    if storage.list_files(METADATA_TABLE_FOLDER, recursive=True):
        raise MetadataTableError(storage.base_uri, f"Metadata directory ({storage.full_path(METADATA_TABLE_FOLDER)}) "
                                 "not empty: delete it first (delete_metadata_table)")
    timeline = Timeline.load(storage)
    pending = [i.timestamp for i in timeline.instants if not i.is_completed]
    if pending:
        raise MetadataTableError(storage.base_uri, f"instants {', '.join(pending)} are pending: finish or roll them "
                                 "back first (Hudi builds the metadata table only when nothing is in progress)")
    MetadataTableWriter(storage, config).bootstrap(timeline)


def delete_metadata_table(storage: Storage) -> bool:
    """Remove the metadata table (hoodie.properties first, then the folder); True when there was one."""
    return remove_stale_metadata_table(storage, reason="it was deleted on request")


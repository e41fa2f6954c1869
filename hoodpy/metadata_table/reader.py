"""Reading the ``files`` partition of the metadata table: the data table's partitions and their files, without
listing them.

What counts is Java's HoodieBackedTableMetadata read:

* the file slice: the newest base HFile of ``files-0000-0`` whose instant is completed on the metadata table's
  timeline (its initialisation deltacommit or a compaction), or older than its active timeline (archived, as
  Java's containsOrBeforeTimelineStarts), with its log files (table version 6: those named
  after the base instant; versions 8 and 9: those whose deltacommit completed at or after it and before any
  newer base file, Hudi 1.x's completion-time rule);
* a log block counts when its instant is completed on the metadata table's timeline (or archived) **and** is a completed
  instant of the data table (any action), or is older than the data table's active timeline (archived): the
  metadata table is written before the data instant completes, so a deltacommit whose data instant has not
  completed (a crash in between, or a write not yet visible) is left out (HoodieTableMetadataUtil
  .getValidInstantTimestamps). Rollback command blocks and corrupt blocks are handled as in data log files;
* records merge base first, then each counted block in log order (:func:`hoodpy.metadata_table.records.combine`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hoodpy.config.metadata import FILES_PARTITION, MetadataConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.errors import HFileFormatError, HoodieError, InvalidInstantError, MetadataTableError
from hoodpy.file_group.log_file import deleted_records, effective_blocks
from hoodpy.hfile import HFileReader, decode_record, parsed_schema
from hoodpy.metadata_table.layout import (
    FILES_FILE_ID, FILES_PREFIX, MetadataBaseFile, MetadataLogFile, metadata_storage, parse_base_file, parse_log_file,
)
from hoodpy.metadata_table.records import ALL_PARTITIONS_KEY, FileListing, entries_of, partition_key
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, State
from hoodpy.timeline.timeline import CommittedInstants, Timeline, layout_of

_log = logging.getLogger(__name__)
_READ_THREADS = 16


def has_files_partition(properties: dict[str, str] | None) -> bool:
    """Whether hoodie.properties says the table has a built ``files`` partition (readers then list through it)."""
    return FILES_PARTITION in MetadataConfig.TABLE_PARTITIONS.parse((properties or {}).get(
        MetadataConfig.TABLE_PARTITIONS.key, ""))


def block_records(block: log_format.LogBlock, keys: set[str] | None = None,
                  ) -> Iterator[tuple[str, bytes | None, dict[str, Any], str]]:
    """The records of a metadata-table log block, in key order: (key, None, {}, source) for each key a delete
    block removes; (key, value, writer schema, source) for each record of an HFile data block, of ``keys`` only
    when given; nothing from other blocks (metadata partitions hold HFile blocks only)."""
    if block.block_type == log_format.DELETE_BLOCK:
        source = f"delete block of instant {block.instant_time}"
        for deleted in deleted_records(block):
            yield deleted.record_key, None, {}, source
    elif block.block_type == log_format.HFILE_DATA_BLOCK:
        hfile = HFileReader(block.content, f"HFile data block of instant {block.instant_time}")
        schema = parsed_schema(block.header.get(log_format.SCHEMA) or hfile.schema or "")
        for key, value in hfile if keys is None else sorted(hfile.get_many(keys).items()):
            yield key, value, schema, hfile.source


def committed_metadata_instants(metadata_timeline: Timeline) -> CommittedInstants:
    """The metadata table's committed instants: completed on its active timeline, or older than it (archived)."""
    return CommittedInstants(frozenset(i.timestamp for i in metadata_timeline.instants if i.is_completed),
                             metadata_timeline.earliest_instant_time())


@dataclass(frozen=True)
class ValidInstants:
    """The instants whose log blocks count (see the module docstring). Picklable."""

    metadata_completed: CommittedInstants
    data_completed: frozenset[str]
    data_earliest: str | None

    @classmethod
    def of(cls, metadata_timeline: Timeline, data_timeline: Timeline) -> ValidInstants:
        return cls(committed_metadata_instants(metadata_timeline),
                   frozenset(i.timestamp for i in data_timeline.instants if i.is_completed),
                   data_timeline.earliest_instant_time())

    def __contains__(self, instant_time: object) -> bool:
        if instant_time not in self.metadata_completed:
            return False
        return instant_time in self.data_completed or (
            self.data_earliest is not None and isinstance(instant_time, str) and instant_time < self.data_earliest)


@dataclass
class FileSlice:
    """The metadata table's file slice of ``files-0000-0`` that a read merges."""

    base_file: MetadataBaseFile
    log_files: list[MetadataLogFile] = field(default_factory=list)


class MetadataTable:
    """A loaded snapshot of a table's metadata table: its timeline and the files of its ``files`` partition."""

    def __init__(self, data_storage: Storage):
        self.data_storage = data_storage
        self.storage = metadata_storage(data_storage)
        self.properties = load_table_properties(self.storage)
        if self.properties is None:
            raise MetadataTableError(data_storage.base_uri, "no .hoodie/metadata/.hoodie/hoodie.properties")
        self.timeline = Timeline.load(self.storage, layout_of(self.properties))
        listing = self.storage.list_files(FILES_PARTITION)
        names = [(f.path.rsplit("/", 1)[-1], f.size) for f in listing]
        # One file group, files-0000-0 since Hudi 0.13 (files-0000 before): whichever the table has.
        self.base_files = sorted((b for b in (parse_base_file(n, s) for n, s in names)
                                  if b is not None and b.file_id.startswith(FILES_PREFIX)), key=lambda b: b.instant_time)
        self.log_files = [lf for lf in (parse_log_file(n, s) for n, s in names)
                          if lf is not None and lf.file_id.startswith(FILES_PREFIX)]
        self.file_id = self.base_files[-1].file_id if self.base_files else FILES_FILE_ID

    @property
    def layout(self) -> int:
        return self.timeline.layout

    def latest_compaction_time(self) -> str | None:
        """The instant of the newest completed compaction (a base file holding every instant before it)."""
        return max((i.timestamp for i in self.timeline.filter(actions=[Action.COMMIT], states=[State.COMPLETED])),
                   default=None)

    def completed_times(self) -> CommittedInstants:
        """Instant times committed on the metadata table (``in`` only): completed, or archived."""
        return committed_metadata_instants(self.timeline)

    def latest_slice(self) -> FileSlice:
        """The newest file slice whose base file is committed (see the module docstring)."""
        completed = self.completed_times()
        bases = [b for b in self.base_files if b.instant_time in completed]
        if not bases:
            raise MetadataTableError(self.data_storage.base_uri,
                                     f"the files partition has no committed base file (files: "
                                     f"{[b.name for b in self.base_files]})")
        return self.slice_of(bases[-1], bases)

    def slice_of(self, base: MetadataBaseFile, committed_bases: list[MetadataBaseFile],
                 log_files: Iterable[MetadataLogFile] | None = None) -> FileSlice:
        """The slice of ``base`` among ``committed_bases`` of its file group; ``log_files``: the group's log
        files (default: those of the files partition)."""
        log_files = self.log_files if log_files is None else list(log_files)
        if self.layout != LAYOUT_2:
            logs = sorted((lf for lf in log_files if lf.instant_time == base.instant_time),
                          key=lambda lf: (lf.version, lf.token))
            return FileSlice(base, logs)
        # Versions 8 and 9: a log joins the newest slice whose base instant is at or before the completion time
        # of the deltacommit that wrote it.
        completion = {i.timestamp: i.completed_at for i in self.timeline.instants if i.state == State.COMPLETED}
        later = [b.instant_time for b in committed_bases if b.instant_time > base.instant_time]
        logs = []
        for lf in log_files:
            done = completion.get(lf.instant_time)
            if done is not None and done >= base.instant_time and not any(t <= done for t in later):
                logs.append((done, lf))
        return FileSlice(base, [lf for _, lf in sorted(logs, key=lambda x: (x[0], x[1].version, x[1].token))])

    def read(self, data_timeline: Timeline, partitions: Iterable[str] | None = None,
             file_slice: FileSlice | None = None) -> FileListing:
        """The merged listing as of ``data_timeline`` (only ``partitions``' records when given, plus the
        partition list)."""
        file_slice = file_slice or self.latest_slice()
        keys = None if partitions is None else {ALL_PARTITIONS_KEY, *(partition_key(p) for p in partitions)}
        listing = FileListing()
        base = file_slice.base_file
        paths = [base.path, *(lf.path for lf in file_slice.log_files)]
        try:
            # One request per file, all at once: on object storage the round trips dominate.
            with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(paths))) as pool:
                contents = list(pool.map(self.storage.read_bytes, paths))
            reader = HFileReader(contents[0], source=self.storage.full_path(base.path))
            schema = parsed_schema(reader.schema or "")
            pairs = reader if keys is None else sorted(reader.get_many(keys).items())
            for key, value in pairs:
                listing.merge(key, entries_of(decode_record(key, value, schema, reader.source)))
            valid = ValidInstants.of(self.timeline, data_timeline)
            files = [(self.storage.full_path(p), data) for p, data in zip(paths[1:], contents[1:], strict=True)]
            for block in effective_blocks(files, valid).blocks:
                self._apply(listing, block, keys)
        except (HFileFormatError, InvalidInstantError, OSError, HoodieError) as e:
            if isinstance(e, MetadataTableError):
                raise
            raise MetadataTableError(self.data_storage.base_uri, f"cannot read the files partition: {e}") from e
        return listing

    @staticmethod
    def _apply(listing: FileListing, block: log_format.LogBlock, keys: set[str] | None) -> None:
        for key, value, schema, source in block_records(block, keys):
            if value is None:
                listing.remove(key)
            else:
                listing.merge(key, entries_of(decode_record(key, value, schema, source)))


def before_latest_compaction(storage: Storage, instants: Iterable[Instant]) -> list[Instant]:
    """Of data instants to archive, those a metadata table lets go: the ones before its latest compaction
    (Hudi's HoodieTimelineArchiver), since its log blocks count only while their data instant is on the active
    timeline; all of them when the table has no metadata table."""
    instants = list(instants)
    if not has_files_partition(load_table_properties(storage)):
        return instants
    latest = MetadataTable(storage).latest_compaction_time()
    return [i for i in instants if latest is not None and i.timestamp < latest]


def read_file_listing(storage: Storage, data_timeline: Timeline, partitions: Iterable[str] | None = None,
                      ) -> FileListing:
    """The data table's file listing from its metadata table (MetadataTableError when it cannot be read)."""
    return MetadataTable(storage).read(data_timeline, partitions)

"""The ``record_index`` partition of the metadata table: record key -> (data partition, file group), Hudi's
record-level index (HoodieRecordIndexInfo records, type 5), as Java's HoodieBackedTableMetadataWriter keeps it.

Layout (checked on the Java fixture v9_txns_simple_meta):

* ``N`` file groups ``record-index-NNNN-0``; a key lives in file group ``abs(abs(h) % N)`` where ``h`` is Java's
  ``String.hashCode`` of the key (HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex). ``N`` is chosen once,
  when the partition is built (HoodieTableMetadataUtil.estimateFileGroupCount, 48 bytes per key);
* the record's key is the data record key; its ``recordIndexMetadata`` names the partition, the file id as the
  two signed 64-bit halves of its UUID plus its trailing ``-N`` (``fileIdEncoding`` 0; a file id that is no
  UUID is kept whole in ``fileId``, encoding 1) and ``instantTime``, the epoch milliseconds (UTC) of the
  instant that put the key in that file group;
* a deltacommit writes, per touched file group, one log file holding an HFile data block of the keys that
  arrived in (or moved to) a file group, and a delete block (partition path ``record_index``, ordering value 0)
  of the keys that left the table. Updates in place write nothing: the key's file group is unchanged.

Reads merge each file group's latest slice (base HFile, then the log blocks that count, as for ``files``):
a data block sets a key's location, a delete block removes the key. A lookup reads only the file groups its
keys hash to, and in them only the keys asked for: of the base HFile, the index and the data blocks those
keys fall in (range reads, :meth:`HFileReader.open`), not the whole file (at SF 1, 60 MB per shard); the
log files, small, whole, decoding only the keys asked for.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.config.metadata import RECORD_INDEX_PARTITION, MetadataConfig
from hoodpy.config.properties import load_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.errors import HFileFormatError, HoodieError, InvalidInstantError, MetadataTableError
from hoodpy.file_group.log_file import data_rows, deleted_records, effective_blocks
from hoodpy.file_group.log_writer import delete_block
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.hfile import HFileReader, decode_record, parsed_schema
from hoodpy.hfile.records import encode_value
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.metadata_table.key_hash import java_string_hash as java_string_hash  # re-exported
from hoodpy.metadata_table.key_hash import shard_of as shard_of  # re-exported
from hoodpy.metadata_table.key_hash import shards_of
from hoodpy.metadata_table.layout import (
    SOLO_COMMIT_TIMESTAMP_V6, MetadataBaseFile, MetadataLogFile, metadata_storage, parse_base_file, parse_log_file,
)
from hoodpy.metadata_table.reader import FileSlice, MetadataTable, ValidInstants, block_records
from hoodpy.metadata_table.records import SCHEMA
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant
from hoodpy.timeline.metadata import CommitMetadata
from hoodpy.timeline.timeline import Timeline

PARTITION = RECORD_INDEX_PARTITION
FILE_ID_PREFIX = "record-index-"
RECORD_INDEX = 5  # HoodieMetadataRecord.type
AVERAGE_RECORD_SIZE = 48  # HoodieTableMetadataUtil.RECORD_INDEX_AVERAGE_RECORD_SIZE
INIT_INSTANT_V8 = "00000000000000002"  # Hudi 1.x: files 000, column_stats 001, record_index 002 (v9 fixture)
INIT_SUFFIX_V6 = "011"  # table version 6: the partition after files (010) in HoodieTableMetadataUtil's order
UUID_ENCODING, RAW_ENCODING = 0, 1
MISSING_FILE_INDEX = -1  # HoodieTableMetadataUtil.RECORD_INDEX_MISSING_FILEINDEX_FALLBACK
# Data block size (uncompressed) of the partition's base HFiles. Java writes 1 MiB (hoodie.hfile.block.size's
# default); any size reads alike (Java, hudi-rs). A lookup inflates a whole block per key, so with 1 MiB a batch of
# 2,500 keys inflated every block of an SF 1 table (~770 MB): 64 KiB makes it follow the keys (~160 MB at most),
# for files ~25% larger (zlib compresses smaller blocks less) and a root index 16x longer (at SF 4, ~50,000
# entries over the shards). 16 KiB inflates a third as much again; at SF 0.25 it was faster for 2,500 keys but
# slower for 156 (a large table's keys per block): its root indexes, 4x longer again, are parsed in Python on
# every lookup and grow with the table.
HFILE_BLOCK_SIZE = 64 * 1024
_KEY_SCHEMA = pa.schema([pa.field(RECORD_KEY, pa.string())])
_READ_THREADS = 16


@dataclass(frozen=True)
class Location:
    """Where a record key lives: data partition path and file id (plus the instant that put it there)."""

    partition_path: str
    file_id: str
    instant_time: str | None = None


def has_partition(properties: Mapping[str, str] | None) -> bool:
    """Whether hoodie.properties lists a built record_index partition."""
    return PARTITION in MetadataConfig.TABLE_PARTITIONS.parse(
        (properties or {}).get(MetadataConfig.TABLE_PARTITIONS.key, ""))


# -- sharding and sizing ----------------------------------------------------------------------------------
def file_group_id(index: int) -> str:
    """``record-index-NNNN-0`` (HoodieTableMetadataUtil.getFileIDForFileGroup)."""
    return f"{FILE_ID_PREFIX}{index:04d}-0"


def file_group_count(record_count: int, min_count: int, max_count: int, growth_factor: float,
                     max_file_group_size: int) -> int:
    """HoodieTableMetadataUtil.estimateFileGroupCount for the record index (float growth, integer divisions)."""
    if min_count == max_count:
        return min_count
    expected = int(np.ceil(np.float32(record_count) * np.float32(growth_factor)))
    per_group = max_file_group_size // AVERAGE_RECORD_SIZE
    estimated = expected // per_group
    if estimated >= max_count:
        return max_count
    if estimated <= min_count:
        return min_count
    return max(1, estimated)


def init_instant(layout: int, latest_data_instant: str | None) -> str:
    """The metadata instant that builds the partition (see the module constants)."""
    if layout == LAYOUT_2:
        return INIT_INSTANT_V8
    return (latest_data_instant or SOLO_COMMIT_TIMESTAMP_V6) + INIT_SUFFIX_V6


# -- records ----------------------------------------------------------------------------------------------
def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def utc_instants(properties: Mapping[str, str] | None) -> bool:
    """Whether the table's instant times are UTC (hoodie.table.timeline.timezone; Java's default is LOCAL,
    hoodpy's tables say UTC)."""
    return (properties or {}).get(TableConfig.TIMELINE_TIMEZONE.key, "LOCAL").upper() == "UTC"


def epoch_millis(instant_time: str, utc: bool = True) -> int:
    """An instant time as epoch milliseconds in the table's timeline time zone: UTC, or the local one as Java
    reads a table without the key (the v9 fixture, written at UTC-6, holds 20260307162454799 as
    2026-03-07T22:24:54.799Z)."""
    stamp = datetime.strptime(instant_time[:14], "%Y%m%d%H%M%S")
    if utc:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return int(stamp.timestamp()) * 1000 + int(instant_time[14:17] or 0)


def instant_of_millis(millis: int, utc: bool = True) -> str:
    stamp = datetime.fromtimestamp(millis // 1000, timezone.utc if utc else None)
    return stamp.strftime("%Y%m%d%H%M%S") + f"{millis % 1000:03d}"


def index_info(partition_path: str, file_id: str, instant_time: str, utc: bool = True) -> dict[str, Any]:
    """The HoodieRecordIndexInfo of a key in ``file_id`` (HoodieMetadataPayload.createRecordIndexUpdate)."""
    stem, index = (file_id[:-2], 0) if file_id.endswith("-0") else (file_id, MISSING_FILE_INDEX)
    try:
        parsed = uuid.UUID(stem) if len(stem) == 36 else None
    except ValueError:
        parsed = None
    info: dict[str, Any] = {"partitionName": partition_path, "fileIdHighBits": None, "fileIdLowBits": None,
                            "fileIndex": None, "fileId": "", "instantTime": epoch_millis(instant_time, utc),
                            "fileIdEncoding": UUID_ENCODING, "position": None}
    if parsed is not None and str(parsed) == stem.lower():
        info.update(fileIdHighBits=_signed64(parsed.int >> 64), fileIdLowBits=_signed64(parsed.int & (2**64 - 1)),
                    fileIndex=index)
    else:
        info.update(fileId=file_id, fileIdEncoding=RAW_ENCODING)
    return info


def location_of(info: Mapping[str, Any], utc: bool = True) -> Location:
    """The location a HoodieRecordIndexInfo names (HoodieTableMetadataUtil.getLocationFromRecordIndexInfo)."""
    if info.get("fileIdEncoding", UUID_ENCODING) == UUID_ENCODING:
        value = ((info["fileIdHighBits"] & (2**64 - 1)) << 64) | (info["fileIdLowBits"] & (2**64 - 1))
        file_id = str(uuid.UUID(int=value))
        if info.get("fileIndex") is not None and info["fileIndex"] != MISSING_FILE_INDEX:
            file_id += f"-{info['fileIndex']}"
    else:
        file_id = info["fileId"]
    millis = info.get("instantTime")
    instant = None if millis is None else instant_of_millis(millis, utc)
    return Location(info.get("partitionName") or "", file_id, instant)


def index_record(key: str, location: Location, file_name: str | None = None, utc: bool = True) -> dict[str, Any]:
    """A HoodieMetadataRecord of type RECORD_INDEX."""
    return {
        "_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
        "_hoodie_partition_path": None, "_hoodie_file_name": file_name,
        "key": key, "type": RECORD_INDEX, "filesystemMetadata": None, "BloomFilterMetadata": None,
        "ColumnStatsMetadata": None,
        "recordIndexMetadata": index_info(location.partition_path, location.file_id, location.instant_time or "", utc),
        "SecondaryIndexMetadata": None,
    }


def encoded_records(locations: Mapping[str, Location], utc: bool = True, file_name: str | None = None,
                    ) -> list[tuple[str, bytes]]:
    """(key, HFile cell value) of the index records of ``locations``, sorted by key. A value does not hold its
    key (:func:`~hoodpy.hfile.records.encode_value`), so the keys of one location share one encoding: a
    table's keys take as many Avro encodings as it has file groups."""
    values: dict[Location, bytes] = {}
    out = []
    for key in sorted(locations):
        loc = locations[key]
        value = values.get(loc)
        if value is None:
            value = values[loc] = encode_value(index_record("", loc, file_name, utc), SCHEMA)
        out.append((key, value))
    return out


def data_block(locations: Mapping[str, Location], instant_time: str, layout: int, utc: bool = True) -> bytes:
    """An HFile data block setting ``locations`` (keys sorted, as HFiles require)."""
    records = encoded_records(locations, utc)
    return log_format.hfile_data_block(records, SCHEMA, instant_time, full_index_keys=layout != LAYOUT_2)


def removal_block(keys: Iterable[str], instant_time: str) -> bytes:
    """A delete block of ``keys``: what Java writes for the keys of deleted records (empty payloads)."""
    return delete_block(((k, PARTITION, ("long", 0)) for k in sorted(keys)), instant_time, SCHEMA)


@dataclass
class IndexChange:
    """What one data instant changes in the record index: keys set to a new location, keys removed."""

    upserts: dict[str, Location]
    deletes: set[str]

    def is_empty(self) -> bool:
        return not (self.upserts or self.deletes)

    def by_shard(self, count: int) -> dict[int, tuple[dict[str, Location], set[str]]]:
        out: dict[int, tuple[dict[str, Location], set[str]]] = {}
        for key, shard in zip(self.upserts, shards_of(list(self.upserts), count).tolist()):
            out.setdefault(shard, ({}, set()))[0][key] = self.upserts[key]
        deletes = list(self.deletes)
        for key, shard in zip(deletes, shards_of(deletes, count).tolist()):
            out.setdefault(shard, ({}, set()))[1].add(key)
        return out


# -- the keys of data files -------------------------------------------------------------------------------
def base_file_keys(storage: Storage, rel_path: str) -> set[str]:
    """The record keys a base file holds (its ``_hoodie_record_key`` column)."""
    return set(_base_key_column(storage, rel_path).to_pylist())


def _base_key_column(storage: Storage, rel_path: str) -> pa.ChunkedArray:
    with storage.fs.open_input_file(storage.full_path(rel_path)) as f:
        return pq.read_table(f, columns=[RECORD_KEY]).column(RECORD_KEY)


def base_key_change(storage: Storage, new_path: str, old_path: str | None) -> tuple[list[str], list[str]]:
    """(keys of the new base file its file group's previous base file lacks, keys of the previous one the new
    one lacks). Compared as Arrow columns: an update rewrites a file group whole, so both files hold nearly
    the same keys (at SF 1, 2,000 updates spread over a table rewrite nearly all of its 6M keys), and only the
    few that differ become Python strings."""
    new = _base_key_column(storage, new_path)
    if old_path is None:
        return new.drop_null().to_pylist(), []
    old = _base_key_column(storage, old_path)
    if len(new) >= len(old) and new.slice(0, len(old)).equals(old):
        # A merge keeps the stored rows in place and appends its inserts: updates alone change no key.
        return new.slice(len(old)).drop_null().to_pylist(), []
    arrived = pc.filter(new, pc.invert(pc.is_in(new, value_set=old.combine_chunks())))
    left = pc.filter(old, pc.invert(pc.is_in(old, value_set=new.combine_chunks())))
    return arrived.drop_null().to_pylist(), left.drop_null().to_pylist()


def _block_keys(blocks: Iterable[Any]) -> tuple[set[str], set[str]]:
    """(keys written, keys deleted) by data-log blocks in log order (a later write undoes a delete)."""
    written: set[str] = set()
    deleted: set[str] = set()
    for block in blocks:
        if block.block_type == log_format.DELETE_BLOCK:
            keys = {d.record_key for d in deleted_records(block)}
            written -= keys
            deleted |= keys
        elif block.block_type in (log_format.AVRO_DATA_BLOCK, log_format.PARQUET_DATA_BLOCK,
                                  log_format.HFILE_DATA_BLOCK):
            keys = set(data_rows(block, _KEY_SCHEMA).column(RECORD_KEY).to_pylist())
            written |= keys
            deleted -= keys
    return written, deleted


def log_file_keys(storage: Storage, rel_path: str, instant_time: str) -> tuple[set[str], set[str]]:
    """(keys written, keys deleted) by the blocks of ``instant_time`` in a data log file."""
    blocks = [b for b in log_format.scan_blocks(storage.read_bytes(rel_path), rel_path)
              if getattr(b, "block_type", None) is not None and b.instant_time == instant_time]
    return _block_keys(blocks)


def slice_keys(storage: Storage, base_path: str | None, log_paths: Iterable[str], committed: Any) -> set[str]:
    """The keys a data file slice holds: its base file's, then its committed log blocks' writes and deletes."""
    keys = base_file_keys(storage, base_path) if base_path else set()
    files = [(storage.full_path(p), storage.read_bytes(p)) for p in log_paths]
    if files:
        written, deleted = _block_keys(effective_blocks(files, committed).blocks)
        keys = (keys - deleted) | written
    return keys


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def change_of(storage: Storage, instant: Instant, data: bytes, listed: Mapping[str, Iterable[str]],
              lookup: RecordIndex | None, data_timeline: Timeline) -> IndexChange:
    """The record-index change of a commit, deltacommit or replacecommit (``data``: its completed metadata;
    ``listed``: partition -> file names the table listed before it). Keys of a new base file that its file
    group's previous base file did not hold arrive; keys a file group lost (deletes, and every key of a
    replaced file group) leave unless they arrived elsewhere in the same instant. Keys written to log files
    are set only where the index does not already place them there; keys in delete blocks leave."""
    if instant.action not in (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION):
        return IndexChange({}, set())
    metadata = CommitMetadata.from_bytes(data)
    arrived: dict[str, Location] = {}
    left: set[str] = set()
    log_written: dict[str, Location] = {}

    def latest_base(partition: str, file_id: str, instant_time: str | None = None) -> str | None:
        names = [n for n in listed.get(partition, ()) if (b := parse_base_file_name(n)) is not None
                 and b.file_id == file_id and (instant_time is None or b.instant_time == instant_time)]
        return max(names, key=lambda n: parse_base_file_name(n).instant_time, default=None)

    based: list[tuple[Location, str, str | None]] = []  # (location, new base file, its previous base file)
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if not stat.path:
                continue
            name = stat.path.rstrip("/").rsplit("/", 1)[-1]
            if (base := parse_base_file_name(name)) is not None:
                previous = latest_base(partition, base.file_id, stat.prev_commit) if stat.prev_commit else None
                based.append((Location(partition, base.file_id, instant.timestamp), stat.path,
                              _rel(partition, previous) if previous else None))
            elif (log := parse_log_file_name(name)) is not None:
                written, deleted = log_file_keys(storage, stat.path, instant.timestamp)
                loc = Location(partition, log.file_id, instant.timestamp)
                log_written.update((k, loc) for k in written)
                left |= deleted - written
    with ThreadPoolExecutor(max_workers=max(1, min(_READ_THREADS, len(based)))) as pool:  # pyarrow: off the GIL
        changes = list(pool.map(lambda b: base_key_change(storage, b[1], b[2]), based))
    for (loc, _, _), (new_keys, old_keys) in zip(based, changes):
        arrived.update((k, loc) for k in new_keys)
        left.update(old_keys)
    for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
        for file_id in file_ids:
            previous = latest_base(partition, file_id)
            if previous:
                left |= base_file_keys(storage, _rel(partition, previous))
    if log_written:
        known = lookup.lookup(log_written, data_timeline) if lookup is not None else {}
        for key, loc in log_written.items():
            now = known.get(key)
            if now is None or (now.partition_path, now.file_id) != (loc.partition_path, loc.file_id):
                arrived.setdefault(key, loc)
    return IndexChange(arrived, left - set(arrived) - set(log_written))


# -- reading ----------------------------------------------------------------------------------------------
@dataclass
class ReadCounts:
    """What lookups read: bytes of base HFiles (ranges) and of log files, and the files opened."""

    base_bytes: int = 0
    log_bytes: int = 0
    files: int = 0

    def add(self, other: ReadCounts) -> None:
        self.base_bytes += other.base_bytes
        self.log_bytes += other.log_bytes
        self.files += other.files


def _base_reader(storage: Storage, path: str, keys: set[str] | None, counts: ReadCounts,
                 ) -> tuple[HFileReader, Iterable[tuple[str, bytes]]]:
    """The base HFile's reader and its (key, value) pairs: every entry (the whole file read at once), or
    ``keys``' (only the blocks that can hold them read)."""
    full = storage.full_path(path)
    if keys is None:
        data = storage.read_bytes(path)
        counts.base_bytes += len(data)
        reader = HFileReader(data, source=full)
        return reader, reader
    with storage.fs.open_input_file(full) as f:
        reader = HFileReader.open(f, source=full)
        pairs = reader.get_many(keys).items()
    counts.base_bytes += reader.bytes_read
    return reader, pairs


def read_slice(storage: Storage, paths: list[str | None], keys: set[str] | None, valid: Any, utc: bool = True,
               counts: ReadCounts | None = None) -> dict[str, Location]:
    """The locations a record_index file slice holds (``paths``: base file or None, then log files in order;
    under the metadata table's ``storage``), of ``keys`` only when given; ``valid``: the instants whose blocks
    count; ``counts``, when given, adds what was read."""
    counts = counts if counts is not None else ReadCounts()
    if keys is not None and not keys:
        return {}
    contents = [None, *(storage.read_bytes(p) for p in paths[1:])]
    counts.log_bytes += sum(len(c) for c in contents[1:])
    counts.files += sum(p is not None for p in paths)
    out: dict[str, Location] = {}
    # Values do not hold their key (encoded_records): the keys of one location share one value, decoded once.
    decoded: dict[tuple[bytes, int], Location | None] = {}

    def decode(key: str, value: bytes, schema: dict[str, Any], source: str) -> Location | None:
        found = decoded.get((value, id(schema)), decoded)
        if found is decoded:
            info = decode_record(key, value, schema, source)["recordIndexMetadata"]
            found = decoded[(value, id(schema))] = None if info is None else location_of(info, utc)
        return found  # type: ignore[return-value]

    if paths[0] is not None:
        reader, pairs = _base_reader(storage, paths[0], keys, counts)
        schema = parsed_schema(reader.schema or SCHEMA)
        for key, value in pairs:
            if (location := decode(key, value, schema, reader.source)) is not None:
                out[key] = location
    files = [(storage.full_path(p), d) for p, d in zip(paths[1:], contents[1:], strict=True)]
    for block in effective_blocks(files, valid).blocks:
        for key, value, block_schema, source in block_records(block, keys):
            location = None if value is None else decode(key, value, block_schema, source)
            if location is None:
                out.pop(key, None)  # a delete block or an empty payload deletes the key
            else:
                out[key] = location
    return out


@dataclass
class _Group:
    file_id: str
    bases: list[MetadataBaseFile]
    logs: list[MetadataLogFile]


class RecordIndex:
    """A loaded snapshot of the record_index partition (its file groups and slices)."""

    def __init__(self, data_storage: Storage, table: MetadataTable | None = None):
        self.table = table or MetadataTable(data_storage)
        self.storage = metadata_storage(data_storage)
        self.data_storage = data_storage
        self.utc = utc_instants(load_table_properties(data_storage))
        self.counts = ReadCounts()  # what this snapshot's reads read, summed
        groups: dict[str, _Group] = {}
        for f in self.storage.list_files(PARTITION):
            name = f.path.rsplit("/", 1)[-1]
            if (b := parse_base_file(name, f.size, PARTITION)) is not None and b.file_id.startswith(FILE_ID_PREFIX):
                groups.setdefault(b.file_id, _Group(b.file_id, [], [])).bases.append(b)
            elif (lf := parse_log_file(name, f.size, PARTITION)) is not None and lf.file_id.startswith(FILE_ID_PREFIX):
                groups.setdefault(lf.file_id, _Group(lf.file_id, [], [])).logs.append(lf)
        self.groups = [groups[k] for k in sorted(groups)]  # shard i is the i-th file id
        for g in self.groups:
            g.bases.sort(key=lambda b: b.instant_time)
        if not self.groups:
            raise MetadataTableError(data_storage.base_uri, "the record_index partition has no file groups")

    @property
    def file_group_count(self) -> int:
        return len(self.groups)

    def latest_slice(self, group: _Group) -> FileSlice:
        """The group's newest slice with a committed base file; a group Java created empty has no base file
        until the first compaction (its ``base_file`` is then None): its committed log files alone."""
        completed = self.table.completed_times()
        bases = [b for b in group.bases if b.instant_time in completed]
        if bases:
            return self.table.slice_of(bases[-1], bases, group.logs)
        if self.table.layout == LAYOUT_2:
            done = {i.timestamp: i.completed_at for i in self.table.timeline.instants if i.is_completed}
            logs = sorted((lf for lf in group.logs if lf.instant_time in done),
                          key=lambda lf: (done[lf.instant_time], lf.version, lf.token))
        else:
            first = min((lf.instant_time for lf in group.logs), default=None)
            logs = sorted((lf for lf in group.logs if lf.instant_time == first), key=lambda lf: (lf.version, lf.token))
        return FileSlice(None, logs)  # type: ignore[arg-type]

    @staticmethod
    def paths(file_slice: FileSlice) -> list[str | None]:
        return [file_slice.base_file.path if file_slice.base_file else None, *(lf.path for lf in file_slice.log_files)]

    def _read_group(self, group: _Group, keys: set[str] | None, valid: ValidInstants,
                    counts: ReadCounts | None = None) -> dict[str, Location]:
        return read_slice(self.storage, self.paths(self.latest_slice(group)), keys, valid, self.utc, counts)

    def slice_paths(self) -> list[list[str | None]]:
        """Per shard, the paths (under ``.hoodie/metadata``) of its latest slice: base file (or None) first."""
        return [self.paths(self.latest_slice(group)) for group in self.groups]

    def _read(self, wanted: dict[int, set[str] | None], data_timeline: Timeline) -> dict[str, Location]:
        valid = ValidInstants.of(self.table.timeline, data_timeline)
        out: dict[str, Location] = {}
        try:
            with ThreadPoolExecutor(max_workers=max(1, min(_READ_THREADS, len(wanted)))) as pool:
                reads = [(self.groups[shard], keys, ReadCounts()) for shard, keys in wanted.items()]
                for part in pool.map(lambda read: self._read_group(*read[:2], valid, read[2]), reads):
                    out.update(part)
            for _, _, counts in reads:
                self.counts.add(counts)
        except (HFileFormatError, InvalidInstantError, OSError, HoodieError) as e:
            if isinstance(e, MetadataTableError):
                raise
            raise MetadataTableError(self.data_storage.base_uri, f"cannot read the record_index partition: {e}") from e
        return out

    def shard_keys(self, keys: Iterable[str]) -> dict[int, set[str]]:
        """``keys`` by the shard that holds them."""
        keys = list(keys)
        wanted: dict[int, set[str]] = {}
        for key, shard in zip(keys, shards_of(keys, self.file_group_count).tolist()):
            wanted.setdefault(shard, set()).add(key)
        return wanted

    def lookup(self, keys: Iterable[str], data_timeline: Timeline) -> dict[str, Location]:
        """The locations of those ``keys`` the index holds; only the shards holding them are read."""
        wanted: dict[int, set[str] | None] = dict(self.shard_keys(keys))
        return self._read(wanted, data_timeline) if wanted else {}

    def read_all(self, data_timeline: Timeline) -> dict[str, Location]:
        """Every key the index holds, with its location."""
        return self._read({i: None for i in range(self.file_group_count)}, data_timeline)

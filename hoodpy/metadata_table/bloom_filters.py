"""The metadata table's ``bloom_filters`` partition: the key bloom filter of every base file of the data table
(HoodieMetadataBloomFilter records, type 4), so that the bloom index checks keys against a file without opening
its parquet footer.

Layout (Java's BloomFiltersIndexer and HoodieMetadataPayload.createBloomFilterMetadataRecord, Hudi 1.1 source;
no Java sample carries the partition):

* file groups ``bloom-filters-0000-0`` .. (``hoodie.metadata.index.bloom.filter.file.group.count``, 4); a record
  goes to file group ``abs(abs(String.hashCode(key)) % count)``, as every metadata partition;
* key = ``b64(xxh64(partition)) + b64(md5(file name))``, the column_stats key without its column part
  (PartitionIndexID + FileIndexID; a non-partitioned table's partition is ``.``);
* value: ``type`` = the filter's type code, ``timestamp`` = the data instant that wrote the record,
  ``bloomFilter`` = the UTF-8 bytes of the filter's text serialization, which is what the parquet footer holds
  under ``org.apache.hudi.bloomfilter`` (byte for byte: hoodpy copies the footer's value), ``isDeleted`` false.
  Java writes the writer's configured filter type into ``type``; hoodpy writes the footer's own type code
  (``hoodie_bloom_filter_type_code``), which is what a reader needs to deserialize the bytes, and the same
  for every file hoodpy writes (``DYNAMIC_V0``);
* only base files get a record (a delta write stat's log files do not); a base file deleted by a clean or a
  rollback gets a tombstone: ``type`` ``""``, empty ``bloomFilter``, ``isDeleted`` true, ``timestamp`` the
  clean's instant. Files a replacecommit replaces keep their filter until the cleaner deletes them (as the
  files partition lists them until then). Merging keeps the newer record (combineBloomFilterMetadata).

The partition is built (from the footers of the base files the files partition lists) at
``00000000000000003`` in versions 8 and 9 (after files 000, column_stats 001 and record_index 002: hoodpy's
choice, each partition at its own instant) or at ``<latest data instant>011`` and the next free suffix in
version 6, like the other indexes. The metadata table's compaction gives each file group a new base HFile of its
live records (tombstones dropped), as for column_stats.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import fastavro
import pyarrow.parquet as pq

from hoodpy.config import HoodieConfig
from hoodpy.config.metadata import BLOOM_FILTERS_PARTITION, MetadataConfig
from hoodpy.errors import MetadataTableError
from hoodpy.metadata_table.column_stats import ColumnStatsPartition, shard_of, xxh64
from hoodpy.metadata_table.layout import SOLO_COMMIT_TIMESTAMP_V6, MetadataLogFile, log_file_name
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.records import NON_PARTITIONED_NAME, SCHEMA
from hoodpy.meta_fields import FOOTER_BLOOM_FILTER_KEY, FOOTER_BLOOM_TYPE_KEY
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import LAYOUT_2
from hoodpy.timeline.metadata import WriteStat
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)

PARTITION = BLOOM_FILTERS_PARTITION
FILE_ID_PREFIX = "bloom-filters-"
BLOOM_FILTER = 4  # MetadataPartitionType.BLOOM_FILTERS record type
INIT_INSTANT_V8 = "00000000000000003"
INIT_SUFFIX_V6 = "011"
# Java's BloomFilterTypeCode of a footer without hoodie_bloom_filter_type_code (files of Hudi before 0.6).
_LEGACY_TYPE = "SIMPLE"
_READ_THREADS = 8


def bloom_filter_key(partition_path: str, file_name: str) -> str:
    """The record key of a base file's filter (see the module docstring)."""
    partition_id = xxh64((partition_path or NON_PARTITIONED_NAME).encode("utf-8")).to_bytes(8, "big")
    return (base64.b64encode(partition_id).decode("ascii")
            + base64.b64encode(hashlib.md5(file_name.encode("utf-8")).digest()).decode("ascii"))


def file_group_id(index: int) -> str:
    return f"{FILE_ID_PREFIX}{index:04d}-0"


def init_instant(layout: int, latest_data_instant: str | None) -> str:
    if layout == LAYOUT_2:
        return INIT_INSTANT_V8
    return (latest_data_instant or SOLO_COMMIT_TIMESTAMP_V6) + INIT_SUFFIX_V6


def has_partition(properties: Mapping[str, str] | None) -> bool:
    """Whether hoodie.properties lists a built bloom_filters partition."""
    return PARTITION in MetadataConfig.TABLE_PARTITIONS.parse(
        (properties or {}).get(MetadataConfig.TABLE_PARTITIONS.key, ""))


def wanted(config: HoodieConfig, properties: Mapping[str, str] | None) -> bool:
    """hoodie.metadata.index.bloom.filter.enable; unset: whether the table has the partition."""
    enable = config.get(MetadataConfig.BLOOM_FILTER_ENABLE)
    return has_partition(properties) if enable is None else enable


# -- records ---------------------------------------------------------------------------------------------------
def filter_record(key: str, metadata: Mapping[str, Any], file_name: str | None = None) -> dict[str, Any]:
    """A HoodieMetadataRecord of type 4 holding ``metadata`` (a HoodieMetadataBloomFilter datum)."""
    return {
        "_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
        "_hoodie_partition_path": None, "_hoodie_file_name": file_name,
        "key": key, "type": BLOOM_FILTER, "filesystemMetadata": None, "BloomFilterMetadata": dict(metadata),
        "ColumnStatsMetadata": None, "recordIndexMetadata": None, "SecondaryIndexMetadata": None,
    }


def tombstone(instant_time: str) -> dict[str, Any]:
    return {"type": "", "timestamp": instant_time, "bloomFilter": b"", "isDeleted": True}


def footer_filter(storage: Storage, partition_path: str, name: str, instant_time: str) -> dict[str, Any] | None:
    """The HoodieMetadataBloomFilter of a base file, from its footer; None for a file without a filter (Java logs
    and skips those too)."""
    rel = f"{partition_path}/{name}" if partition_path else name
    with storage.fs.open_input_file(storage.full_path(rel)) as f:
        footer = pq.read_metadata(f).metadata or {}
    data = footer.get(FOOTER_BLOOM_FILTER_KEY.encode())
    if data is None:
        _log.warning("No bloom filter in the footer of %s: not in the bloom_filters partition", rel)
        return None
    type_code = footer.get(FOOTER_BLOOM_TYPE_KEY.encode())
    return {"type": type_code.decode() if type_code else _LEGACY_TYPE, "timestamp": instant_time,
            "bloomFilter": bytes(data), "isDeleted": False}


def has_filter(name: str) -> bool:
    """Base files carry a bloom filter in their footer; log files (which column_stats also indexes) do not."""
    return name.endswith(".parquet") and not name.startswith(".")


def file_records(storage: Storage, added: Mapping[str, Iterable[str]], deleted: Mapping[str, Iterable[str]],
                 instant_time: str) -> dict[str, dict[str, Any]]:
    """key -> HoodieMetadataRecord: the footer filters of the ``added`` base files and tombstones of the
    ``deleted`` ones (per partition path; log files are skipped), all stamped ``instant_time``."""
    out = {bloom_filter_key(p, n): filter_record(bloom_filter_key(p, n), tombstone(instant_time))
           for p, names in deleted.items() for n in names if has_filter(n)}
    work = [(p, n) for p, names in added.items() for n in names if has_filter(n)]
    with ThreadPoolExecutor(max_workers=_READ_THREADS) as pool:
        found = list(pool.map(lambda pn: footer_filter(storage, *pn, instant_time), work))
    for (partition, name), metadata in zip(work, found, strict=True):
        if metadata is not None:
            key = bloom_filter_key(partition, name)
            out[key] = filter_record(key, metadata)
    return out


def shard(records: Mapping[str, dict[str, Any]], count: int) -> dict[int, list[tuple[str, dict[str, Any]]]]:
    """(key, record) pairs by file group index, sorted by key."""
    out: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for key in sorted(records):
        out.setdefault(shard_of(key, count), []).append((key, records[key]))
    return out


# -- reading ---------------------------------------------------------------------------------------------------
class BloomFiltersPartition(ColumnStatsPartition):
    """The bloom_filters partition of a loaded metadata table: its file groups, latest slices and records (read
    as column_stats', merged by the newer record winning)."""

    PARTITION = PARTITION
    PREFIX = FILE_ID_PREFIX

    # ``read(data_timeline, keys=...)``: key -> newest HoodieMetadataBloomFilter (tombstones kept).
    @staticmethod
    def _merge_all(merged: dict[str, Mapping[str, Any]], pairs: Sequence[tuple[str, bytes]],
                   schema: dict[str, Any], source: str) -> None:
        for key, value in pairs:
            metadata = decode_filter(value, schema)
            if metadata is not None:
                merged[key] = metadata  # the newer record wins, a tombstone too


def decode_filter(value: bytes, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The HoodieMetadataBloomFilter of an encoded HoodieMetadataRecord (None for another type)."""
    record = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
    metadata = record.get("BloomFilterMetadata")
    return dict(metadata) if metadata is not None else None


def live_filters(merged: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {k: v for k, v in merged.items() if not v.get("isDeleted")}


def read_filters(storage: Storage, files: Iterable[tuple[str, str]], data_timeline: Timeline | None = None,
                 ) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(partition path, base file name) -> live HoodieMetadataBloomFilter of those ``files`` the partition
    holds (a file it lacks is missing from the answer: the caller falls back to its footer)."""
    by_key = {bloom_filter_key(p, n): (p, n) for p, n in files}
    if not by_key:
        return {}
    data_timeline = data_timeline or Timeline.load(storage)
    merged = BloomFiltersPartition(MetadataTable(storage)).read(data_timeline, keys=by_key)
    return {by_key[k]: v for k, v in live_filters(merged).items()}


def log_files(table: MetadataTable) -> list[MetadataLogFile]:
    return BloomFiltersPartition(table).log_files


# -- writing (``writer``: the MetadataTableWriter, whose commit protocol calls these) ---------------------------
def build(writer: Any, data_timeline: Timeline, exclude: str | None = None) -> bool:
    """Build the partition from the footers of the base files the files partition lists: per file group the log
    file of an empty delete block and a base HFile, in a deltacommit at the partition's init instant; False,
    with a warning, while data instants other than ``exclude`` are pending."""
    init = writer.partition_build_instant(PARTITION, data_timeline, init_instant, exclude)
    if init is None:
        return False
    listing = MetadataTable(writer.storage).read(data_timeline)
    latest = max((i.timestamp for i in data_timeline.instants if i.is_completed), default=init)
    records = file_records(writer.storage, listing.all_files(), {}, latest)
    count = writer.config.get(MetadataConfig.BLOOM_FILTER_FILE_GROUPS)
    shards = shard(records, count)
    writer.build_partition(PARTITION, init, data_timeline.layout,
                           [(file_group_id(i), shards.get(i, [])) for i in range(count)])
    _log.info("Built bloom_filters of %s at %s: %d filters in %d file groups", writer.storage.base_uri, init,
              len(records), count)
    return True


def deltacommit_logs(writer: Any, table: MetadataTable, instant_time: str, added: Mapping[str, Iterable[str]],
                     deleted: Mapping[str, Iterable[str]]) -> list[tuple[str, bytes, WriteStat]]:
    """(path, bytes, write stat) of each bloom_filters log file the data instant ``instant_time`` writes: one
    HFile data block per file group its added and deleted base files touch."""
    records = file_records(writer.storage, added, deleted, instant_time)
    if not records:
        return []
    part = BloomFiltersPartition(table)
    if not part.file_ids:
        raise MetadataTableError(writer.storage.base_uri, "the bloom_filters partition has no file groups")
    slices = {s.file_id: s for s in part.latest_slices()}
    out = []
    for index, pairs in sorted(shard(records, len(part.file_ids)).items()):
        file_id = part.file_ids[index]
        base_instant = slices[file_id].base_instant or instant_time
        if table.layout == LAYOUT_2:
            name = log_file_name(instant_time, 1, file_id=file_id)
        else:
            versions = [lf.version for lf in part.log_files
                        if lf.file_id == file_id and lf.instant_time == base_instant]
            name = log_file_name(base_instant, max(versions, default=0) + 1, file_id=file_id)
        block = log_format.hfile_data_block(pairs, SCHEMA, instant_time, full_index_keys=table.layout != LAYOUT_2)
        path = f"{PARTITION}/{name}"
        out.append((path, block, WriteStat(file_id, path, PARTITION, prev_commit=base_instant,
                                           num_writes=len(pairs), num_update_writes=len(pairs),
                                           total_write_bytes=len(block), file_size_in_bytes=len(block))))
    return out

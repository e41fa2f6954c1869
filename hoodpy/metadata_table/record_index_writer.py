"""Building and updating the ``record_index`` partition (:mod:`hoodpy.metadata_table.record_index`) inside the
metadata table's commit protocol (:mod:`hoodpy.metadata_table.writer` calls these):

* it is wanted when ``hoodie.metadata.record.index.enable`` is true or ``hoodie.index.type=RECORD_INDEX`` (Hudi
  turns the record index on for that index type too); unset, as the table has it;
* :func:`build`: from the keys of the table's latest file slices, at the partition's own instant
  (``00000000000000002`` in versions 8 and 9, ``<latest data instant>011`` in version 6), with Hudi's file
  group count; not while other data instants are pending (as the files partition);
* :func:`deltacommit_logs`: per data instant, one log file per file group it touches, written in the same
  metadata deltacommit as the files partition's log file;
* :func:`compaction_slices`: what the metadata table's compaction merges into a new base HFile per file group
  (every group, an empty one too, as the v9 fixture's compaction shows);
* a rollback or restore of instants recorded in log blocks needs nothing of its own: the metadata
  deltacommits of the instants it takes away are removed with their log files (the writer's step 3). One that
  takes away an instant a base file holds (the build's or a compaction's) rebuilds the partition after it
  (:func:`covered_by_base`).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.config import HoodieConfig
from hoodpy.config.index import RECORD_INDEX, IndexConfig
from hoodpy.config.metadata import MetadataConfig
from hoodpy.errors import MetadataTableError
from hoodpy.config.properties import load_table_properties
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.metadata_table import record_index as ri
from hoodpy.metadata_table.layout import MetadataLogFile, log_file_name, parse_log_file
from hoodpy.metadata_table.reader import FileSlice, MetadataTable, ValidInstants
from hoodpy.metadata_table.records import FileListing
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, Instant
from hoodpy.timeline.metadata import WriteStat
from hoodpy.timeline.timeline import Timeline

_log = logging.getLogger(__name__)


def wanted(config: HoodieConfig, properties: dict[str, str]) -> bool:
    """Whether this write keeps a record_index partition (see the module docstring)."""
    if config.get(IndexConfig.TYPE) == RECORD_INDEX:
        return True
    enable = config.get(MetadataConfig.RECORD_INDEX_ENABLE)
    return ri.has_partition(properties) if enable is None else enable


def log_files(meta: Storage) -> list[MetadataLogFile]:
    """Every log file of the record_index partition (``meta``: the metadata table's storage)."""
    out = []
    for f in meta.list_files(ri.PARTITION):
        lf = parse_log_file(f.path.rsplit("/", 1)[-1], f.size, ri.PARTITION)
        if lf is not None and lf.file_id.startswith(ri.FILE_ID_PREFIX):
            out.append(lf)
    return out


def table_keys(storage: Storage, data_timeline: Timeline) -> dict[str, ri.Location]:
    """Every key of the table's latest file slices, located at its file group (Java's
    readRecordKeysFromFileSlices: the slice's base instant as the key's instant)."""
    keys, slice_of, locations = _table_key_columns(storage, data_timeline)
    return dict(zip(keys.to_pylist(), (locations[i] for i in slice_of)))


def _table_key_columns(storage: Storage, data_timeline: Timeline) -> tuple[pa.Array, np.ndarray, list[ri.Location]]:
    """Every key of the latest file slices as one column, per key the index of its slice's location, and the
    locations (:func:`table_keys` as a dict). The build keeps them as columns: a table's keys as Python objects
    do not fit a driver (24M keys took 22 GB as a dict)."""
    committed = data_timeline.committed()
    keys, slices, locations = [], [], []
    for s in FileSystemView.load(storage, data_timeline).latest_file_slices():
        held = ri.slice_keys(storage, s.base_file.path if s.base_file else None, [lf.path for lf in s.log_files],
                             committed)
        keys.append(pa.array(held, pa.string()))
        slices.append(np.full(len(held), len(locations), dtype=np.int32))
        locations.append(ri.Location(s.partition_path, s.file_id, s.base_instant_time))
    if not keys:
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int32), []
    return pa.concat_arrays(keys), np.concatenate(slices), locations


def build(writer: Any, data_timeline: Timeline, exclude: str | None = None) -> bool:
    """Build the record_index partition (``writer``: the MetadataTableWriter); False, with a warning, while
    data instants other than ``exclude`` are pending. One shard's records are held at a time."""
    init = writer.partition_build_instant(ri.PARTITION, data_timeline, ri.init_instant, exclude)
    if init is None:
        return False
    keys, slice_of, locations = _table_key_columns(writer.storage, data_timeline)
    unique = pc.count_distinct(keys).as_py() if len(keys) else 0
    config = writer.config
    count = ri.file_group_count(unique, config.get(MetadataConfig.RECORD_INDEX_MIN_FILE_GROUP_COUNT),
                                config.get(MetadataConfig.RECORD_INDEX_MAX_FILE_GROUP_COUNT),
                                config.get(MetadataConfig.RECORD_INDEX_GROWTH_FACTOR),
                                config.get(MetadataConfig.RECORD_INDEX_MAX_FILE_GROUP_SIZE))
    shard_of = ri.shards_of(keys, count)
    utc = ri.utc_instants(load_table_properties(writer.storage))

    def shard_records(shard: int) -> list[tuple[str, bytes]]:
        mask = shard_of == shard
        # Slice order, as table_keys: a key two slices hold (a broken table) keeps the later one's location.
        located = dict(zip(keys.filter(pa.array(mask)).to_pylist(), (locations[i] for i in slice_of[mask])))
        return ri.encoded_records(located, utc)

    file_ids = [ri.file_group_id(i) for i in range(count)]
    writer.build_partition(ri.PARTITION, init, data_timeline.layout,
                           ((file_id, shard_records(i)) for i, file_id in enumerate(file_ids)), file_ids=file_ids)
    _log.info("Built the record index of %s at %s: %d keys in %d file groups", writer.storage.base_uri, init,
              unique, count)
    return True


def covered_by_base(storage: Storage, rolled_back: list[str]) -> bool:
    """Whether any of the ``rolled_back`` data instants may be held by a record_index base file: one before the
    completion of the newest base file's instant (the build or a compaction). The write that completes while
    the partition is built counts too, though its keys are in log blocks: rebuilding then is only redundant."""
    if not rolled_back:
        return False
    try:
        index = ri.RecordIndex(storage)
    except MetadataTableError:
        return False
    done = {i.timestamp: i.completed_at for i in index.table.timeline.instants if i.is_completed}
    bases = [b.instant_time for g in index.groups for b in g.bases if b.instant_time in done]
    if not bases:
        return False  # Java's empty file groups: every key lives in log blocks
    newest = max(bases)
    cover = max(newest, done[newest] or newest)
    return any(t < cover for t in rolled_back)


def deltacommit_logs(writer: Any, table: MetadataTable, inflight: Instant, data: bytes, data_timeline: Timeline,
                     current: FileListing) -> list[tuple[str, bytes, WriteStat]]:
    """(path, bytes, write stat) of each record_index log file the data instant ``inflight`` writes."""
    index = ri.RecordIndex(writer.storage, table)
    change = ri.change_of(writer.storage, inflight, data, current.all_files(), index, data_timeline)
    out = []
    for shard, (upserts, deletes) in sorted(change.by_shard(index.file_group_count).items()):
        group = index.groups[shard]
        file_slice = index.latest_slice(group)
        # A slice of logs only (a group Java created empty) is named after its logs' instant in version 6.
        base_instant = (file_slice.base_file.instant_time if file_slice.base_file is not None
                        else min((lf.instant_time for lf in file_slice.log_files), default=inflight.timestamp))
        if table.layout == LAYOUT_2:
            name = log_file_name(inflight.timestamp, 1, file_id=group.file_id)
        else:
            versions = [lf.version for lf in group.logs if lf.instant_time == base_instant]
            name = log_file_name(base_instant, max(versions, default=0) + 1, file_id=group.file_id)
        content = b""
        if upserts:
            content += ri.data_block(upserts, inflight.timestamp, table.layout, index.utc)
        if deletes:
            content += ri.removal_block(deletes, inflight.timestamp)
        path = f"{ri.PARTITION}/{name}"
        out.append((path, content, WriteStat(
            group.file_id, path, ri.PARTITION, prev_commit=base_instant, num_writes=len(upserts) + len(deletes),
            num_inserts=len(upserts), num_deletes=len(deletes), total_write_bytes=len(content),
            file_size_in_bytes=len(content))))
    return out


def compaction_slices(storage: Storage, table: MetadataTable, data_timeline: Timeline,
                      ) -> list[tuple[str, FileSlice, dict[str, ri.Location]]]:
    """Per record_index file group: its file id, the latest slice a compaction merges and the merged locations
    of that slice (``storage``: the data table's)."""
    index = ri.RecordIndex(storage, table)
    valid = ValidInstants.of(table.timeline, data_timeline)
    out = []
    for group in index.groups:
        file_slice = index.latest_slice(group)
        out.append((group.file_id, file_slice, ri.read_slice(index.storage, index.paths(file_slice), None, valid,
                                                             index.utc)))
    return out


def base_records(storage: Storage, locations: dict[str, ri.Location], file_name: str) -> list[tuple[str, bytes]]:
    """(key, encoded record) of a record_index base HFile named ``file_name`` holding ``locations``
    (``storage``: the data table's; its timeline time zone encodes the instants)."""
    return ri.encoded_records(locations, ri.utc_instants(load_table_properties(storage)), file_name)

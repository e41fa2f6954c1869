"""Metadata-table keys (Hudi's HoodieMetadataConfig and the metadata entries of hoodie.properties).

hoodpy maintains the metadata table's ``files`` partition, and its ``column_stats``, ``bloom_filters`` and
``record_index`` partitions on request (:mod:`hoodpy.metadata_table`): a write with
``hoodie.metadata.enable=true`` builds it, every instant hoodpy completes updates it, and readers and writers
list files through it. A write with ``hoodie.metadata.enable=false`` removes it (Java Hudi's
``HoodieTable.maybeDeleteMetadataTable``); without the key a table keeps what it has.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_csv, parse_float, parse_int

METADATA_TABLE_FOLDER = ".hoodie/metadata"
FILES_PARTITION = "files"  # the metadata partition hoodpy always maintains
COLUMN_STATS_PARTITION = "column_stats"  # maintained when hoodie.metadata.index.column.stats.enable is true
RECORD_INDEX_PARTITION = "record_index"  # maintained when hoodie.metadata.record.index.enable is on
BLOOM_FILTERS_PARTITION = "bloom_filters"  # maintained when hoodie.metadata.index.bloom.filter.enable is on


def _at_least_one(value: int) -> int:
    if value < 1:
        raise ValueError("expected a positive integer")
    return value


class MetadataConfig:
    ENABLE = ConfigKey(
        "hoodie.metadata.enable", None, parse_bool,
        doc="true: build the metadata table (its files partition) if the table has none, and keep it in step "
        "with every instant hoodpy completes; reads and writes then list files through it. false: remove the "
        "metadata table (folder and hoodie.table.metadata.partitions) with the next instant hoodpy completes. "
        "Unset: as the table has it (hoodie.properties lists files or not; a wanted record index or "
        "hoodie.metadata.index.column.stats.enable=true turns it on). column_stats is kept while "
        "hoodie.metadata.index.column.stats.enable is not false, record_index while "
        "hoodie.metadata.record.index.enable (or hoodie.index.type=RECORD_INDEX) wants it, bloom_filters while "
        "hoodie.metadata.index.bloom.filter.enable is not false; other metadata partitions (partition_stats, "
        "...) are not maintained: hoodpy drops them when it updates the table. With "
        "false, the column_stats and record_index options are ignored (a warning says so).",
    )
    COLUMN_STATS_ENABLE = ConfigKey(
        "hoodie.metadata.index.column.stats.enable", None, parse_bool,
        doc="true: keep the metadata table's column_stats partition: min / max / null count per column of every "
        "base file, built when enabled on a table that has none and updated by every instant; queries with "
        "filters then skip files from it without opening their parquet footers. false: the partition is dropped "
        "with the next instant hoodpy completes. Unset: as the table has it (Hudi's default, false, for a table "
        "without one).",
    )
    COLUMN_STATS_COLUMNS = ConfigKey(
        "hoodie.metadata.index.column.stats.column.list", (), parse_csv,
        doc="The columns column_stats indexes (comma-separated); empty: _hoodie_commit_time, "
        "_hoodie_partition_path, _hoodie_record_key and every top-level column of a primitive type.",
    )
    COLUMN_STATS_FILE_GROUPS = ConfigKey(
        "hoodie.metadata.index.column.stats.file.group.count", 2, lambda v: _at_least_one(parse_int(v)),
        doc="File groups of the column_stats partition when it is built (an existing partition keeps its count).",
    )
    COMPACT_MAX_DELTA_COMMITS = ConfigKey(
        "hoodie.metadata.compact.max.delta.commits", 10, lambda v: _at_least_one(parse_int(v)),
        doc="Compact the metadata table (its log blocks into a new HFile base file) once this many "
        "deltacommits follow its latest base file.",
    )
    CLEANER_COMMITS_RETAINED = ConfigKey(
        "hoodie.metadata.cleaner.commits.retained", 3, lambda v: _at_least_one(parse_int(v)),
        doc="Metadata-table file slices kept for its latest this many commits (Hudi's KEEP_LATEST_COMMITS on the "
        "metadata table): after a compaction, the older slices of every file group are deleted once no retained "
        "commit reads them, by a clean instant of the metadata table, once three instants completed after its "
        "latest compaction (Java's rule).",
    )
    KEEP_MIN_COMMITS = ConfigKey(
        "hoodie.metadata.keep.min.commits", 20, parse_int,
        doc="Archival of the metadata table's timeline trims it down to the larger of this and "
        "hoodie.keep.min.commits instants (Java's createMetadataWriteConfig).",
    )
    KEEP_MAX_COMMITS = ConfigKey(
        "hoodie.metadata.keep.max.commits", 30, parse_int,
        doc="Archival of the metadata table's timeline starts once it holds more than the larger of this and "
        "hoodie.keep.max.commits instants.",
    )
    TABLE_PARTITIONS = ConfigKey(
        "hoodie.table.metadata.partitions", (), parse_csv,
        doc="hoodie.properties: the metadata table's built partitions (hoodpy writes files, column_stats, "
        "record_index); emptied when the metadata table is removed.",
    )
    TABLE_PARTITIONS_INFLIGHT = ConfigKey(
        "hoodie.table.metadata.partitions.inflight", (), parse_csv,
        doc="hoodie.properties: metadata partitions being built; emptied when the metadata table is removed.",
    )
    BLOOM_FILTER_ENABLE = ConfigKey(
        "hoodie.metadata.index.bloom.filter.enable", None, parse_bool,
        doc="true: keep the metadata table's bloom_filters partition: the footer bloom filter of every base file, "
        "built from the footers when enabled on a table that has none and updated by every instant (a cleaned or "
        "rolled-back file gets a tombstone); the bloom index reads filters from it with "
        "hoodie.bloom.index.use.metadata=true. false: the partition is dropped with the next instant hoodpy "
        "completes. Unset: as the table has it (Hudi's default, false, for a table without one).",
    )
    BLOOM_FILTER_FILE_GROUPS = ConfigKey(
        "hoodie.metadata.index.bloom.filter.file.group.count", 4, lambda v: _at_least_one(parse_int(v)),
        doc="File groups of the bloom_filters partition when it is built (an existing partition keeps its count).",
    )
    RECORD_INDEX_ENABLE = ConfigKey(
        "hoodie.metadata.record.index.enable", None, parse_bool,
        doc="true: build and maintain the record_index partition of the metadata table (record key -> partition "
        "and file group, Hudi's record-level index; hoodie.index.type=RECORD_INDEX turns it on too and looks "
        "keys up in it). false: drop the partition with the next instant hoodpy completes. Unset: as the table "
        "has it (so that table services and writes that do not name it keep it).",
    )
    RECORD_INDEX_MIN_FILE_GROUP_COUNT = ConfigKey(
        "hoodie.metadata.record.index.min.filegroup.count", 10, lambda v: _at_least_one(parse_int(v)),
        doc="Fewest file groups (shards) of the record_index partition when it is built.",
    )
    RECORD_INDEX_MAX_FILE_GROUP_COUNT = ConfigKey(
        "hoodie.metadata.record.index.max.filegroup.count", 10000, lambda v: _at_least_one(parse_int(v)),
        doc="Most file groups (shards) of the record_index partition when it is built.",
    )
    RECORD_INDEX_MAX_FILE_GROUP_SIZE = ConfigKey(
        "hoodie.metadata.record.index.max.filegroup.size", 1024 * 1024 * 1024, lambda v: _at_least_one(parse_int(v)),
        doc="Bytes a record_index file group may grow to: with 48 bytes per key, how many keys a shard takes "
        "when the partition is sized at build time.",
    )
    RECORD_INDEX_GROWTH_FACTOR = ConfigKey(
        "hoodie.metadata.record.index.growth.factor", 2.0, parse_float,
        doc="The record_index partition is sized at build time for this many times the keys the table holds; "
        "the file group count never changes afterwards.",
    )

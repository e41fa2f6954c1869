"""Metadata-table keys (Hudi's HoodieMetadataConfig and the metadata entries of hoodie.properties).

hoodpy maintains the metadata table's ``files`` partition (:mod:`hoodpy.metadata_table`): a write with
``hoodie.metadata.enable=true`` builds it, every instant hoodpy completes updates it, and readers and writers
list files through it. A write with ``hoodie.metadata.enable=false`` removes it (Java Hudi's
``HoodieTable.maybeDeleteMetadataTable``); without the key a table keeps what it has.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_csv, parse_int

METADATA_TABLE_FOLDER = ".hoodie/metadata"
FILES_PARTITION = "files"  # the one metadata partition hoodpy maintains


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
        "Unset: as the table has it (hoodie.properties lists files or not). Other metadata partitions "
        "(column_stats, record_index, ...) are not maintained: hoodpy drops them when it updates the table.",
    )
    COMPACT_MAX_DELTA_COMMITS = ConfigKey(
        "hoodie.metadata.compact.max.delta.commits", 10, lambda v: _at_least_one(parse_int(v)),
        doc="Compact the metadata table (its log blocks into a new HFile base file) once this many "
        "deltacommits follow its latest base file.",
    )
    TABLE_PARTITIONS = ConfigKey(
        "hoodie.table.metadata.partitions", (), parse_csv,
        doc="hoodie.properties: the metadata table's built partitions (hoodpy writes files); emptied when the "
        "metadata table is removed.",
    )
    TABLE_PARTITIONS_INFLIGHT = ConfigKey(
        "hoodie.table.metadata.partitions.inflight", (), parse_csv,
        doc="hoodie.properties: metadata partitions being built; emptied when the metadata table is removed.",
    )

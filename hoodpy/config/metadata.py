"""Metadata-table keys (Hudi's HoodieMetadataConfig and the metadata entries of hoodie.properties).

hoodpy does not maintain a metadata table (``.hoodie/metadata``) yet: it lists files, and every instant it
completes removes a metadata table another writer left, which would be stale from then on
(:mod:`hoodpy.timeline.metadata_table`), as Java Hudi does for a writer that runs with the metadata table
disabled.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_csv

METADATA_TABLE_FOLDER = ".hoodie/metadata"


class MetadataConfig:
    ENABLE = ConfigKey(
        "hoodie.metadata.enable", False, parse_bool,
        doc="false: what hoodpy does. true is not honoured yet (hoodpy warns): hoodpy lists files, and its "
        "writes still remove a metadata table another writer left, since they do not update it.",
    )
    TABLE_PARTITIONS = ConfigKey(
        "hoodie.table.metadata.partitions", (), parse_csv,
        doc="hoodie.properties: the metadata table's built partitions; a hoodpy write clears it when it "
        "removes the metadata table.",
    )
    TABLE_PARTITIONS_INFLIGHT = ConfigKey(
        "hoodie.table.metadata.partitions.inflight", (), parse_csv,
        doc="hoodie.properties: metadata partitions being built; cleared with the metadata table.",
    )

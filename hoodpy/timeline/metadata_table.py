"""A metadata table that an instant does not bring in step is removed before the instant completes.

Writers keep ``.hoodie/metadata`` (the metadata table: file listings, column stats, record index) in step with
every instant they complete, and readers that use it list files through it. hoodpy does so through
:func:`hoodpy.metadata_table.writer.complete_instant` while ``hoodie.metadata.enable`` is on (or the table has
one); with it off, and for any instant completed without that step, the metadata table would be stale once the
instant is visible: readers using it would miss the instant's files. :func:`remove_stale_metadata_table` then
runs before the completed instant is published, under the writer's lock when there is one, as Java Hudi's
``HoodieTable.maybeDeleteMetadataTable`` runs while an action writes its table metadata when
``hoodie.metadata.enable=false``.

Order. Java deletes the folder first and then sets ``hoodie.table.metadata.partitions`` to empty. hoodpy
clears the properties first (one atomic rewrite of hoodie.properties, the checksum unchanged: it covers
only the table name) and deletes the folder second. Readers decide from the properties whether to read the
metadata table, so from the rewrite on no reader opens the folder; a crash before the folder is gone leaves
a folder nobody reads, and the next instant hoodpy completes finishes the removal (it removes the folder
whenever it exists, also with empty properties). The other order could leave properties naming a
half-deleted metadata table that readers would open.
"""

from __future__ import annotations

import logging

from hoodpy.config.metadata import METADATA_TABLE_FOLDER, MetadataConfig
from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.config.table import TableConfig
from hoodpy.storage import Storage

_log = logging.getLogger(__name__)

_PARTITION_KEYS = (MetadataConfig.TABLE_PARTITIONS.key, MetadataConfig.TABLE_PARTITIONS_INFLIGHT.key)


def listed_partitions(properties: dict[str, str]) -> list[str]:
    """The metadata partitions hoodie.properties names, built or being built."""
    return [p for key in _PARTITION_KEYS for p in properties.get(key, "").split(",") if p.strip()]


def remove_stale_metadata_table(storage: Storage, reason: str = "hoodie.metadata.enable is off for this write, "
                                "and the metadata table would be stale after it") -> bool:
    """Clear the metadata partitions in hoodie.properties, then delete ``.hoodie/metadata``; True when there
    was anything to remove. Idempotent: after a crash, running it again finishes the removal."""
    properties = load_table_properties(storage)
    if properties is None:
        return False
    partitions = listed_partitions(properties)
    folder = storage.exists(METADATA_TABLE_FOLDER)
    if not partitions and not folder:
        return False
    name = properties.get(TableConfig.NAME.key, storage.base_uri)
    if partitions:
        # Keys kept, emptied: what Java writes when it drops the metadata table.
        for key in _PARTITION_KEYS:
            if key in properties:
                properties[key] = ""
        save_table_properties(storage, properties)
    storage.delete_dir(METADATA_TABLE_FOLDER)
    _log.warning(
        "Removed the metadata table of table %s (%s, partitions: %s): %s. Readers list files instead; a write "
        "with hoodie.metadata.enable=true builds it again.", name, storage.full_path(METADATA_TABLE_FOLDER),
        ",".join(partitions) or "none listed", reason)
    return True

"""The index a write uses, picked from config; above the implementations so that they and the protocol in
:mod:`hoodpy.index.base` do not import each other."""

from __future__ import annotations

from hoodpy.config import HoodieConfig
from hoodpy.config.index import BLOOM, GLOBAL_BLOOM, RECORD_INDEX, IndexConfig
from hoodpy.config.metadata import MetadataConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.index.base import Index
from hoodpy.index.bloom import BloomIndex
from hoodpy.index.record_index import RecordLevelIndex
from hoodpy.index.simple import SimpleIndex
from hoodpy.keygen import virtual_keys


def index_for(config: HoodieConfig, *, force_global: bool = False) -> Index:
    """The configured index; ``force_global`` looks keys up across partitions (deletes by key alone)."""
    index_type = config.get(IndexConfig.TYPE)
    is_global = force_global or IndexConfig.is_global(index_type)
    if index_type == RECORD_INDEX:
        require_metadata_table(config)
        return RecordLevelIndex(virtual=virtual_keys(config),
                                driver_max_keys=config.get(IndexConfig.RECORD_INDEX_DRIVER_LOOKUP_MAX_KEYS))
    if index_type in (BLOOM, GLOBAL_BLOOM):
        return BloomIndex(config, is_global=is_global)
    # SIMPLE and GLOBAL_SIMPLE; under BUCKET only a delete naming keys alone gets here (the writer places every
    # other record by its bucket, see hoodpy.index.bucket), and the key join finds it in whichever partition.
    return SimpleIndex(is_global=is_global, virtual=virtual_keys(config))


def require_metadata_table(config: HoodieConfig) -> None:
    """RECORD_INDEX keeps its index in the metadata table: refuse it with the metadata table turned off."""
    if config.get(IndexConfig.TYPE) == RECORD_INDEX and config.get(MetadataConfig.ENABLE) is False:
        raise InvalidConfigError(IndexConfig.TYPE.key, RECORD_INDEX,
                                 "the record index lives in the metadata table, but hoodie.metadata.enable=false; "
                                 "enable the metadata table or choose another index type")


def require_stored_keys(config: HoodieConfig) -> None:
    """The record index is built and kept from the ``_hoodie_record_key`` column of the files a write adds,
    which a table with virtual keys (``hoodie.populate.meta.fields=false``) leaves null: refuse it there,
    before anything is written."""
    if config.get(TableConfig.POPULATE_META_FIELDS):
        return
    why = (f"the record index is built from the stored record keys, which a table with "
           f"{TableConfig.POPULATE_META_FIELDS.key}=false does not keep; choose another index type")
    if config.get(IndexConfig.TYPE) == RECORD_INDEX:
        raise InvalidConfigError(IndexConfig.TYPE.key, RECORD_INDEX, why)
    if config.get(MetadataConfig.RECORD_INDEX_ENABLE):
        raise InvalidConfigError(MetadataConfig.RECORD_INDEX_ENABLE.key, "true", why)

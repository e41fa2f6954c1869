"""The index a write uses, picked from config; above the implementations so that they and the protocol in
:mod:`hoodpy.index.base` do not import each other."""

from __future__ import annotations

from hoodpy.config import HoodieConfig
from hoodpy.config.index import BLOOM, GLOBAL_BLOOM, IndexConfig
from hoodpy.index.base import Index
from hoodpy.index.bloom import BloomIndex
from hoodpy.index.simple import SimpleIndex
from hoodpy.keygen import virtual_keys


def index_for(config: HoodieConfig, *, force_global: bool = False) -> Index:
    """The configured index; ``force_global`` looks keys up across partitions (deletes by key alone)."""
    index_type = config.get(IndexConfig.TYPE)
    is_global = force_global or IndexConfig.is_global(index_type)
    if index_type in (BLOOM, GLOBAL_BLOOM):
        return BloomIndex(config, is_global=is_global)
    return SimpleIndex(is_global=is_global, virtual=virtual_keys(config))

"""Tagging incoming records with their current location, and picking the index from config."""

from __future__ import annotations

from typing import Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hoodpy.config import HoodieConfig
from hoodpy.config.index import BLOOM, GLOBAL_BLOOM, IndexConfig
from hoodpy.file_group.file_group import BaseFile
from hoodpy.storage import Storage
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY

LOC_FILE_ID = "_hoodie_loc_file_id"
LOC_PARTITION = "_hoodie_loc_partition"
LOCATED_DDL = f"{RECORD_KEY} string, {LOC_PARTITION} string, {LOC_FILE_ID} string"


class Index(Protocol):
    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        """(record key, partition, file id) of the incoming keys that exist in ``base_files``."""


def index_for(config: HoodieConfig, *, force_global: bool = False) -> Index:
    """The configured index; ``force_global`` looks keys up across partitions (deletes by key alone)."""
    from hoodpy.index.bloom import BloomIndex
    from hoodpy.index.simple import SimpleIndex

    index_type = config.get(IndexConfig.TYPE)
    is_global = force_global or IndexConfig.is_global(index_type)
    if index_type in (BLOOM, GLOBAL_BLOOM):
        return BloomIndex(config, is_global=is_global)
    return SimpleIndex(is_global=is_global)


def tag(records: DataFrame, located: DataFrame, *, by_partition: bool) -> DataFrame:
    """``records`` plus LOC_PARTITION / LOC_FILE_ID (null for keys not in the table)."""
    loc = located.withColumnRenamed(RECORD_KEY, "_loc_key")
    cond = F.col(RECORD_KEY) == F.col("_loc_key")
    if by_partition:
        cond = cond & (F.col(PARTITION_PATH) == F.col(LOC_PARTITION))
    return records.join(loc, cond, "left").drop("_loc_key")

"""What an index is (the :class:`Index` protocol) and tagging incoming records with the locations it finds.

The implementations (:mod:`~hoodpy.index.bloom`, :mod:`~hoodpy.index.simple`) build on this module;
:mod:`hoodpy.index.configured` picks one of them from config.
"""

from __future__ import annotations

from typing import Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from hoodpy.file_group.file_group import BaseFile
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage

LOC_FILE_ID = "_hoodie_loc_file_id"
LOC_PARTITION = "_hoodie_loc_partition"
LOCATED_DDL = f"{RECORD_KEY} string, {LOC_PARTITION} string, {LOC_FILE_ID} string"


class Index(Protocol):
    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        """(record key, partition, file id) of the incoming keys that exist in ``base_files``."""


def tag(records: DataFrame, located: DataFrame, *, by_partition: bool) -> DataFrame:
    """``records`` plus LOC_PARTITION / LOC_FILE_ID (null for keys not in the table)."""
    loc = located.withColumnRenamed(RECORD_KEY, "_loc_key")
    cond = F.col(RECORD_KEY) == F.col("_loc_key")
    if by_partition:
        cond = cond & (F.col(PARTITION_PATH) == F.col(LOC_PARTITION))
    return records.join(loc, cond, "left").drop("_loc_key")

"""SIMPLE index: join incoming keys with the record keys read from the latest base files."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.file_group.file_group import BaseFile
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.read.file_scan import read_parquet_files
from hoodpy.storage import Storage

_FILE_NAME = "_hoodie_index_file_name"
_KEY_SCHEMA = StructType([StructField(RECORD_KEY, StringType()), StructField(PARTITION_PATH, StringType())])


class SimpleIndex:
    def __init__(self, *, is_global: bool):
        self.is_global = is_global

    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        if not base_files:
            return spark.createDataFrame([], f"{RECORD_KEY} string, {LOC_PARTITION} string, {LOC_FILE_ID} string")
        # Only the key column is read; the file id comes from the file actually read, not its contents.
        existing = read_parquet_files(spark, storage, [bf.path for bf in base_files], _KEY_SCHEMA,
                                      file_name_column=_FILE_NAME)
        return existing.select(
            F.col(RECORD_KEY),
            F.col(PARTITION_PATH).alias(LOC_PARTITION),
            F.substring_index(F.col(_FILE_NAME), "_", 1).alias(LOC_FILE_ID),
        )

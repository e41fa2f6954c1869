"""SIMPLE index: join incoming keys with the record keys read from the latest base files."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.file_group.file_group import BaseFile
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION, LOCATED_DDL
from hoodpy.keygen import KeyGenerator
from hoodpy.keygen.stored import stored_record_keys
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.read.file_scan import MAX_SCAN_TASKS, read_parquet_files
from hoodpy.storage import Storage

_FILE_NAME = "_hoodie_index_file_name"
_KEY_SCHEMA = StructType([StructField(RECORD_KEY, StringType()), StructField(PARTITION_PATH, StringType())])


class SimpleIndex:
    def __init__(self, *, is_global: bool, virtual: KeyGenerator | None = None):
        self.is_global = is_global
        self.virtual = virtual  # the key generator of a table whose files hold no keys

    def locate(self, spark: SparkSession, records: DataFrame, storage: Storage,
               base_files: list[BaseFile]) -> DataFrame:
        if not base_files:
            return spark.createDataFrame([], LOCATED_DDL)
        if self.virtual is not None:
            files = [(bf.path, bf.partition_path, bf.file_id) for bf in base_files]
            tasks = min(len(files), MAX_SCAN_TASKS)
            return spark.range(0, tasks, 1, tasks).mapInArrow(
                _computed_keys(storage.base_uri, files, tasks, self.virtual), LOCATED_DDL)
        # Only the key column is read; the file id comes from the file actually read, not its contents.
        existing = read_parquet_files(spark, storage, [bf.path for bf in base_files], _KEY_SCHEMA,
                                      file_name_column=_FILE_NAME)
        return existing.select(
            F.col(RECORD_KEY),
            F.col(PARTITION_PATH).alias(LOC_PARTITION),
            F.substring_index(F.col(_FILE_NAME), "_", 1).alias(LOC_FILE_ID),
        )


def _computed_keys(base_uri: str, files: list[tuple[str, str, str]], tasks: int, virtual: KeyGenerator):
    """The task function for virtual keys: task i computes the keys of every ``tasks``-th file from i."""

    def scan(batches):
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for path, partition, file_id in files[task::tasks]:
                    with storage.fs.open_input_file(storage.full_path(path)) as f:
                        keys = stored_record_keys(pq.ParquetFile(f), virtual)
                    yield from pa.table({
                        RECORD_KEY: keys, LOC_PARTITION: pa.repeat(pa.scalar(partition), len(keys)),
                        LOC_FILE_ID: pa.repeat(pa.scalar(file_id), len(keys))}).to_batches()

    return scan

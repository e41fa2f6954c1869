"""Spark's row positions (``_metadata.row_index``), what the merge-on-read anti-join matches against the
positions pyarrow finds for the keys the logs name: positions in the file, also when a pushed filter skips
row groups."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.types import LongType, StructField, StructType

from hoodpy.read.file_scan import read_parquet_files
from hoodpy.storage import Storage


def test_row_index_is_the_position_in_the_file_after_row_group_skipping(spark, tmp_path):
    pq.write_table(pa.table({"v": list(range(100))}), tmp_path / "a.parquet", row_group_size=10)
    pq.write_table(pa.table({"v": list(range(1000, 1030))}), tmp_path / "b.parquet", row_group_size=10)
    schema = StructType([StructField("v", LongType())])
    df = read_parquet_files(spark, Storage(str(tmp_path)), ["a.parquet", "b.parquet"], schema,
                            file_name_column="file", row_index_column="row")
    got = sorted((r.v, r.file, r.row) for r in df.where("v >= 57 and v < 1012").collect())
    assert got == [*((v, "a.parquet", v) for v in range(57, 100)), *((v, "b.parquet", v - 1000)
                                                                    for v in range(1000, 1012))]

"""hudi-rs reads tables hoodpy bulk-loaded with each hoodie.bulkinsert.sort.mode (NONE: several files per task
and partition, keys unsorted within files, file ids ``<task prefix>-<n>``): its snapshot equals hoodpy's, meta
columns included, over the same file slices, and holds every input row once."""

from __future__ import annotations

import pytest

import hudi_rs
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

# A small target so each task rolls several files (Hudi's footer bloom filter alone is ~431 KB: shrink it).
OPTIONS = {"hoodie.parquet.max.file.size": str(64 * 1024), "hoodie.index.bloom.num_entries": "100"}


@pytest.mark.parametrize("mode", ["NONE", "PARTITION_SORT", "PARTITION_PATH_REPARTITION"])
def test_hudi_rs_reads_a_bulk_insert_of_each_mode(spark, tmp_path, mode):
    from pyspark.sql import functions as F

    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name=f"bulk_{mode.lower()}", record_key_fields=["id"],
                           partition_fields=["region"], precombine_field="ts", hive_style_partitioning=True,
                           options={**OPTIONS, "hoodie.bulkinsert.sort.mode": mode})
    n = 20_000
    batch = (spark.range(n, numPartitions=3)
             .select(((F.col("id") * 7919) % n).cast("int").alias("id"), F.lit(1).cast("long").alias("ts"),
                     F.sha2(F.col("id").cast("string"), 256).alias("v"),
                     F.when(F.col("id") % 3 == 0, "us").otherwise("eu").alias("region")))
    t.bulk_insert(batch)
    latest = t.file_system_view().latest_base_files()
    assert len(latest) > 4  # rolled: more files than (task, partition) pairs would give otherwise
    ours = hudi_rs.df_rows(t.read())
    assert ours == hudi_rs.snapshot(path)
    assert {(bf.partition_path, bf.file_name) for bf in latest} == hudi_rs.file_slices(path)
    assert sorted(r["id"] for r in ours) == list(range(n))

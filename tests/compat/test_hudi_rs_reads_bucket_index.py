"""hudi-rs reads a table hoodpy wrote with the BUCKET index (file ids led by 8-digit bucket ids, one file group
per bucket per partition): after each write its snapshot equals hoodpy's, all columns, meta columns included,
and both pick the same file slices."""

from __future__ import annotations

import pytest

import hudi_rs
from hoodpy.index.bucket import BucketSpec, bucket_id
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

DDL = "id int, name string, region string, ts long, v double"
OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "8",
           "hoodie.bucket.index.hash.field": "id"}
SPEC = BucketSpec(8, ("id",))


def test_hudi_rs_reads_a_bucket_index_table(spark, table_path):
    t = HoodieTable.create(spark, table_path, table_name="bucketed", record_key_fields=["id", "name"],
                           partition_fields=["region"], precombine_field="ts", hive_style_partitioning=True,
                           options=OPTIONS)
    first = [(i, f"n{i}", "eu" if i % 3 else "us", 1, i * 1.5) for i in range(30)]
    writes = [
        ("bulk_insert", first),
        ("upsert", [(1, "n1", "eu", 2, -1.0), (3, "n3", "us", 2, -3.0), (40, "n40", "us", 2, 40.0),
                    (41, "n41", "apac", 2, 41.0)]),
        ("delete", [(2, "n2", "eu", 3, None), (40, "n40", "us", 3, None)]),
        ("insert_overwrite", [(50, "n50", "apac", 4, 50.0)]),
    ]
    for op, batch in writes:
        getattr(t, op)(spark.createDataFrame(batch, DDL))
        ours = hudi_rs.df_rows(t.read())
        assert ours == hudi_rs.snapshot(table_path), op
        view = t.file_system_view()
        latest = view.latest_base_files()
        assert {(bf.partition_path, bf.file_name) for bf in latest} == hudi_rs.file_slices(table_path), op
        for bf in latest:  # every row sits in the file group of its bucket
            keys = {r["_hoodie_record_key"] for r in ours if r["_hoodie_file_name"] == bf.file_name}
            assert keys and {bucket_id(k, SPEC) for k in keys} == {int(bf.file_id[:8])}, (op, bf.file_id)
    final = hudi_rs.snapshot(table_path)
    assert sorted((r["id"], r["region"], r["v"]) for r in final) == sorted(
        [(i, "eu" if i % 3 else "us", -1.0 if i == 1 else -3.0 if i == 3 else i * 1.5)
         for i in range(30) if i != 2] + [(50, "apac", 50.0)])

"""Tables hoodpy creates with Hudi's time-based and custom key generators: partition folders and meta columns
as Java Hudi writes them, read back, an upsert of the same keys updates in place (moves nothing), and
hudi-rs reads the rows. An unknown key generator class is refused before anything is written."""

from __future__ import annotations

import os

import pytest
from hoodpy_spark_helpers import data_files, latest_files, rows

from hoodpy.errors import InvalidConfigError
from hoodpy.table import HoodieTable
from tests.compat.hudi_rs import snapshot_tuples as hudi_rs

pytestmark = pytest.mark.spark

DDL = "id string, ts long, region string, v string"
# 2024-01-15 09:30 UTC, 2024-01-15 10:45 UTC, 2024-01-16 01:15 UTC, and a null (Hudi's default: 1 ms).
BATCH = [("k1", 1705311000000, "eu", "a"), ("k2", 1705315500000, "us", "b"),
         ("k3", 1705367700000, "eu", "c"), ("k4", None, "eu", "d")]


def partition_folders(path: str) -> set[str]:
    return {os.path.dirname(f) for f in data_files(path)}


def test_timestamp_based_table(spark, tmp_path):
    path = str(tmp_path / "ts")
    t = HoodieTable.create(
        spark, path, table_name="ts_t", record_key_fields=["id"], partition_fields=["ts"],
        key_generator_class="org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        table_properties={"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                          "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
                          "hoodie.keygen.timebased.output.timezone": "Asia/Kolkata"})
    assert t.properties["hoodie.keygen.timebased.output.dateformat"] == "yyyy/MM/dd/HH"
    t.insert(spark.createDataFrame(BATCH, DDL))
    expected = {"k1": "2024/01/15/15", "k2": "2024/01/15/16", "k3": "2024/01/16/06", "k4": "1970/01/01/05"}
    assert dict(rows(t.read(), "_hoodie_record_key", "_hoodie_partition_path")) == expected
    assert partition_folders(path) == set(expected.values())

    before = latest_files(t)
    # Same keys, same timestamps, new values: updates in place, one new file slice per touched file group.
    reopened = HoodieTable.for_path(spark, path)
    result = reopened.upsert(spark.createDataFrame([(k, ts, r, v + "2") for k, ts, r, v in BATCH], DDL))
    assert (result.num_inserts, result.num_update_writes) == (0, 4)
    after = latest_files(reopened)
    assert set(after) == set(before)  # the same (partition, file id)s: nothing moved
    assert rows(reopened.read(), "id", "v") == [("k1", "a2"), ("k2", "b2"), ("k3", "c2"), ("k4", "d2")]
    assert hudi_rs(path, ["_hoodie_partition_path", "id", "v"]) == sorted(
        (expected[k], k, v + "2") for k, _, _, v in BATCH)


def test_custom_key_generator_table(spark, tmp_path):
    path = str(tmp_path / "custom")
    t = HoodieTable.create(
        spark, path, table_name="custom_t", record_key_fields=["id"], partition_fields=["region:simple", "ts:timestamp"],
        hive_style_partitioning=True, key_generator_class="org.apache.hudi.keygen.CustomKeyGenerator",
        table_properties={"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                          "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
                          "hoodie.datasource.write.partitionpath.urlencode": "true"})
    # Hudi 0.14 (table version 6) keeps plain names in hoodie.table.partition.fields.
    assert t.properties["hoodie.table.partition.fields"] == "region,ts"
    assert t.properties["hoodie.datasource.write.partitionpath.field"] == "region:simple,ts:timestamp"
    t.upsert(spark.createDataFrame(BATCH + [("k5", 0, "a/b:c%", "e"), ("k6", 0, None, "f")], DDL))
    reopened = HoodieTable.for_path(spark, path)
    assert dict(rows(reopened.read(), "id", "_hoodie_partition_path")) == {
        "k1": "region=eu/ts=2024-01-15", "k2": "region=us/ts=2024-01-15", "k3": "region=eu/ts=2024-01-16",
        "k4": "region=eu/ts=1970-01-01",
        # Hudi's escapePathName (Hive's character set), not URL quoting.
        "k5": "region=a%2Fb%3Ac%25/ts=1970-01-01", "k6": "region=__HIVE_DEFAULT_PARTITION__/ts=1970-01-01"}
    assert "region=a%2Fb%3Ac%25/ts=1970-01-01" in partition_folders(path)
    # A partition predicate on the SIMPLE field prunes; one on the TIMESTAMP field filters rows only.
    assert rows(reopened.read(filters=[("region", "=", "us")]), "id") == [("k2",)]
    assert rows(reopened.read(filters=[("ts", "=", 1705311000000)]), "id") == [("k1",)]
    reopened.delete(spark.createDataFrame([("k3", 1705367700000, "eu", None)], DDL))
    assert hudi_rs(path, ["id", "_hoodie_partition_path"]) == [
        ("k1", "region=eu/ts=2024-01-15"), ("k2", "region=us/ts=2024-01-15"), ("k4", "region=eu/ts=1970-01-01"),
        ("k5", "region=a%2Fb%3Ac%25/ts=1970-01-01"), ("k6", "region=__HIVE_DEFAULT_PARTITION__/ts=1970-01-01")]


def test_unknown_key_generator_class_is_refused(spark, tmp_path):
    path = tmp_path / "bad"
    with pytest.raises(InvalidConfigError, match="com.example.MyKeyGenerator"):
        HoodieTable.create(spark, str(path), table_name="bad", record_key_fields=["id"],
                           partition_fields=["p"], key_generator_class="com.example.MyKeyGenerator")
    assert not path.exists() or not any(path.rglob("*"))

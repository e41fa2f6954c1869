"""RECORD_INDEX lookups take one of two paths (hoodie.record.index.driver.lookup.max.keys): a small batch's keys
are looked up on the driver (no shuffle), a larger one by one Spark task per shard; both place every update in
the file group holding its key, across partitions, and skip file groups a replace retired."""

from __future__ import annotations

import pytest
from tests.compat import hudi_rs
from hoodpy_spark_helpers import rows

from hoodpy.index import record_index as rli_index
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string"
MAX_KEYS = "hoodie.record.index.driver.lookup.max.keys"


@pytest.mark.parametrize("max_keys, driver_lookups", [("0", 0), ("3", 2), ("100000", 3)])
def test_driver_and_spark_lookups_place_updates_alike(spark, tmp_path, monkeypatch, max_keys, driver_lookups):
    calls = []
    original = rli_index.RecordIndex.lookup
    monkeypatch.setattr(rli_index.RecordIndex, "lookup",
                        lambda self, keys, timeline: calls.append(len(set(keys))) or original(self, keys, timeline))
    path = str(tmp_path / "t")
    options = {"hoodie.index.type": "RECORD_INDEX", "hoodie.clean.automatic": "false", MAX_KEYS: max_keys}
    table = HoodieTable.create(spark, path, table_name="rli", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options=options)
    table.upsert(spark.createDataFrame([(f"k{i:02d}", "a" if i % 2 else "b", 1, "x") for i in range(12)], DDL))
    assert calls == []  # the first write builds the index: its keys are looked up in the base files
    # 5 records: updates (k03 lives in "a": the global lookup updates it there, its p column now "b"), inserts
    table.upsert(spark.createDataFrame([("k01", "a", 2, "y"), ("k02", "b", 2, "y"), ("k03", "b", 2, "moved?"),
                                        ("k20", "a", 2, "new"), ("k21", "c", 2, "new")], DDL))
    # partition b's file groups are retired: their keys are found by neither path
    table.insert_overwrite(spark.createDataFrame([("k50", "b", 3, "ow")], DDL))
    table.upsert(spark.createDataFrame([("k04", "b", 4, "again"), ("k50", "b", 4, "z")], DDL))  # 2 records
    table.upsert(spark.createDataFrame([("k05", "a", 5, "w")], DDL))
    expected = sorted([(f"k{i:02d}", "a", 1, "x") for i in range(7, 12, 2)]
                      + [("k01", "a", 2, "y"), ("k03", "b", 2, "moved?"), ("k05", "a", 5, "w"),
                         ("k20", "a", 2, "new"), ("k21", "c", 2, "new"), ("k04", "b", 4, "again"),
                         ("k50", "b", 4, "z")])
    assert rows(table.read(), "id", "p", "ts", "v") == expected
    assert hudi_rs.snapshot_tuples(path, ["id", "p", "ts", "v"]) == expected
    assert len(calls) == driver_lookups
    if max_keys == "3":
        assert calls == [2, 1]  # the 2- and 1-record batches; the 5-record one went to Spark

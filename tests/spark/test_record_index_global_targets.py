"""Global indexes' upserts with targets decided on the driver (hoodpy.write.global_targets): RECORD_INDEX (with
hoodie.record.index.update.partition.path on and off) and GLOBAL_BLOOM give the rows GLOBAL_SIMPLE (located in
Spark) gives: keys moving across partitions leave their old file group, deletes remove keys wherever they live,
a file group emptied by deletes is retired; the record index then holds exactly the live keys. The driver path
runs no Spark lookup; a batch past hoodie.record.index.driver.lookup.max.keys is looked up in Spark and gives the
same rows."""

from __future__ import annotations

import pytest
from tests.compat import hudi_rs
from hoodpy_spark_helpers import rows

from hoodpy.index.bloom import BloomIndex
from hoodpy.index.record_index import RecordLevelIndex
from hoodpy.table import HoodieTable
from tests.spark.test_record_index_writes import assert_index_matches_files, index_of

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string, _hoodie_is_deleted boolean"
BASE = {"hoodie.clean.automatic": "false", "hoodie.metadata.enable": "true"}
BATCH1 = [(f"k{i}", "a" if i < 6 else "b", 1, "v1", False) for i in range(10)] + [("z0", "z", 1, "v1", False)]
BATCH2 = [
    ("k1", "a", 2, "u", False),      # update in place
    ("k2", "b", 2, "m", False),      # lives in a: moves to b (when moves are on)
    ("k7", "c", 2, "m", False),      # lives in b: moves to a new partition c
    ("k3", "a", 2, "d", True),       # delete where it lives
    ("k8", "a", 2, "d", True),       # delete naming the wrong partition (it lives in b)
    ("z0", "z", 2, "d", True),       # deletes the only key of partition z's file group
    ("n1", "a", 2, "new", False),    # insert
    ("n2", "d", 2, "new", False),    # insert into a new partition
]
BATCH3 = [("k2", "b", 3, "again", False), ("k4", "a", 0, "stale", False), ("k0", "z", 3, "m", False)]


def _upserts(spark, path: str, options: dict, *, index_type: str) -> HoodieTable:
    opts = {**BASE, **options, "hoodie.index.type": index_type}
    table = HoodieTable.create(spark, path, table_name="g", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options=opts)
    for batch in (BATCH1, BATCH2, BATCH3):
        table.upsert(spark.createDataFrame(batch, DDL))
    return table


def _no_spark_lookup(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the keys were to be located on the driver")
    monkeypatch.setattr(RecordLevelIndex, "locate", refuse)
    monkeypatch.setattr(BloomIndex, "locate", refuse)


@pytest.fixture(scope="module")
def expected(spark, tmp_path_factory):
    """GLOBAL_SIMPLE's rows (its keys are located in Spark), per update.partition.path setting."""
    out = {}
    for moves in (True, False):
        path = str(tmp_path_factory.mktemp("simple") / "t")
        table = _upserts(spark, path, {"hoodie.simple.index.update.partition.path": str(moves).lower()},
                         index_type="GLOBAL_SIMPLE")
        out[moves] = rows(table.read(), "_hoodie_partition_path", "id", "p", "ts", "v")
    return out


@pytest.mark.parametrize("moves", [True, False])
def test_record_index_on_the_driver_moves_deletes_and_retires_as_global_simple(spark, tmp_path, expected,
                                                                              monkeypatch, moves):
    path = str(tmp_path / "t")
    opts = {"hoodie.record.index.update.partition.path": str(moves).lower()}
    # The first upsert builds the record index (its lookup reads the base files in Spark); then none may.
    table = HoodieTable.create(spark, path, table_name="g", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options={**BASE, **opts, "hoodie.index.type": "RECORD_INDEX"})
    table.upsert(spark.createDataFrame(BATCH1, DDL))
    _no_spark_lookup(monkeypatch)
    second = table.upsert(spark.createDataFrame(BATCH2, DDL))
    table.upsert(spark.createDataFrame(BATCH3, DDL))
    got = rows(table.read(), "_hoodie_partition_path", "id", "p", "ts", "v")
    assert got == expected[moves]
    ids = [r[1] for r in got]
    assert len(ids) == len(set(ids))  # a moved key lives in one partition only
    where = {r[1]: r[0] for r in got}
    assert where["k2"] == ("b" if moves else "a") and where["k7"] == ("c" if moves else "b")
    assert "k3" not in where and "k8" not in where and where["k0"] == ("z" if moves else "a")
    assert where["n2"] == "d"
    if moves:  # k7's old copy is deleted in b's file group: a delete in the write's stats
        assert second.num_deletes >= 4
    assert_index_matches_files(path)
    assert {k: p for k, (p, _) in index_of(path).items()} == where
    assert sorted(hudi_rs.snapshot_tuples(path, ["id", "p", "ts", "v"])) == sorted(r[1:] for r in got)


def test_global_bloom_on_the_driver_gives_global_simple_rows(spark, tmp_path, expected, monkeypatch):
    _no_spark_lookup(monkeypatch)
    table = _upserts(spark, str(tmp_path / "t"), {"hoodie.bloom.index.update.partition.path": "true"},
                     index_type="GLOBAL_BLOOM")
    assert rows(table.read(), "_hoodie_partition_path", "id", "p", "ts", "v") == expected[True]


def test_record_index_past_the_driver_threshold_falls_back_to_spark_with_the_same_rows(spark, tmp_path, expected):
    path = str(tmp_path / "t")
    table = _upserts(spark, path, {"hoodie.record.index.driver.lookup.max.keys": "3",
                                   "hoodie.record.index.update.partition.path": "true"}, index_type="RECORD_INDEX")
    assert rows(table.read(), "_hoodie_partition_path", "id", "p", "ts", "v") == expected[True]
    assert_index_matches_files(path)

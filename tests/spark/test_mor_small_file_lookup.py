"""A merge-on-read upsert under the BLOOM index with small-file handling on (the default): the small file taking
a partition's inserts is merged into a new base file by its task, which reads its keys anyway, so the driver does
not look its keys up when every insert of the partition goes there and the partition surely has inserts (a key
outside the file's key range, or one its bloom filter rejects, not found elsewhere). Otherwise it looks the file
up, so that a partition without inserts has no small file and its updates go to logs, as Java's
SparkUpsertDeltaCommitPartitioner routes them.
hudi-rs reads every table as hoodpy does."""

from __future__ import annotations

from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM
from spark_jobs import stage_names_by_job

import hoodpy.write.writer as writer_module
from tests.compat import hudi_rs
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string"
SIZED = {"hoodie.copyonwrite.record.size.estimate": "100"}


def _table(spark, path) -> tuple[HoodieTable, str, str]:
    """Two file groups of partition "a": the smaller (keys b00..b09) and the larger (k00..k11)."""
    table = HoodieTable.create(spark, path, table_name="mor_small", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    for prefix, n in (("b", 10), ("k", 12)):
        table.insert(spark.createDataFrame([(f"{prefix}{i:02d}", "a", 1, "x") for i in range(n)], DDL).coalesce(1),
                     options={"hoodie.parquet.small.file.limit": "0"})
    (small, _), (large, _) = sorted(((bf.file_id, bf.size) for bf in table.file_system_view().latest_base_files()),
                                    key=lambda f: f[1])
    return table, small, large


def _looked_up(monkeypatch) -> list[set[str]]:
    """The file ids each driver lookup of the write opens (hoodpy.write.writer.locate_on_driver's files)."""
    calls: list[set[str]] = []
    real = writer_module.locate_on_driver

    def recording(storage, keys, files, **kwargs):
        calls.append({bf.file_id for bf in files})
        return real(storage, keys, files, **kwargs)

    monkeypatch.setattr(writer_module, "locate_on_driver", recording)
    return calls


def _values(table) -> dict[str, tuple]:
    return {r["_hoodie_record_key"]: (r["ts"], r["v"]) for r in hudi_rs.df_rows(table.read())}


def _expected(changes: list[tuple]) -> dict[str, tuple]:
    base = {f"{p}{i:02d}": (1, "x") for p, n in (("b", 10), ("k", 12)) for i in range(n)}
    return base | {k: (ts, v) for k, _, ts, v in changes}


def test_the_small_file_is_merged_without_a_driver_lookup(spark, table_path, monkeypatch):
    """Updates of the small file and inserts past its key range: the driver opens only the other file; the
    small file's task tells its 2 updates from the 3 inserts and writes a new base file; every record has one
    target, so the write takes the keys' job and the write's (no targets file, no join; the record size given,
    so no sample of the batch either)."""
    table, small, large = _table(spark, table_path)
    calls = _looked_up(monkeypatch)
    changes = [("b01", "a", 2, "u"), ("b07", "a", 2, "u")] + [(f"z{i}", "a", 2, "n") for i in range(3)]
    results = []
    jobs = len(stage_names_by_job(spark, "small-file-merge", lambda: results.append(
        table.upsert(spark.createDataFrame(changes, DDL).coalesce(1), options=SIZED))))
    assert calls == [{large}]
    assert jobs == 2
    stats = results[0].metadata.write_stats
    assert len(stats) == 1 and stats[0].file_id == small and not stats[0].is_log_write
    assert (stats[0].num_inserts, stats[0].num_update_writes, stats[0].num_writes) == (3, 2, 13)
    assert not list(Path(table_path).rglob(".*.log.*"))
    assert _values(table) == _expected(changes)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_updates_elsewhere_still_go_to_logs(spark, table_path, monkeypatch):
    """The small file's update and inserts, and an update of the larger file: the larger file is looked up and
    takes a log; the small file, not looked up, is merged with its update and the inserts."""
    table, small, large = _table(spark, table_path)
    calls = _looked_up(monkeypatch)
    changes = [("b03", "a", 2, "u"), ("k05", "a", 2, "u"), ("z0", "a", 2, "n")]
    stats = table.upsert(spark.createDataFrame(changes, DDL).coalesce(1)).metadata.write_stats
    assert calls == [{large}]
    by_file = {s.file_id: s for s in stats}
    assert set(by_file) == {small, large}
    assert by_file[large].is_log_write and by_file[large].num_update_writes == 1
    assert not by_file[small].is_log_write
    assert (by_file[small].num_inserts, by_file[small].num_update_writes) == (1, 1)
    assert _values(table) == _expected(changes)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_without_inserts_the_small_file_takes_a_log(spark, table_path, monkeypatch):
    """Updates only: no key proves an insert, so the small file is looked up too; the partition has no inserts,
    so it is no small file of this write and its updates go to its log (Java: small files are those of
    partitions with inserts), not into a new base file."""
    table, small, large = _table(spark, table_path)
    calls = _looked_up(monkeypatch)
    changes = [("b02", "a", 2, "u"), ("b04", "a", 2, "u")]
    stats = table.upsert(spark.createDataFrame(changes, DDL).coalesce(1)).metadata.write_stats
    assert calls == [{large}, {small}]
    assert len(stats) == 1 and stats[0].file_id == small and stats[0].is_log_write
    assert stats[0].num_update_writes == 2
    assert _values(table) == _expected(changes)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_inserts_inside_the_small_files_range_are_confirmed(spark, table_path, monkeypatch):
    """A new key inside the small file's key range that its bloom filter does not rule out (a saturated filter
    passes most keys) could be one of its rows: the small file is looked up; the key is an insert, so the file
    still takes the partition's inserts and is merged with its update."""
    table, small, large = _table(spark, table_path)
    calls = _looked_up(monkeypatch)
    probed = []
    monkeypatch.setattr(writer_module, "lacks_one", lambda storage, bf, keys: probed.append(bf.file_id) or False)
    changes = [("b05", "a", 2, "u"), ("b05x", "a", 2, "n")]
    stats = table.upsert(spark.createDataFrame(changes, DDL).coalesce(1)).metadata.write_stats
    assert probed == [small]
    assert calls == [{large}, {small}]
    assert len(stats) == 1 and stats[0].file_id == small and not stats[0].is_log_write
    assert (stats[0].num_inserts, stats[0].num_update_writes) == (1, 1)
    assert _values(table) == _expected(changes)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_inserts_the_bloom_filter_rules_out_need_no_lookup(spark, table_path, monkeypatch):
    """A new key inside the small file's key range that the file's bloom filter rejects is surely an insert (a
    filter has no false negatives): the small file is not looked up, and is merged with its update and the
    insert as when the key lies outside its range."""
    table, small, large = _table(spark, table_path)
    calls = _looked_up(monkeypatch)
    changes = [("b05", "a", 2, "u"), ("b05x", "a", 2, "n")]
    stats = table.upsert(spark.createDataFrame(changes, DDL).coalesce(1)).metadata.write_stats
    assert calls == [{large}]
    assert len(stats) == 1 and stats[0].file_id == small and not stats[0].is_log_write
    assert (stats[0].num_inserts, stats[0].num_update_writes) == (1, 1)
    assert _values(table) == _expected(changes)
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


DECIMALS = [(15, 2), (15, 0), (1, 1), (9, 9), (18, 4), (38, 10)]


def _decimal_rows(spark, ids: range, ts: int, seed: int):
    import random
    from decimal import Context, Decimal

    from pyspark.sql.types import DecimalType, IntegerType, LongType, StructField, StructType

    rng, exact = random.Random(seed), Context(prec=60)
    rows = []
    for n, i in enumerate(ids):
        values = []
        for p, s in DECIMALS:
            top = 10 ** p - 1
            u = [top, -top, None, 0, -1][n] if n < 5 else rng.randint(-top, top)
            values.append(None if u is None else Decimal(u).scaleb(-s, exact))
        rows.append((i, ts, *values))
    schema = StructType([StructField("id", IntegerType(), False), StructField("ts", LongType(), False)]
                        + [StructField(f"d_{p}_{s}", DecimalType(p, s)) for p, s in DECIMALS])
    return rows, spark.createDataFrame(rows, schema).coalesce(1)


def test_decimals_of_a_merged_small_file_and_a_log_are_exact(spark, table_path):
    """A small file merged with updates and inserts, then updates appended to a log: every decimal value
    (extremes, negatives, nulls) reads back exactly through Spark's snapshot and hudi-rs."""
    table = HoodieTable.create(spark, table_path, table_name="mor_dec", record_key_fields=["id"],
                               precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    first, df = _decimal_rows(spark, range(10), 1, 1)
    table.insert(df, options={"hoodie.parquet.small.file.limit": "0"})
    merged, df = _decimal_rows(spark, range(5, 15), 2, 2)  # 5 updates, 5 inserts: the small file is merged
    stats = table.upsert(df).metadata.write_stats
    assert len(stats) == 1 and not stats[0].is_log_write and stats[0].num_inserts == 5
    logged, df = _decimal_rows(spark, range(0, 8), 3, 3)  # updates only, small files off: a log
    stats = table.upsert(df, options={"hoodie.parquet.small.file.limit": "0"}).metadata.write_stats
    assert len(stats) == 1 and stats[0].is_log_write and stats[0].num_update_writes == 8
    expected = {r[0]: r for r in first} | {r[0]: r for r in merged} | {r[0]: r for r in logged}
    columns = ["id", "ts", *(f"d_{p}_{s}" for p, s in DECIMALS)]
    assert {r["id"]: tuple(r[c] for c in columns) for r in table.read().collect()} == expected
    assert hudi_rs.snapshot_tuples(table_path, columns) == sorted(expected.values())

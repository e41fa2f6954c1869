"""A copy-on-write upsert touching a few row groups of a base file copies the others into the new file (see
hoodpy/write/parquet_splice.py): pyarrow, hudi-rs and Spark read the same rows from it, Spark with the file cut
into several splits (parquet-mr assigns row groups to splits by their offsets: wrong ones drop or duplicate
rows). A Java-written base file (a parquet-mr schema) is rewritten instead, and reads alike."""

from __future__ import annotations


import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hoodpy_spark_helpers import latest_files
from pyspark.sql import functions as F

from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.write.base_file import BaseFileOptions, SplicedBaseFile
from java_samples import unzip_sample
from parquet_chunks import chunk_bytes

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string"
SMALL = {"hoodie.parquet.block.size": "20000", "hoodie.index.bloom.num_entries": "1000"}  # groups of ~100 rows


def _spark_rows_in_splits(spark, path: str, split_bytes: int, columns: list[str]) -> tuple[list[tuple], int]:
    """The rows (``columns``) Spark's parquet reader gives for one file cut into ``split_bytes`` splits, and how
    many splits returned rows."""
    old = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(split_bytes))
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        df = spark.read.parquet(path).select(*columns).withColumn("split", F.spark_partition_id())
        got = [tuple(r) for r in df.collect()]
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", old)
        spark.conf.unset("spark.sql.files.openCostInBytes")
    return sorted(r[:-1] for r in got), len({r[-1] for r in got})


def _assert_readers_agree(spark, table: HoodieTable, rel_path: str, columns: list[str] | None = None) -> pa.Table:
    """pyarrow, Spark (in splits) and hudi-rs read the same rows (``columns``: scalar ones, compared as tuples)."""
    full = table.storage.full_path(rel_path)
    ours = pq.read_table(full, columns=columns)
    columns = ours.column_names
    size = pq.ParquetFile(full).metadata.serialized_size  # the footer, to size the splits by the data
    split = max(4096, (len(open(full, "rb").read()) - size) // 4)
    spark_rows, splits = _spark_rows_in_splits(spark, full, split, columns)
    groups = pq.ParquetFile(full).metadata.num_row_groups
    assert splits >= min(3, groups), "the file's row groups were read in several splits"
    assert spark_rows == sorted(tuple(r.values()) for r in ours.to_pylist()), "Spark reads each row once"
    from tests.compat import hudi_rs
    theirs = pa.Table.from_batches(hudi_rs.table(table.base_path).read())
    assert sorted(theirs.column("_hoodie_record_key").to_pylist()) == \
        sorted(ours.column("_hoodie_record_key").to_pylist())
    return ours


def test_spliced_file_reads_alike_in_pyarrow_hudi_rs_and_spark_splits(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="splice_t", record_key_fields=["id"], precombine_field="ts")
    t.insert(spark.createDataFrame([(i, 1, f"v{i:05d}" + "x" * 40) for i in range(3000)], DDL), options=SMALL)
    (old_rel,) = latest_files(t).values()
    old = t.storage.full_path(old_rel)
    groups = pq.ParquetFile(old).metadata.num_row_groups
    assert groups >= 10
    # Updates in the file's last row group only (keys are in id order), and inserts.
    last_first_row = pq.ParquetFile(old).metadata.num_rows - pq.ParquetFile(old).metadata.row_group(groups - 1).num_rows
    old_ids = pq.read_table(old, columns=["id"]).column("id").to_pylist()
    updated = old_ids[last_first_row:last_first_row + 5]
    t.upsert(spark.createDataFrame([(i, 2, f"new{i}") for i in updated] +
                                   [(i, 2, f"ins{i}") for i in range(5000, 5050)], DDL), options=SMALL)
    (new_rel,) = latest_files(t).values()
    assert new_rel != old_rel
    new = t.storage.full_path(new_rel)
    for g in range(groups - 1):  # every group but the last copied byte for byte, but for the file names
        before, after = chunk_bytes(old, g), chunk_bytes(new, g)
        del before["_hoodie_file_name"], after["_hoodie_file_name"]
        assert before == after, f"row group {g} copied"
    rows = _assert_readers_agree(spark, t, new_rel)
    values = dict(zip(rows.column("id").to_pylist(), rows.column("v").to_pylist(), strict=True))
    assert len(values) == 3050 and all(values[i] == f"new{i}" for i in updated) and values[5001] == "ins5001"
    read = {r["id"]: r["v"] for r in t.read().select("id", "v").collect()}
    assert read == values


def test_java_written_file_is_rewritten_and_reads_alike(spark, tmp_path):
    base = unzip_sample("v6_nonpartitioned", tmp_path / "java")
    t = HoodieTable.for_path(spark, str(base))
    (old_rel,) = latest_files(t).values()
    schema = pq.read_schema(t.storage.full_path(old_rel))
    # parquet-mr's schema (2-level lists, no root repetition) is not pyarrow's: the groups cannot be copied.
    assert SplicedBaseFile.of(Storage(str(base)), "p/x.parquet", BaseFileOptions(), schema, old_rel) is None
    df = t.read().filter("id = 2").drop(*[c for c in t.read().columns if c.startswith("_hoodie")])
    t.upsert(df.withColumn("longField", F.col("longField") + 1).withColumn("name", F.lit("spliced?")))
    (new_rel,) = latest_files(t).values()
    assert new_rel != old_rel
    rows = _assert_readers_agree(spark, t, new_rel, ["_hoodie_record_key", "id", "name", "longField"])
    assert [r["name"] for r in rows.to_pylist() if r["id"] == 2] == ["spliced?"]


def test_uniform_updates_copy_each_groups_unchanged_columns_and_decimals_round_trip(spark, tmp_path):
    """Updates in every row group that change one column: each group's other chunks are copied (the old file is
    gzip, the upsert writes zstd: copied chunks stay gzip), the changed column (and ts, the ordering field),
    commit times and sequence numbers encoded; decimals (shipped to the merge task as doubles when precision
    <= 15) read back exactly."""
    from decimal import Decimal

    ddl = "id int, ts long, price decimal(15,2), wide decimal(18,4), v string"
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="uniform_t", record_key_fields=["id"], precombine_field="ts")
    rows = [(i, 1, Decimal(i * 37 - 50_000) / 100, Decimal(i * 1_000_003 - 7) / 10_000, f"v{i:05d}" + "x" * 40)
            for i in range(3000)]
    t.insert(spark.createDataFrame(rows, ddl), options={**SMALL, "hoodie.parquet.compression.codec": "gzip"})
    (old_rel,) = latest_files(t).values()
    old = t.storage.full_path(old_rel)
    groups = pq.ParquetFile(old).metadata.num_row_groups
    assert groups >= 10
    updated = list(range(0, 3000, 25))  # a few rows of every group
    changed = {i: Decimal(-i - 1) / 100 for i in updated}
    t.upsert(spark.createDataFrame([(i, 2, changed[i], *rows[i][3:]) for i in updated]
                                   + [(5000, 2, Decimal("9999999999999.99"), Decimal("99999999999999.9999"), "ins")],
                                   ddl), options=SMALL)
    (new_rel,) = latest_files(t).values()
    new = t.storage.full_path(new_rel)
    meta = pq.ParquetFile(new).metadata
    old_counts = [pq.ParquetFile(old).metadata.row_group(g).num_rows for g in range(groups)]
    # Each old group one new group; the small last one takes the insert.
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == old_counts[:-1] + [old_counts[-1] + 1]
    for g in range(groups - 1):
        codecs = {meta.row_group(g).column(j).path_in_schema: meta.row_group(g).column(j).compression
                  for j in range(meta.num_columns)}
        assert {c for c, codec in codecs.items() if codec != "GZIP"} == \
            {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name", "ts", "price"}, f"row group {g}"
    got = _assert_readers_agree(spark, t, new_rel)
    by_id = {r["id"]: r for r in got.to_pylist()}
    assert len(by_id) == 3001 and by_id[5000]["price"] == Decimal("9999999999999.99")
    for i, row in enumerate(rows):
        assert (by_id[i]["price"], by_id[i]["wide"], by_id[i]["v"]) == (changed.get(i, row[2]), row[3], row[4])
    spark_rows = {r["id"]: (r["price"], r["wide"]) for r in t.read().select("id", "price", "wide").collect()}
    assert spark_rows == {i: (r["price"], r["wide"]) for i, r in by_id.items()}

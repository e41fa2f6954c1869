"""hoodpy reads the Java Hudi 0.14 merge-on-read sample tables (table version 6, parquet log blocks) as hudi-rs
does: snapshot (base files merged with their logs), read-optimized (base files only), time travel to every
deltacommit and incremental ranges. Its table services (but rollback) are refused and leave every file as it was.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import hudi_rs
from hudi_rs import COMMIT_TIME, RECORD_KEY
from java_samples import MOR_V6, file_digests, unzip_sample
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.log_file import DELETE_RECORD_LIST_SCHEMA
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format

pytestmark = [pytest.mark.compat, pytest.mark.spark]

# name -> what it exercises (its .sql beside the zip wrote it)
SAMPLES = {
    "v6_nonpartitioned": "an update in a log file and an insert into a new base file in one deltacommit",
    "v6_nonpartitioned_rollback": "a deltacommit rolled back by a command block in a new log version",
    "v6_complexkeygen_hivestyle": "composite keys, two partition fields, hive-style paths",
    "v6_simplekeygen_nonhivestyle": "plain partition folders",
    "v6_simplekeygen_nonhivestyle_overwritetable": "a replacecommit replacing groups with logs",
}


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("java_mor_samples")


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request, samples_dir) -> str:
    return str(unzip_sample(f"{MOR_V6}/{request.param}", samples_dir))


def test_snapshot_matches_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    theirs = hudi_rs.snapshot(sample)
    assert theirs and hudi_rs.df_rows(table.read()) == theirs
    # Some slice really was merged: a row's commit time is that of a deltacommit that wrote only logs.
    assert hudi_rs.df_rows(table.read()) != hudi_rs.df_rows(table.read(query_type="read_optimized")) or \
        "overwritetable" in sample


def test_read_optimized_matches_hudi_rs(spark, sample):
    theirs = hudi_rs.read_optimized(sample)
    assert hudi_rs.df_rows(HoodieTable.for_path(spark, sample).read(query_type="read_optimized")) == theirs
    # The same through Hudi's option, as a table option.
    by_option = HoodieTable.for_path(spark, sample, options={"hoodie.datasource.query.type": "read_optimized"})
    assert hudi_rs.df_rows(by_option.read()) == theirs


def test_time_travel_and_incremental_match_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    instants = [i.timestamp for i in table.timeline.completed_commits()]
    assert len(instants) >= 2
    for instant in instants:
        assert hudi_rs.df_rows(table.read(as_of=instant)) == hudi_rs.snapshot(sample, as_of=instant), instant
        ro = hudi_rs.df_rows(table.read(as_of=instant, query_type="read_optimized"))
        assert ro == hudi_rs.read_optimized(sample, as_of=instant), instant
    for start, end in zip(instants, instants[1:]):
        ours = hudi_rs.df_rows(table.read_incremental(start, end))
        assert ours == hudi_rs.incremental(sample, start, end), (start, end)


def test_rolled_back_deltacommit_stays_out(spark, samples_dir):
    """Bob (id 2) was updated by the rolled-back deltacommit and again by the next one: the snapshot shows the
    later update from log.3, read-optimized the base row; the rolled-back block in log.1 never shows."""
    path = str(unzip_sample(f"{MOR_V6}/v6_nonpartitioned_rollback", samples_dir / "rb"))
    table = HoodieTable.for_path(spark, path)
    rows = {r[RECORD_KEY]: r for r in hudi_rs.df_rows(table.read())}
    assert (rows["2"]["isActive"], rows["2"][COMMIT_TIME]) == (True, "20250126060846931")
    assert {r[COMMIT_TIME] for r in rows.values()} == {"20250126040823628", "20250126060846931"}
    ro = {r[RECORD_KEY]: r for r in hudi_rs.df_rows(table.read(query_type="read_optimized"))}
    assert (ro["2"]["isActive"], ro["2"][COMMIT_TIME]) == (False, "20250126040823628")


def test_virtual_keys_sample_data_columns(spark, samples_dir):
    """populate.meta.fields=false: hudi-rs returns no meta columns; the data columns agree. (No log files in
    this sample; virtual-key meta values are the key-generator work's.)"""
    path = str(unzip_sample(f"{MOR_V6}/v6_simplekeygen_hivestyle_no_metafields", samples_dir))
    theirs = hudi_rs.snapshot(path)
    columns = list(theirs[0])
    assert not set(columns) & set(META_COLUMNS)
    ours = HoodieTable.for_path(spark, path).read().select(*columns)
    assert sorted(hudi_rs.df_rows(ours), key=lambda r: r["id"]) == sorted(theirs, key=lambda r: r["id"])


def test_empty_sample(spark, samples_dir):
    path = str(unzip_sample(f"{MOR_V6}/v6_empty", samples_dir))
    df = HoodieTable.for_path(spark, path).read()
    assert df.columns == [*META_COLUMNS, "id", "name", "isActive"] and df.count() == 0
    assert hudi_rs.snapshot(path) == []


def test_a_write_cannot_change_the_table_type(spark, samples_dir):
    """Writes into a merge-on-read table work (tests/spark/test_mor_java_samples.py), and so do its table services
    (tests/spark/mor_services); an option naming another table type is refused before a file changes."""
    path = str(unzip_sample(f"{MOR_V6}/v6_nonpartitioned", samples_dir / "w"))
    before = file_digests(path)
    table = HoodieTable.for_path(spark, path)
    batch = table.read().drop(*META_COLUMNS).withColumn("longField", F.col("longField") + F.lit(1))
    # An option cannot talk it into a copy-on-write write.
    with pytest.raises(InvalidConfigError, match="hoodie.table.type"):
        table.upsert(batch, options={"hoodie.table.type": "COPY_ON_WRITE"})
    assert file_digests(path) == before


def test_bad_query_type(spark, samples_dir):
    path = str(unzip_sample(f"{MOR_V6}/v6_nonpartitioned", samples_dir / "q"))
    table = HoodieTable.for_path(spark, path)
    with pytest.raises(InvalidConfigError, match="hoodie.datasource.query.type"):
        table.read(query_type="fast")
    with pytest.raises(InvalidConfigError, match="read_incremental"):
        table.read(query_type="incremental")


def test_truncated_log_block_is_skipped(spark, samples_dir):
    """A crashed append leaves half a block at the end of a log file: hoodpy skips it as Hudi's reader does,
    and reads what hudi-rs reads (which also ignores it) and what the table held before."""
    path = str(unzip_sample(f"{MOR_V6}/v6_nonpartitioned", samples_dir / "t"))
    before = hudi_rs.df_rows(HoodieTable.for_path(spark, path).read())
    [log] = [p for p in Path(path).iterdir() if ".log." in p.name]
    data = log.read_bytes()
    log.write_bytes(data + data[:len(data) // 2])
    after = hudi_rs.df_rows(HoodieTable.for_path(spark, path).read())
    assert after == before == hudi_rs.snapshot(path)


def test_sql_reads_and_writes_an_adopted_mor_table(spark, samples_dir):
    """Through the SQL layer (its planned-read cache is for copy-on-write listings): SELECT merges the logs, and
    INSERT INTO appends a deltacommit that hudi-rs reads as hoodpy does."""
    from sql_ext import disable, enable

    path = str(unzip_sample(f"{MOR_V6}/v6_nonpartitioned_rollback", samples_dir / "sql"))
    enable(spark)
    try:
        spark.sql(f"CREATE TABLE mor_rollback USING hoodpy LOCATION '{path}'")
        assert hudi_rs.df_rows(spark.sql("SELECT * FROM mor_rollback")) == hudi_rs.snapshot(path)
        [row] = spark.sql("SELECT isActive, _hoodie_commit_time FROM mor_rollback WHERE id = 2").collect()
        assert (row.isActive, row._hoodie_commit_time) == (True, "20250126060846931")
        spark.sql("INSERT INTO mor_rollback SELECT id, name, NOT isActive, byteField, shortField, intField, "
                  "longField + 1, floatField, doubleField, decimalField, dateField, timestampField, binaryField, "
                  "arrayField, mapField, structField FROM mor_rollback WHERE id = 2")
        [row] = spark.sql("SELECT isActive FROM mor_rollback WHERE id = 2").collect()
        assert row.isActive is False
        assert hudi_rs.df_rows(spark.sql("SELECT * FROM mor_rollback")) == hudi_rs.snapshot(path)
        assert HoodieTable.for_path(spark, path).timeline.completed_commits()[-1].action.value == "deltacommit"
    finally:
        spark.sql("DROP TABLE IF EXISTS mor_rollback")
        disable(spark)


def _add_deltacommit(path: Path, instant: str, stats: list[tuple[str, str, str]], completed: bool = True) -> None:
    """A deltacommit whose write stats name the given (file id, log file name, base instant)s, shaped like the
    sample's own (its schema included)."""
    meta = json.loads((path / ".hoodie" / "20250117083136333.deltacommit").read_text())
    template = meta["partitionToWriteStats"][""][0]
    meta["partitionToWriteStats"] = {"": [{**template, "fileId": fid, "path": name, "prevCommit": base,
                                           "logFiles": [name], "baseFile": ""} for fid, name, base in stats]}
    (path / ".hoodie" / f"{instant}.deltacommit.requested").write_bytes(b"")
    (path / ".hoodie" / f"{instant}.deltacommit.inflight").write_bytes(b"{}")
    if completed:
        (path / ".hoodie" / f"{instant}.deltacommit").write_text(json.dumps(meta))


def _parquet_block(instant: str, schema: str, rows: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(rows, sink, compression="gzip")
    return log_format.encode_block(log_format.PARQUET_DATA_BLOCK,
                                   {log_format.INSTANT_TIME: instant, log_format.SCHEMA: schema},
                                   sink.getvalue().to_pybytes())


def test_deletes_and_a_group_of_logs_only_match_hudi_rs(spark, samples_dir):
    """Log files added by hand to a copy of a Java sample, each as Java lays them out: a delete block (key 3,
    ordering value long 0) in a new log version of the existing group; a new file group made of one log file
    (key 5) named after the deltacommit that created it; a block of a deltacommit that never completed."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", samples_dir / "hand")
    [java_log] = [p for p in path.iterdir() if ".log." in p.name]
    fid, base = java_log.name[1:].split("_")[0], "20250117083125837"
    [block] = log_format.scan_blocks(java_log.read_bytes())
    schema = block.header[log_format.SCHEMA]
    row = pq.read_table(pa.BufferReader(block.content))  # key 1's update, every column in the writer's types

    t3, t4 = "20250117090000000", "20250117090000001"
    payload = io.BytesIO()
    fastavro.schemaless_writer(payload, fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA), {"deleteRecordList": [
        {"recordKey": "3", "partitionPath": "", "orderingVal": 0}]})
    delete = log_format.encode_block(log_format.DELETE_BLOCK, {log_format.INSTANT_TIME: t3, log_format.SCHEMA: schema},
                                     struct.pack(">ii", 3, len(payload.getvalue())) + payload.getvalue())
    delete_log = f".{fid}_{base}.log.2_0-1-1"
    (path / delete_log).write_bytes(delete)
    new_fid = "00000005-aaaa-4bbb-8ccc-dddddddddddd-0"
    new_row = (row.set_column(row.schema.get_field_index(RECORD_KEY), RECORD_KEY, pa.array(["5"]))
               .set_column(row.schema.get_field_index("id"), "id", pa.array([5], pa.int32()))
               .set_column(row.schema.get_field_index(COMMIT_TIME), COMMIT_TIME, pa.array([t3]))
               .set_column(row.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name", pa.array([new_fid])))
    new_log = f".{new_fid}_{t3}.log.1_0-1-2"
    (path / new_log).write_bytes(_parquet_block(t3, schema, new_row))
    _add_deltacommit(path, t3, [(fid, delete_log, base), (new_fid, new_log, t3)])
    # A write that never completed: its block must not show (key 2 would change).
    pending = new_row.set_column(row.schema.get_field_index(RECORD_KEY), RECORD_KEY, pa.array(["2"]))
    (path / f".{fid}_{base}.log.3_0-1-3").write_bytes(_parquet_block(t4, schema, pending))
    _add_deltacommit(path, t4, [(fid, f".{fid}_{base}.log.3_0-1-3", base)], completed=False)

    table = HoodieTable.for_path(spark, str(path))
    theirs = hudi_rs.snapshot(str(path))
    assert {(r[RECORD_KEY], r[COMMIT_TIME]) for r in theirs} == {
        ("1", "20250117083136333"), ("2", base), ("4", "20250117083136333"), ("5", t3)}
    assert hudi_rs.df_rows(table.read()) == theirs
    assert hudi_rs.df_rows(table.read(as_of="20250117083136333")) == hudi_rs.snapshot(
        str(path), as_of="20250117083136333")
    assert hudi_rs.df_rows(table.read_incremental("20250117083136333", t3)) == hudi_rs.incremental(
        str(path), "20250117083136333", t3)
    # Read-optimized: base files only, so the delete and the log-only group do not show.
    assert {r[RECORD_KEY] for r in hudi_rs.df_rows(table.read(query_type="read_optimized"))} == {"1", "2", "3", "4"}

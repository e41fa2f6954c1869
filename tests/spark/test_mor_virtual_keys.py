"""Merge-on-read tables with virtual keys (``hoodie.populate.meta.fields=false``), as Java Hudi writes them:

* log data blocks keep the five meta columns in their rows and header schema, all null (Java's append handle
  writes ``writeSchemaWithMetaFields`` and sets no meta value without meta fields); delete blocks name the keys
  and partition paths the key generator computes;
* snapshot reads, time travel, clustering and compaction merge each slice by the keys the key generator
  computes from the key fields (event-time ordering included); compacted and clustered base files keep the
  meta columns null but for the file name, as every virtual-key base file;
* incremental and CDC reads are refused, as Java refuses them (no commit time or key is stored per row); so
  is the record index (built from stored keys), on either table type, before anything is written.

The Java 0.14 sample ``v6_simplekeygen_hivestyle_no_metafields`` (base files only, no log files) and hoodpy-created
tables (version 6 with Avro log blocks, version 9 with parquet ones) go through upserts, a delete and a
compaction; after each step hudi-rs reads the expected rows, as hoodpy does, and hoodie.properties is unchanged.
"""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hoodpy_spark_helpers import rows
from pyspark.sql import functions as F

from java_samples import MOR_V6, file_digests, unzip_sample
from tests.compat import hudi_rs
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.config.properties import parse_properties
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.log_file import data_rows, deleted_records
from hoodpy.meta_fields import FILE_NAME, META_COLUMNS, RECORD_KEY
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import Action

pytestmark = [pytest.mark.spark, pytest.mark.compat]

NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}  # inserts take new base files; updates go to logs
META_SCHEMA = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])


def _props(path: str) -> dict[str, str]:
    props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
    return {k: v for k, v in props.items() if k != "hoodie.table.metadata.partitions"}


def _logs(path: str) -> set[Path]:
    return {p for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts}


def _new_blocks(path: str, before: set[Path]) -> list[log_format.LogBlock]:
    new = _logs(path) - before
    assert new, "the write appended log files"
    return [b for p in sorted(new) for b in log_format.scan_blocks(p.read_bytes())]


def _check_data_blocks(blocks: list[log_format.LogBlock], block_type: int, key_field: str,
                       keys: set[str]) -> None:
    """Data blocks of ``block_type`` hold the records of ``keys`` with every meta column null."""
    data = [b for b in blocks if b.block_type != log_format.DELETE_BLOCK]
    assert data and {b.block_type for b in data} == {block_type}
    for block in data:
        schema = block.header[log_format.SCHEMA]
        assert all(f'"name":"{c}"' in schema.replace(" ", "") for c in META_COLUMNS)
        stored = data_rows(block, pa.schema([*META_SCHEMA, pa.field(key_field, pa.int32())]))
        for column in META_COLUMNS:
            assert stored.column(column).null_count == stored.num_rows, column
    assert {str(k) for b in data for k in data_rows(b, pa.schema([pa.field(key_field, pa.int32())]))
            .column(key_field).to_pylist()} == keys


def _check_virtual_base_files(table: HoodieTable, paths: list[str]) -> None:
    """Base files as Java writes them with virtual keys: meta columns null but the file name."""
    assert paths
    for rel in paths:
        stored = pq.read_table(table.storage.full_path(rel))
        assert stored.schema.names[:5] == list(META_COLUMNS)
        for column in META_COLUMNS[:4]:
            assert stored.column(column).null_count == stored.num_rows, column
        assert set(stored.column(FILE_NAME).to_pylist()) <= {rel.rsplit("/", 1)[-1]}


def _compact(table: HoodieTable, path: str) -> str:
    """Compact every slice with logs; checks the new base files and the commit's write stats: at versions 8
    and 9 each names the base file it replaced as ``prevBaseFile`` (Java 1.x's merge handle), version 6's JSON
    has no such field (Hudi 0.14's HoodieWriteStat)."""
    replaced = {(s.partition_path, s.file_id): s.base_file.file_name if s.base_file is not None else None
                for s in table.file_system_view().latest_file_slices() if s.log_files}
    [result] = table.compaction.run()
    [done] = [i for i in table.timeline.completed_commits() if i.timestamp == result.instant_time]
    assert done.action == Action.COMMIT
    stats = table.timeline.commit_metadata(done).write_stats
    _check_virtual_base_files(table, [s.path for s in stats])
    assert not [s for s in table.file_system_view().latest_file_slices() if s.log_files]
    [commit_file] = Path(path, ".hoodie").rglob(f"{result.instant_time}*.commit")
    raw = commit_file.read_bytes()
    if raw.startswith(b"Obj"):
        [record] = fastavro.reader(io.BytesIO(raw))
        written = [s for group in record["partitionToWriteStats"].values() for s in group]
        assert {(s["partitionPath"], s["fileId"]): s["prevBaseFile"] for s in written} == replaced
        assert all(s["totalLogReadTimeMs"] == s["runtimeStats"]["totalScanTime"] for s in written)
    else:
        assert b"prevBaseFile" not in raw and b"totalLogReadTimeMs" not in raw
    return result.instant_time


# -- the Java sample --------------------------------------------------------------------------------------
JAVA = "v6_simplekeygen_hivestyle_no_metafields"
JAVA_COLUMNS = ("id", "name", "longField", "byteField")


def _java_state(table: HoodieTable, path: str) -> list[tuple]:
    """hoodpy's rows (no meta columns), asserted equal to hudi-rs's, snapshot and read-optimized."""
    df = table.read()
    assert not set(META_COLUMNS) & set(df.columns)
    mine = rows(df, *JAVA_COLUMNS)
    assert mine == hudi_rs.snapshot_tuples(path, JAVA_COLUMNS)
    # Some columns, not the key fields: the merge still computes the keys from them (nothing pruned before it).
    some = table.read(columns=["name", "longField"])
    assert some.columns == ["name", "longField"]
    assert rows(some, "name", "longField") == rows(df, "name", "longField")
    ro = rows(table.read(query_type="read_optimized"), *JAVA_COLUMNS)
    assert ro == sorted(tuple(r[c] for c in JAVA_COLUMNS) for r in hudi_rs.read_optimized(path))
    return mine


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
def test_java_sample_upsert_delete_compaction(spark, tmp_path, fmt):
    path = str(unzip_sample(f"{MOR_V6}/{JAVA}", tmp_path))
    props = _props(path)
    assert props["hoodie.populate.meta.fields"] == "false" and not _logs(path)  # the sample has no log files
    table = HoodieTable.for_path(spark, path, options={**NO_SMALL_FILES, "hoodie.logfile.data.block.format": fmt})
    before = _java_state(table, path)
    assert [r[:2] for r in before] == [(1, "Alice"), (2, "Bob"), (3, "Carol"), (4, "Diana")]

    # Alice and Carol renamed, Carol with a smaller ordering value: the sample's payload class
    # (OverwriteWithLatestAvroPayload) orders by commit time, so both updates win. And a new key.
    source = table.read().filter(F.col("id").isin(1, 3))
    change = (source.withColumn("name", F.upper("name"))
              .withColumn("longField", F.when(F.col("id") == 1, F.col("longField") + 1).otherwise(F.lit(0))))
    insert = source.filter(F.col("id") == 1).withColumn("id", F.lit(5)).withColumn("name", F.lit("Eve"))
    logs = _logs(path)
    upsert = table.upsert(change.unionByName(insert))
    assert (upsert.num_update_writes, upsert.num_inserts) == (2, 1)
    block_type = log_format.PARQUET_DATA_BLOCK if fmt == "parquet" else log_format.AVRO_DATA_BLOCK
    _check_data_blocks(_new_blocks(path, logs), block_type, "id", {"1", "3"})
    expected = {r[0]: r for r in before}
    expected[1] = (1, "ALICE", before[0][2] + 1, 10)
    expected[3] = (3, "CAROL", 0, 10)
    expected[5] = (5, "Eve", before[0][2], 10)
    assert _java_state(table, path) == sorted(expected.values())

    logs = _logs(path)
    assert table.delete(table.read().filter(F.col("id") == 2)).num_deletes == 1
    [block] = _new_blocks(path, logs)
    assert [(d.record_key, d.partition_path) for d in deleted_records(block)] == [("2", "byteField=20")]
    del expected[2]
    assert _java_state(table, path) == sorted(expected.values())

    _compact(table, path)
    assert _java_state(table, path) == sorted(expected.values())
    assert _props(path) == props


# -- tables hoodpy creates --------------------------------------------------------------------------------
DDL = "id int, name string, ts long, city string"
DATA = ("id", "name", "ts", "city")


def _state(table: HoodieTable, path: str, expected: dict[int, tuple]) -> None:
    want = sorted(expected.values())
    assert table.read().columns == list(DATA)
    assert rows(table.read(), *DATA) == want
    assert rows(table.read(columns=["name", "ts"]), "name", "ts") == rows(table.read(), "name", "ts")
    assert hudi_rs.snapshot_tuples(path, DATA) == want
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == hudi_rs.read_optimized(path)


@pytest.mark.parametrize(("version", "fmt"), [(6, "avro"), (9, "parquet")])
def test_hoodpy_table_writes_compaction_and_clustering(spark, tmp_path, version, fmt):
    path = str(tmp_path / "vk_mor")
    table = HoodieTable.create(spark, path, table_name="vk_mor", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts", table_type="MERGE_ON_READ", hive_style_partitioning=True,
                               table_properties={"hoodie.populate.meta.fields": "false"},
                               options={"hoodie.write.table.version": str(version), **NO_SMALL_FILES,
                                        "hoodie.logfile.data.block.format": fmt})
    expected = {1: (1, "a", 1, "sf"), 2: (2, "b", 1, "sf"), 3: (3, "c", 1, "la")}
    table.insert(spark.createDataFrame(list(expected.values()), DDL))
    props = _props(path)  # the first write records the schema
    assert (props["hoodie.table.type"], props["hoodie.populate.meta.fields"]) == ("MERGE_ON_READ", "false")
    _check_virtual_base_files(table, [bf.path for bf in table.file_system_view().latest_base_files()])
    _state(table, path, expected)

    # An update that wins by ordering value, one that loses (ts 0 < 1), and a new key.
    logs = _logs(path)
    first = table.upsert(spark.createDataFrame([(1, "A", 5, "sf"), (3, "stale", 0, "la"), (4, "d", 1, "la")], DDL))
    block_type = log_format.PARQUET_DATA_BLOCK if fmt == "parquet" else log_format.AVRO_DATA_BLOCK
    _check_data_blocks(_new_blocks(path, logs), block_type, "id", {"1", "3"})
    expected.update({1: (1, "A", 5, "sf"), 4: (4, "d", 1, "la")})
    _state(table, path, expected)
    after_first = dict(expected)

    table.delete(spark.createDataFrame([(2, None, 9, "sf")], DDL))
    del expected[2]
    _state(table, path, expected)
    # Time travel to the first upsert (versions 8 and 9 travel by completion time, as hudi-rs does).
    [done] = [i for i in table.timeline.completed_commits() if i.timestamp == first.instant_time]
    as_of = done.completion_time or done.timestamp
    assert rows(table.read(as_of=as_of), *DATA) == sorted(after_first.values())
    assert hudi_rs.df_rows(table.read(as_of=as_of)) == hudi_rs.snapshot(path, as_of=as_of)

    # Clustering merges the slices with logs while rewriting them.
    [clustered] = table.clustering.run({ClusteringConfig.SMALL_FILE_LIMIT.key: 10**9})
    _check_virtual_base_files(table, [s.path for s in clustered.metadata.write_stats])
    _state(table, path, expected)

    table.upsert(spark.createDataFrame([(1, "A2", 6, "sf"), (4, "D", 2, "la")], DDL))
    table.delete(spark.createDataFrame([(3, None, 9, "la")], DDL))
    expected.update({1: (1, "A2", 6, "sf"), 4: (4, "D", 2, "la")})
    del expected[3]
    _state(table, path, expected)
    _compact(table, path)
    _state(table, path, expected)
    assert _props(path) == props

    with pytest.raises(InvalidConfigError, match="hoodie.populate.meta.fields"):
        table.read_incremental(first.instant_time)
    assert RECORD_KEY not in table.read(query_type="read_optimized").columns


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(("options", "key"), [
    ({"hoodie.index.type": "RECORD_INDEX"}, "hoodie.index.type"),
    ({"hoodie.metadata.record.index.enable": "true"}, "hoodie.metadata.record.index.enable"),
])
def test_record_index_refused_before_writing(spark, tmp_path, table_type, options, key):
    """The record index is built from stored record keys: with virtual keys it is refused, the table unchanged
    (it failed with an AttributeError while committing before)."""
    path = str(tmp_path / "vk_ri")
    table = HoodieTable.create(spark, path, table_name="vk_ri", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts", table_type=table_type,
                               table_properties={"hoodie.populate.meta.fields": "false"})
    before = file_digests(path)
    with pytest.raises(InvalidConfigError, match="hoodie.populate.meta.fields=false") as info:
        table.insert(spark.createDataFrame([(1, "a", 1, "sf")], DDL), options=options)
    assert info.value.key == key
    assert file_digests(path) == before

"""hudi-rs lists a version 8 table through the metadata table hoodpy keeps (hudi-rs uses it for tables of
version 8 and above whose hoodie.properties lists files; hoodie.metadata.enable=false does not turn that off in
hudi 0.5.0), and reads the same rows and file slices as from a copy without it, now and as of earlier instants.
Garbling the metadata table's base files makes hudi-rs fail: it did read them."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import hudi_rs
from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.inspect.metadata_table import validate_files
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.record_index import RecordIndex
from hoodpy.metadata_table.record_index_writer import table_keys
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline
from java_samples import unzip_sample

pytestmark = [pytest.mark.spark, pytest.mark.compat]

DDL = "id int, p string, ts long, v string"
SMALL_BLOOM = {"hoodie.index.bloom.num_entries": "100"}


def without_metadata_table(path: str, dest: str) -> str:
    shutil.copytree(path, dest)
    storage = Storage(dest)
    props = load_table_properties(storage)
    props["hoodie.table.metadata.partitions"] = ""
    save_table_properties(storage, props)
    shutil.rmtree(Path(dest, ".hoodie", "metadata"))
    return dest


def test_hudi_rs_reads_hoodpys_metadata_table_of_a_version_8_table(spark, tmp_path):
    path = str(tmp_path / "t8")
    options = {**SMALL_BLOOM, "hoodie.write.table.version": "8", "hoodie.metadata.enable": "true",
               "hoodie.metadata.compact.max.delta.commits": "3", "hoodie.clean.automatic": "false"}
    table = HoodieTable.create(spark, path, table_name="mdt_v8", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options=options)
    instants = [table.upsert(spark.createDataFrame([(i, "a", i, "x"), (i + 10, "b", i, "y")], DDL)).instant_time
                for i in range(4)]
    instants.append(table.insert_overwrite(spark.createDataFrame([(100, "b", 9, "z")], DDL)).instant_time)
    assert table.cleaning.run({"hoodie.cleaner.commits.retained": "1"}).total_files_deleted > 0
    extra = table.upsert(spark.createDataFrame([(5, "c", 1, "new")], DDL)).instant_time
    table.rollback_to_instant(extra)
    instants.append(table.upsert(spark.createDataFrame([(1, "a", 9, "x'")], DDL)).instant_time)
    assert validate_files(table.storage).rows == []
    compacted = list(Path(path, ".hoodie", "metadata", ".hoodie", "timeline").glob("*.commit"))
    assert compacted  # the hudi-rs read merges a compacted base file with later log blocks

    bare = without_metadata_table(path, str(tmp_path / "bare"))
    expected = [(0, "a", 0, "x"), (1, "a", 9, "x'"), (2, "a", 2, "x"), (3, "a", 3, "x"), (100, "b", 9, "z")]
    ours = hudi_rs.snapshot(path)
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in ours) == expected
    assert ours == hudi_rs.snapshot(bare)
    assert hudi_rs.df_rows_like(table.read(), ours) == ours
    assert hudi_rs.file_slices(path) == hudi_rs.file_slices(bare)
    for as_of in instants[-3:]:
        assert hudi_rs.snapshot(path, as_of) == hudi_rs.snapshot(bare, as_of), as_of

    garbled = str(tmp_path / "garbled")
    shutil.copytree(path, garbled)
    for f in Path(garbled, ".hoodie", "metadata", "files").glob("*.hfile"):
        f.write_bytes(b"not an hfile")
    with pytest.raises(Exception, match="HFile"):
        hudi_rs.snapshot(garbled)


def test_a_java_metadata_table_compacted_by_hoodpy_reads_alike(spark, tmp_path):
    """Hudi 1.1's metadata table of the v9 sample, updated and compacted by hoodpy writes (column_stats kept and
    compacted too, record_index kept, updated and compacted, its other partitions dropped): hoodpy and
    hudi-rs (through the compacted files partition) read the same rows."""
    path = str(unzip_sample("hudi-rs/sample_table/cow/v9_txns_simple_meta", tmp_path))
    table = HoodieTable.for_path(spark, path, options={"hoodie.metadata.compact.max.delta.commits": "2",
                                                       "hoodie.clean.automatic": "false"})
    rows = table.read().drop(*hudi_rs.META)
    first = sorted(r["txn_id"] for r in rows.select("txn_id").collect())[:2]
    for key in first:
        table.upsert(rows.filter(f"txn_id = '{key}'").withColumn("txn_type", F.lit("UPDATED")))
    metadata = MetadataTable(table.storage)
    compaction = metadata.latest_compaction_time()
    assert compaction > "20260307162449278"  # Java's own compaction was the latest before
    assert metadata.latest_slice().base_file.name.endswith(f"_{compaction}.hfile")
    # column_stats and record_index are kept (hoodpy maintains them) and compacted with files, every file group
    # (as Java's compaction does); the other partitions are dropped.
    assert sorted(p.name for p in Path(path, ".hoodie", "metadata").iterdir()) == [
        ".hoodie", "column_stats", "files", "record_index"]
    record_index = Path(path, ".hoodie", "metadata", "record_index")
    groups = {p.name.lstrip(".").split("_")[0] for p in record_index.iterdir()
              if p.name != ".hoodie_partition_metadata"}
    assert sorted(p.name.split("_")[0] for p in record_index.glob(f"*_{compaction}.hfile")) == sorted(groups)
    found = RecordIndex(table.storage).read_all(Timeline.load(table.storage))
    live = table_keys(table.storage, Timeline.load(table.storage))
    assert {k: (v.partition_path, v.file_id) for k, v in found.items()} == {
        k: (v.partition_path, v.file_id) for k, v in live.items()}
    assert sorted(p.name.split("_")[0] for p in Path(path, ".hoodie", "metadata", "column_stats").glob(
        f"*_{compaction}.hfile")) == ["col-stats-0000-0", "col-stats-0001-0"]
    listed = {n for files in MetadataTable(table.storage).read(Timeline.load(table.storage)).all_files().values()
              for n in files}
    indexed = cs.read_column_stats(table.storage, Timeline.load(table.storage)).values()
    assert Counter(s["fileName"] for s in indexed) == {n: 16 for n in listed}
    assert validate_files(table.storage).rows == []
    theirs = hudi_rs.snapshot(path)
    assert {r["txn_id"] for r in theirs if r["txn_type"] == "UPDATED"} == set(first)
    assert hudi_rs.df_rows_like(table.read(), theirs) == theirs

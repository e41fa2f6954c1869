"""The metadata table's column_stats partition kept by hoodpy (table version 6): after writes, a delete, a
clustering, a clean and a metadata-table compaction it holds exactly the footer statistics of the base files the
files partition lists; a filtered query prunes files from it without opening a footer; enabling it on an existing
table builds it, disabling it drops it; hudi-rs reads the same rows through the metadata table."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.compat import hudi_rs
from hoodpy_spark_helpers import SMALL_BLOOM, rows

from hoodpy.config.properties import load_table_properties
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.read import data_skipping
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
# The metadata cleaner keeps every slice here, so that the partition's build stays to be checked.
ON = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
      "hoodie.clean.automatic": "false", "hoodie.metadata.index.column.stats.enable": "true",
      "hoodie.metadata.cleaner.commits.retained": "100"}
INDEXED = ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "id", "p", "ts", "v"]


def make_table(spark, path: str, options=ON) -> HoodieTable:
    return HoodieTable.create(spark, path, table_name="colstats", record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", options=options)


def index_of(path: str) -> dict[tuple[str, str], tuple]:
    """(file name, column) -> (min, max, null count, value count) of the live column_stats records."""
    storage = Storage(path)
    out = {}
    for stats in cs.read_column_stats(storage, Timeline.load(storage)).values():
        out[(stats["fileName"], stats["columnName"])] = (
            cs.unwrap_value(stats["minValue"], None, None), cs.unwrap_value(stats["maxValue"], None, None),
            stats["nullCount"], stats["valueCount"])
    return out


def recomputed(path: str) -> dict[tuple[str, str], tuple]:
    """The same, from the footers (pyarrow) of the base files the files partition lists."""
    storage = Storage(path)
    listing = MetadataTable(storage).read(Timeline.load(storage))
    out = {}
    for partition, files in listing.all_files().items():
        for name in files:
            if not name.endswith(".parquet"):
                continue
            meta = pq.read_metadata(str(Path(path) / partition / name))
            columns = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
            for column in INDEXED:
                chunks = [meta.row_group(g).column(columns[column]) for g in range(meta.num_row_groups)]
                # A group whose values are all null has no min/max (files may hold several groups).
                lows = [c.statistics.min for c in chunks if c.statistics.has_min_max]
                highs = [c.statistics.max for c in chunks if c.statistics.has_min_max]
                out[(name, column)] = (min(lows, default=None), max(highs, default=None),
                                       sum(c.statistics.null_count for c in chunks),
                                       sum(c.num_values for c in chunks))
    return out


def assert_index_matches(path: str) -> None:
    assert index_of(path) == recomputed(path)


def test_column_stats_follow_writes_delete_clustering_clean_and_compaction(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 2, None), (3, "b", 3, "z")], DDL))
    assert_index_matches(path)
    props = load_table_properties(table.storage)
    assert props["hoodie.table.metadata.partitions"] == "column_stats,files"
    table.upsert(spark.createDataFrame([(2, "a", 5, "y"), (4, "b", 4, "w")], DDL))
    assert_index_matches(path)
    table.delete(spark.createDataFrame([(3, "b", 9, None)], DDL))
    assert_index_matches(path)
    assert table.clustering.run({"hoodie.clustering.plan.strategy.small.file.limit": "100000000"},
                                sort_columns="id") is not None
    assert_index_matches(path)
    table.upsert(spark.createDataFrame([(5, "b", 6, "q")], DDL))
    clean = table.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert clean is not None and clean.total_files_deleted > 0
    assert_index_matches(path)
    # Every base file of the latest slices is indexed (7 columns each); so are the replaced ones the cleaner has
    # not deleted yet (the files partition lists them too, as in Hudi); the cleaned ones are not.
    live = {bf.file_name for bf in table.file_system_view().latest_base_files()}
    indexed = {name for name, _ in index_of(path)}
    assert live <= indexed
    assert all(any(Path(path, p, n).exists() for p in "ab") for n in indexed)

    meta = Path(path, ".hoodie", "metadata")
    col_stats = sorted(p.name for p in (meta / "column_stats").iterdir())
    # Built with files at the first write (00000000000000010 / ...011), compacted with files at <deltacommit>001.
    assert ".col-stats-0000-0_00000000000000011.log.1_0-0-0" in col_stats
    assert "col-stats-0001-0_0-1-0_00000000000000011.hfile" in col_stats
    compacted = [n for n in col_stats if n.endswith("001.hfile") and not n.endswith("00000000000000011.hfile")]
    assert {n.split("_")[0] for n in compacted} == {"col-stats-0000-0", "col-stats-0001-0"}

    expected = [(1, "a", 1, "x"), (2, "a", 5, "y"), (4, "b", 4, "w"), (5, "b", 6, "q")]
    assert rows(table.read(), "id", "p", "ts", "v") == expected
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in hudi_rs.snapshot(path)) == expected
    via_mdt = hudi_rs.rows_of(hudi_rs._to_table(hudi_rs.table(path, {"hoodie.metadata.enable": "true"}).read()))
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in via_mdt) == expected


def test_a_filtered_query_prunes_files_from_column_stats_without_opening_footers(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    # one file each (one Spark partition: sort mode NONE writes a file per task)
    table.bulk_insert(spark.createDataFrame([(i, "a", i, f"v{i}") for i in range(1, 4)], DDL).coalesce(1))
    table.bulk_insert(spark.createDataFrame([(i, "a", i, f"v{i}") for i in range(10, 13)], DDL).coalesce(1))
    footers = []
    real = data_skipping.column_ranges
    monkeypatch.setattr(data_skipping, "column_ranges", lambda storage, files: footers.extend(files) or real(
        storage, files))
    view = table.file_system_view()
    files = view.latest_base_files()
    assert len(files) == 2
    kept = data_skipping.prune_by_column_stats(table.storage, files, [("ts", ">=", 10)], table.arrow_schema(),
                                               view.timeline)
    assert [bf.file_name for bf in kept] == [bf.file_name for bf in files if bf.instant_time == max(
        f.instant_time for f in files)]
    assert footers == []
    assert rows(table.read(filters=[("ts", ">=", 10), ("v", "<", "v12")]), "id") == [(10,), (11,)]
    assert footers == []
    assert data_skipping.prune_by_column_stats(table.storage, files, [("v", "=", "nope")], table.arrow_schema(),
                                               view.timeline) == []
    # Without column_stats the footers decide, with the same result.
    table.upsert(spark.createDataFrame([(20, "a", 20, "x")], DDL),
                 options={"hoodie.metadata.index.column.stats.enable": "false"})
    assert rows(table.read(filters=[("ts", ">=", 10), ("v", "<", "v12")]), "id") == [(10,), (11,)]
    assert footers


def test_enabling_builds_it_on_an_existing_table_and_disabling_drops_it(spark, tmp_path):
    path = str(tmp_path / "t")
    unset = {k: v for k, v in ON.items() if k != "hoodie.metadata.index.column.stats.enable"}
    table = make_table(spark, path, unset)
    table.upsert(spark.createDataFrame([(1, "a", 1, "x"), (2, "b", 2, "y")], DDL))
    table.upsert(spark.createDataFrame([(3, "a", 3, "z")], DDL))
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    table.upsert(spark.createDataFrame([(4, "b", 4, "w")], DDL),
                 options={"hoodie.metadata.index.column.stats.enable": "true"})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "column_stats,files"
    assert_index_matches(path)
    assert len({name for name, _ in index_of(path)}) == 4
    # Unset: the table keeps it.
    table.upsert(spark.createDataFrame([(5, "b", 5, "v")], DDL), options={})
    assert_index_matches(path)
    table.upsert(spark.createDataFrame([(6, "b", 6, "u")], DDL),
                 options={"hoodie.metadata.index.column.stats.enable": "false"})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    assert not Path(path, ".hoodie", "metadata", "column_stats").exists()


def test_a_version_9_table_lays_it_out_as_hudi_1_1_and_hudi_rs_reads_through_it(spark, tmp_path):
    path = str(tmp_path / "t9")
    table = make_table(spark, path, {**ON, "hoodie.write.table.version": "9"})
    for i in range(4):
        table.upsert(spark.createDataFrame([(i, "a", i, "x"), (i + 10, "b", i, None)], DDL))
    assert table.cleaning.run({"hoodie.cleaner.commits.retained": "1"}).total_files_deleted > 0
    assert_index_matches(path)
    stats = cs.read_column_stats(Storage(path), Timeline.load(Storage(path)))
    assert {s["valueType"]["typeOrdinal"] for s in stats.values() if s["columnName"] == "ts"} == {4}  # LONG
    names = sorted(p.name for p in Path(path, ".hoodie", "metadata", "column_stats").iterdir())
    # Initialised at 00000000000000001 as the sample; one log file per deltacommit named after it; compacted.
    assert ".col-stats-0000-0_00000000000000001.log.1_0-0-0" in names
    assert "col-stats-0000-0_0-1-0_00000000000000001.hfile" in names
    assert len([n for n in names if n.startswith("col-stats-0001-0_") and n.endswith(".hfile")]) >= 2
    expected = sorted([(i, "a", i, "x") for i in range(4)] + [(i + 10, "b", i, None) for i in range(4)])
    ours = hudi_rs.snapshot(path)  # hudi-rs lists version 9 tables through the metadata table
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in ours) == expected
    assert rows(table.read(filters=[("ts", ">=", 3)]), "id") == [(3,), (13,)]

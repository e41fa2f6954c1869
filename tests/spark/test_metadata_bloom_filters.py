"""The metadata table's bloom_filters partition kept by hoodpy: after inserts, upserts, a delete, a clustering, a
clean and metadata-table compactions it holds exactly the bloom filters of the base files the files partition
lists, byte-equal to their footers (tombstones for the cleaned ones); the bloom index reads filters from it and
gives the same rows as without, opening only the files a filter admits; enabling it on an existing table builds
it, disabling it drops it; hudi-rs reads the same rows through the metadata table."""

from __future__ import annotations

import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.compat import hudi_rs
from hoodpy_spark_helpers import SMALL_BLOOM, rows

from hoodpy.config.properties import load_table_properties
from hoodpy.index import bloom
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY
from hoodpy.inspect import metadata_table as inspect_mdt
from hoodpy.metadata_table import bloom_filters as bf
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
ON = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
      "hoodie.clean.automatic": "false", "hoodie.metadata.index.bloom.filter.enable": "true"}


def make_table(spark, path: str, options=ON, **kwargs) -> HoodieTable:
    return HoodieTable.create(spark, path, table_name="blooms", record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", options=options, **kwargs)


def merged(path: str) -> dict[str, dict]:
    """key -> newest HoodieMetadataBloomFilter of every record of the partition (tombstones too)."""
    storage = Storage(path)
    return bf.BloomFiltersPartition(MetadataTable(storage)).read(Timeline.load(storage))


def footers(path: str) -> dict[str, tuple[str, str, bytes]]:
    """key -> (type, file's instant, footer filter bytes) of every base file the files partition lists."""
    storage = Storage(path)
    listing = MetadataTable(storage).read(Timeline.load(storage))
    out = {}
    for partition, files in listing.all_files().items():
        for name in files:
            if name.endswith(".parquet"):
                footer = pq.read_metadata(str(Path(path) / partition / name)).metadata
                out[bf.bloom_filter_key(partition, name)] = ("DYNAMIC_V0", name.rsplit("_", 1)[1].split(".")[0],
                                                             footer[FOOTER_BLOOM_FILTER_KEY.encode()])
    return out


def assert_filters_match(path: str, stamped_by_writer: bool = True) -> None:
    """The live records are the listed base files' footer filters; ``stamped_by_writer``: each stamped with the
    instant that wrote the file (not a build's)."""
    live = {k: (v["type"], v["timestamp"], v["bloomFilter"]) for k, v in merged(path).items() if not v["isDeleted"]}
    expected = footers(path)
    if not stamped_by_writer:
        live = {k: (t, b) for k, (t, _, b) in live.items()}
        expected = {k: (t, b) for k, (t, _, b) in expected.items()}
    assert live == expected


def test_bloom_filters_follow_writes_delete_clustering_and_clean(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "x"), (2, "a", 2, None), (3, "b", 3, "z")], DDL))
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "bloom_filters,files"
    assert_filters_match(path)
    table.upsert(spark.createDataFrame([(2, "a", 5, "y"), (4, "b", 4, "w")], DDL))
    assert_filters_match(path)
    table.delete(spark.createDataFrame([(3, "b", 9, None)], DDL))
    assert_filters_match(path)
    assert table.clustering.run({"hoodie.clustering.plan.strategy.small.file.limit": "100000000"},
                                sort_columns="id") is not None
    assert_filters_match(path)
    table.upsert(spark.createDataFrame([(5, "b", 6, "q")], DDL))
    before = set(merged(path))
    clean = table.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert clean is not None and clean.total_files_deleted > 0
    assert_filters_match(path)
    # The cleaned files' records are tombstones stamped with the clean's instant (Java's clean records).
    tombstones = {k: v for k, v in merged(path).items() if v["isDeleted"]}
    assert tombstones and set(tombstones) <= before
    assert all(v["type"] == "" and v["bloomFilter"] == b"" and v["timestamp"] == clean.instant_time
               for v in tombstones.values())

    names = sorted(p.name for p in Path(path, ".hoodie", "metadata", "bloom_filters").iterdir())
    # Built with the files partition at the first write (files at ...010, bloom_filters at ...011), four file
    # groups; the metadata table's compactions (every 3 deltacommits, instants <deltacommit>001) gave each group
    # a new base HFile, and its cleaner removed the slices of the build.
    compactions = [i.timestamp for i in Timeline.load(Storage(path + "/.hoodie/metadata")).completed_commits()
                   if i.action.value == "commit"]
    assert compactions and all(c.endswith("001") for c in compactions)
    for i in range(4):
        assert f"bloom-filters-000{i}-0_0-1-0_{compactions[-1]}.hfile" in names, names
    assert not any("_00000000000000011" in n for n in names), names
    expected = [(1, "a", 1, "x"), (2, "a", 5, "y"), (4, "b", 4, "w"), (5, "b", 6, "q")]
    assert rows(table.read(), "id", "p", "ts", "v") == expected
    via_mdt = hudi_rs.rows_of(hudi_rs._to_table(hudi_rs.table(path, {"hoodie.metadata.enable": "true"}).read()))
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in via_mdt) == expected


class _Opened:
    """pyarrow.parquet as the bloom index sees it, recording the files whose keys it reads."""

    def __init__(self):
        self.paths: list[str] = []

    def module(self):
        def parquet_file(f, *args, **kwargs):
            self.paths.append(f.path if hasattr(f, "path") else str(f))
            return pq.ParquetFile(f, *args, **kwargs)
        return types.SimpleNamespace(ParquetFile=parquet_file, read_metadata=pq.read_metadata)


@pytest.mark.parametrize("index_type", ["BLOOM", "GLOBAL_BLOOM"])
def test_upserts_through_the_metadata_bloom_filters_give_the_same_rows(spark, tmp_path, monkeypatch, index_type):
    results = {}
    for use in ("true", "false"):
        path = str(tmp_path / use)
        options = {**ON, "hoodie.index.type": index_type, "hoodie.bloom.index.use.metadata": use,
                   "hoodie.bloom.index.prune.by.ranges": "false"}
        table = make_table(spark, path, options)
        # Three files in partition a, one in b (bulk inserts never merge into existing files; one Spark
        # partition each, as bulk_insert's default sort mode NONE writes a file per task and partition path).
        for batch in ([1, 2, 3], [10, 11, 12], [20, 21, 22]):
            table.bulk_insert(spark.createDataFrame([(i, "a", i, f"v{i}") for i in batch], DDL).coalesce(1))
        table.bulk_insert(spark.createDataFrame([(30, "b", 30, "w")], DDL).coalesce(1))
        opened = _Opened()
        slices = [s for s in table.file_system_view().latest_file_slices() if s.base_file is not None]
        in_a = [s.base_file for s in slices if s.partition_path.endswith("a")]
        insert_file = min(in_a, key=lambda bf: bf.size)  # the first smallest, as Writer._insert_files picks it
        holder = next(bf for bf in in_a if 11 in pq.read_table(table.storage.full_path(bf.path)).column("id")
                      .to_pylist())
        with monkeypatch.context() as patched:
            if index_type == "BLOOM":  # located on the driver (Spark tasks would not find the patched module)
                patched.setattr(bloom, "pq", opened.module())
            table.upsert(spark.createDataFrame([(11, "a", 100, "new"), (40, "a", 40, "ins")], DDL))
        if index_type == "BLOOM":
            # With the metadata table's filters only the file holding key 11 is opened (the others rule out both
            # keys); with the footers', every file of partition a. The insert file is never looked up: its merge
            # task tells its updates from the inserts it takes.
            assert len(opened.paths) == ((0 if holder is insert_file else 1) if use == "true" else 2)
        table.upsert(spark.createDataFrame([(2, "a", 101, "again"), (30, "b", 102, "b2")], DDL))
        assert_filters_match(path)
        results[use] = rows(table.read(), "id", "p", "ts", "v")
    assert results["true"] == results["false"]
    assert (11, "a", 100, "new") in results["true"] and (30, "b", 102, "b2") in results["true"]
    assert len(results["true"]) == 11


def test_enabling_builds_it_on_an_existing_table_and_disabling_drops_it(spark, tmp_path):
    path = str(tmp_path / "t")
    unset = {k: v for k, v in ON.items() if k != "hoodie.metadata.index.bloom.filter.enable"}
    table = make_table(spark, path, unset)
    table.upsert(spark.createDataFrame([(1, "a", 1, "x"), (2, "b", 2, "y")], DDL))
    table.upsert(spark.createDataFrame([(3, "a", 3, "z")], DDL))
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    latest = max(i.timestamp for i in Timeline.load(table.storage).instants if i.is_completed)
    table.upsert(spark.createDataFrame([(4, "b", 4, "w")], DDL),
                 options={"hoodie.metadata.index.bloom.filter.enable": "true",
                          "hoodie.metadata.index.bloom.filter.file.group.count": "2"})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "bloom_filters,files"
    assert_filters_match(path, stamped_by_writer=False)
    folder = Path(path, ".hoodie", "metadata", "bloom_filters")
    assert {p.name.split("_")[0] for p in folder.iterdir() if p.name.endswith(".hfile")} == {
        "bloom-filters-0000-0", "bloom-filters-0001-0"}
    stats = dict(inspect_mdt.stats(table.storage).rows)
    assert stats["bloom_filters.baseFileCount"] == "2" and int(stats["bloom_filters.logFileCount"]) >= 1
    # The build stamps the filters of the files before it with the latest completed instant (Java's
    # dataInstantTime); the write that enabled it, its own.
    assert latest in {v["timestamp"] for v in merged(path).values()}
    # Unset: the table keeps it.
    table.upsert(spark.createDataFrame([(5, "b", 5, "v")], DDL), options={})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "bloom_filters,files"
    table.upsert(spark.createDataFrame([(6, "b", 6, "u")], DDL),
                 options={"hoodie.metadata.index.bloom.filter.enable": "false"})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    assert not folder.exists()


def test_a_version_9_table_lays_it_out_at_its_own_instant_and_hudi_rs_reads_through_it(spark, tmp_path):
    path = str(tmp_path / "t9")
    # Compaction later than the test's writes: the build's slices stay (a compaction's cleaner removes them).
    table = make_table(spark, path, {**ON, "hoodie.write.table.version": "9",
                                     "hoodie.metadata.compact.max.delta.commits": "10"})
    for i in range(4):
        table.upsert(spark.createDataFrame([(i, "a", i, "x"), (i + 10, "b", i, None)], DDL))
    assert table.cleaning.run({"hoodie.cleaner.commits.retained": "1"}).total_files_deleted > 0
    assert_filters_match(path)
    names = sorted(p.name for p in Path(path, ".hoodie", "metadata", "bloom_filters").iterdir())
    assert ".bloom-filters-0000-0_00000000000000003.log.1_0-0-0" in names
    assert "bloom-filters-0003-0_0-1-0_00000000000000003.hfile" in names
    expected = sorted([(i, "a", i, "x") for i in range(4)] + [(i + 10, "b", i, None) for i in range(4)])
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in hudi_rs.snapshot(path)) == expected
    table.upsert(spark.createDataFrame([(1, "a", 50, "u")], DDL), options={"hoodie.bloom.index.use.metadata": "true"})
    assert (1, "a", 50, "u") in rows(table.read(), "id", "p", "ts", "v")


def test_a_rollback_and_a_restore_leave_the_filters_of_the_files_that_stay(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    saved = table.upsert(spark.createDataFrame([(3, "a", 1, "three")], DDL)).instant_time
    table.savepoints.create(saved)
    kept = set(merged(path))
    later = [table.upsert(spark.createDataFrame([(i, "c", 1, "later"), (1, "a", i, "x")], DDL)).instant_time
             for i in (4, 5, 6)]
    table.rollback_to_instant(later[-1])
    assert_filters_match(path)
    table.savepoints.rollback_to(saved)
    assert_filters_match(path)
    # The files the restore deleted have tombstones; the rest are the records from before the savepoint.
    assert {k for k, v in merged(path).items() if not v["isDeleted"]} == kept
    assert rows(table.read(), "id") == [(1,), (2,), (3,)]
    table.upsert(spark.createDataFrame([(1, "a", 9, "nine")], DDL), options={"hoodie.bloom.index.use.metadata": "true"})
    assert rows(table.read(), "id", "v") == [(1, "nine"), (2, "two"), (3, "three")]
    assert_filters_match(path)


def test_merge_on_read_log_writes_add_no_filters_and_a_compaction_adds_its_base_files(spark, tmp_path):
    path = str(tmp_path / "mor")
    table = make_table(spark, path, {**ON, "hoodie.bloom.index.use.metadata": "true"}, table_type="MERGE_ON_READ")
    # one Spark partition: one file per partition path (sort mode NONE writes a file per task and path)
    table.bulk_insert(spark.createDataFrame([(i, "ab"[i % 2], 1, "x") for i in range(8)], DDL).coalesce(1))
    before = dict(merged(path))
    assert len(before) == 2
    table.upsert(spark.createDataFrame([(0, "a", 2, "u"), (1, "b", 2, "u")], DDL))
    assert list(Path(path).rglob(".*.log.*"))
    assert merged(path) == before  # a delta write stat's log files get no record (as Java)
    table.compaction.run()
    assert_filters_match(path)
    assert len(merged(path)) == 4  # the compacted base files beside the (not yet cleaned) first ones
    table.upsert(spark.createDataFrame([(3, "b", 3, "after"), (0, "a", 3, "again")], DDL))
    assert_filters_match(path)
    assert rows(table.read(), "id", "v") == [(0, "again"), (1, "u"), (2, "x"), (3, "after"), (4, "x"), (5, "x"),
                                             (6, "x"), (7, "x")]

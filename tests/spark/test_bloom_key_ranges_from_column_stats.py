"""The bloom index's key ranges from the metadata table's column_stats (hoodie.bloom.index.use.metadata=true):
the min / max of _hoodie_record_key it holds are the footers' hoodie_min/max_record_key of every base file, an
upsert then opens no footer for ranges (without the option it opens one per file), and both give the same rows;
a file column_stats does not index falls back to its footer."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, key_range, rows

from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.index import bloom
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string"
ON = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
      "hoodie.clean.automatic": "false", "hoodie.index.type": "BLOOM",
      # One file per bulk_insert (the default NONE writes one per Spark task of the batch).
      "hoodie.bulkinsert.sort.mode": "GLOBAL_SORT"}


def _batch(spark, ids, p="a", ts=1):
    return spark.createDataFrame([(f"k{i:03d}", p, ts, f"v{i}") for i in ids], DDL)


def test_key_ranges_come_from_column_stats_and_no_footer_is_opened(spark, tmp_path, monkeypatch):
    results, opened = {}, {}
    for use in ("true", "false"):
        path = str(tmp_path / use)
        table = HoodieTable.create(spark, path, table_name="ranges", record_key_fields=["id"], partition_fields=["p"],
                                   precombine_field="ts", options={**ON, "hoodie.bloom.index.use.metadata": use})
        for ids in (range(0, 10), range(20, 30), range(40, 50)):
            table.bulk_insert(_batch(spark, ids))
        table.bulk_insert(_batch(spark, range(60, 65), p="b"))
        storage = Storage(path)
        files = FileSystemView.load(storage, Timeline.load(storage)).latest_base_files()
        assert len(files) == 4
        if use == "true":
            # Exactly the footers' ranges, for every file.
            assert bloom.metadata_key_ranges(storage, files) == {
                bf.path: key_range(table, bf.path) for bf in files}
        calls: list[str] = []
        real = bloom._key_range.__wrapped__
        monkeypatch.setattr(bloom, "_key_range", lambda uri, rel: calls.append(rel) or real(uri, rel))
        table.upsert(_batch(spark, [25, 70], ts=2))
        monkeypatch.undo()
        opened[use] = len(calls)
        results[use] = rows(table.read(), "id", "p", "ts", "v")
    # The files of partition a, the batch's only partition, its insert file's too: it is not looked up (its merge
    # task tells updates from inserts, see Writer._insert_files), but its range tells which batch keys only one
    # other file may hold (sent there unconfirmed, see bloom.locate_on_driver).
    assert opened == {"true": 0, "false": 3}
    assert results["true"] == results["false"]
    assert ("k025", "a", 2, "v25") in results["true"] and len(results["true"]) == 36


def test_a_file_column_stats_lacks_falls_back_to_its_footer(spark, tmp_path):
    path = str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="ranges", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options={**ON, "hoodie.bloom.index.use.metadata": "true",
                                                               "hoodie.metadata.index.column.stats.column.list": "v"})
    table.bulk_insert(_batch(spark, range(0, 5)))
    storage = Storage(path)
    files = FileSystemView.load(storage, Timeline.load(storage)).latest_base_files()
    assert bloom.metadata_key_ranges(storage, files) == {}  # _hoodie_record_key is not indexed
    assert bloom.key_ranges(storage, files, use_metadata=True) == [("k000", "k004")]
    table.upsert(_batch(spark, [3], ts=2))
    assert ("k003", "a", 2, "v3") in rows(table.read(), "id", "p", "ts", "v")

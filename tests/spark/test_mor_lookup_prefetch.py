"""A merge-on-read upsert of an unpartitioned table under the BLOOM index: the key columns of the base files the
driver's lookup will confirm candidates in (those whose bloom filter is saturated, but the small file taking the
inserts) are read on a driver thread while the Spark job collecting the batch's keys runs, and the lookup uses
them. Same rows, files and timeline as reading them in the lookup; hudi-rs reads the table as hoodpy does."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import hoodpy.write.writer as writer_module
from hoodpy.index.bloom import FOOTER_BLOOM_FILTER_KEY, BloomFilter, saturated_files_keys
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

DDL = "id string, ts long, v string"
# A filter sized for one key: a file of a dozen keys saturates it, so every batch key is a candidate there.
SATURATED = {"hoodie.index.bloom.num_entries": "1", "hoodie.bloom.index.filter.dynamic.max.entries": "1"}


def _table(spark, path: str) -> tuple[HoodieTable, object, object]:
    """Two file groups: the smaller (keys b00..b04) and the larger (k00..k39)."""
    table = HoodieTable.create(spark, path, table_name="mor_prefetch", record_key_fields=["id"],
                               precombine_field="ts", table_type="MERGE_ON_READ", options=SATURATED)
    for prefix, n in (("b", 5), ("k", 40)):
        table.insert(spark.createDataFrame([(f"{prefix}{i:02d}", 1, "x") for i in range(n)], DDL).coalesce(1),
                     options={"hoodie.parquet.small.file.limit": "0", **SATURATED})
    small, large = sorted(table.file_system_view().latest_base_files(), key=lambda bf: bf.size)
    return table, small, large


def _footer_fpr(path: str) -> float:
    text = pq.ParquetFile(path).metadata.metadata[FOOTER_BLOOM_FILTER_KEY.encode()]
    return BloomFilter.deserialize(text.decode()).false_positive_rate()


def test_the_lookup_uses_the_keys_read_while_the_batch_is_collected(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    table, small, large = _table(spark, path)
    assert _footer_fpr(f"{path}/{large.path}") > 0.5  # saturated: the lookup reads its key column
    prefetches, lookups = [], []
    real_prefetch, real_locate = writer_module.saturated_files_keys, writer_module.locate_on_driver

    def prefetch(storage, files):
        prefetches.append({bf.file_id for bf in files})
        return real_prefetch(storage, files)

    def locate(storage, keys, files, **kwargs):
        lookups.append(({bf.file_id for bf in files}, kwargs.get("prefetched")))
        return real_locate(storage, keys, files, **kwargs)

    monkeypatch.setattr(writer_module, "saturated_files_keys", prefetch)
    monkeypatch.setattr(writer_module, "locate_on_driver", locate)
    # An update of each file and inserts: the small file takes the inserts and its update (merged into a new
    # base file by its task); the large file's update goes to its log, located with the prefetched keys.
    changes = [("b02", 2, "u"), ("k17", 2, "u")] + [(f"z{i}", 2, "n") for i in range(3)]
    result = table.upsert(spark.createDataFrame(changes, DDL).coalesce(1), options=SATURATED)
    assert prefetches == [{large.file_id}]
    (files, prefetched), = lookups
    assert files == {large.file_id}
    assert set(prefetched) == {large.path}
    assert sorted(k for keys in prefetched[large.path].values() for k in keys.to_pylist()) == \
        [f"k{i:02d}" for i in range(40)]
    stats = {s.file_id: s for s in result.metadata.write_stats}
    assert stats[large.file_id].is_log_write and stats[large.file_id].num_update_writes == 1
    assert not stats[small.file_id].is_log_write
    assert (stats[small.file_id].num_inserts, stats[small.file_id].num_update_writes) == (3, 1)
    rows = {r["_hoodie_record_key"]: (r["ts"], r["v"]) for r in hudi_rs.df_rows(table.read())}
    expected = {f"b{i:02d}": (1, "x") for i in range(5)} | {f"k{i:02d}": (1, "x") for i in range(40)}
    assert rows == expected | {k: (ts, v) for k, ts, v in changes}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(path)
    assert len(list(Path(path).glob(".*.log.*"))) == 1


def test_files_with_a_working_filter_are_not_read(spark, tmp_path):
    """A filter sized for its keys rules absent keys out: its file's keys are not read ahead."""
    path = str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="mor_prefetch2", record_key_fields=["id"],
                               precombine_field="ts", table_type="MERGE_ON_READ")
    table.insert(spark.createDataFrame([(f"k{i:02d}", 1, "x") for i in range(40)], DDL).coalesce(1))
    saturated, _, _ = _table(spark, str(tmp_path / "s"))
    (sized,) = table.file_system_view().latest_base_files()
    full = sorted(saturated.file_system_view().latest_base_files(), key=lambda bf: bf.size)[-1]
    assert list(saturated_files_keys(table.storage, [sized])) == []
    read = saturated_files_keys(saturated.storage, [full])
    assert list(read) == [full.path] and sum(len(keys) for keys in read[full.path].values()) == 40

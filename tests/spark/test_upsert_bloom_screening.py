"""The driver lookup's use of footer bloom filters in copy-on-write upserts, for candidates only one file's key
range holds (hoodpy.index.bloom._sole_candidates): a healthy filter rules new keys out (inserts for the plan) and
passes the file's own, unconfirmed; a saturated one (far more keys than its sizing, as Hudi's default filter of a
multi-million-key file) is not probed, every candidate goes to the file unconfirmed, and its merge task tells
updates from inserts. No key column is read on the driver either way. Rows and write stats are exact."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import by_key

from hoodpy.index import bloom
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY, BloomFilter
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, p string, v string"
NEW_GROUP = {"hoodie.parquet.small.file.limit": "0"}


def _table(spark, path: str, options: dict) -> tuple[HoodieTable, str, str]:
    """Partition a: file X (ids 1000-1099, the smaller: it takes inserts) and Y (ids 1100-1499)."""
    t = HoodieTable.create(spark, path, table_name="screen_t", record_key_fields=["id"], partition_fields=["p"],
                           options=options)
    t.insert(spark.createDataFrame([(i, "a", f"x{i}") for i in range(1000, 1100)], DDL), options=NEW_GROUP)
    (x,) = [bf.file_id for bf in t.file_system_view().latest_base_files()]
    t.insert(spark.createDataFrame([(i, "a", f"y{i}") for i in range(1100, 1500)], DDL), options=NEW_GROUP)
    (y,) = [bf.file_id for bf in t.file_system_view().latest_base_files() if bf.file_id != x]
    return t, x, y


@pytest.fixture
def reads(monkeypatch):
    """Per upsert: how often a file's key column was read and the filter probed on the driver."""
    seen = {"key_columns": 0, "probes": 0}
    stored, probe, probe_many = bloom._stored_keys_for, BloomFilter.might_contain_none, BloomFilter.might_contain_many

    def stored_spy(*a, **k):
        seen["key_columns"] += 1
        return stored(*a, **k)

    def probe_spy(self, *a, **k):
        seen["probes"] += 1
        return probe(self, *a, **k)

    def probe_many_spy(self, *a, **k):
        seen["probes"] += 1
        return probe_many(self, *a, **k)

    monkeypatch.setattr(bloom, "_stored_keys_for", stored_spy)
    monkeypatch.setattr(BloomFilter, "might_contain_none", probe_spy)
    monkeypatch.setattr(BloomFilter, "might_contain_many", probe_many_spy)
    return seen


def _footer_filter(t: HoodieTable, file_id: str) -> BloomFilter:
    import pyarrow.parquet as pq

    (bf,) = [b for b in t.file_system_view().latest_base_files() if b.file_id == file_id]
    meta = pq.read_metadata(t.storage.full_path(bf.path)).metadata
    return BloomFilter.deserialize(meta[FOOTER_BLOOM_FILTER_KEY.encode()].decode())


def test_a_healthy_filter_keeps_the_key_column_unread(spark, tmp_path, reads):
    t, x, y = _table(spark, str(tmp_path / "t"), {})
    assert _footer_filter(t, y).false_positive_rate() < 1e-6
    # 1050 is in X (the insert file, not looked up); 11000 sorts inside Y's key range ("1100".."1499") but is
    # new: Y's filter rules it out and Y's keys stay unread.
    result = t.upsert(spark.createDataFrame([(1050, "a", "x1050-new"), (11000, "a", "new11000"),
                                             (2000, "a", "new2000")], DDL))
    assert reads == {"key_columns": 0, "probes": 1}
    assert {s.file_id: (s.num_update_writes, s.num_inserts) for s in result.metadata.write_stats} == {x: (1, 2)}
    got = by_key(t.read(), "v")
    assert len(got) == 502 and got["11000"] == ("new11000",) and got["1050"] == ("x1050-new",)
    assert got["2000"] == ("new2000",)


def test_a_saturated_filter_is_not_probed_and_the_merge_task_decides(spark, tmp_path, reads):
    # Rows of 10 keys' bits, growing to 20 keys, holding 400: every bit set, every key passes.
    t, x, y = _table(spark, str(tmp_path / "t"), {"hoodie.index.bloom.num_entries": "10",
                                                  "hoodie.bloom.index.filter.dynamic.max.entries": "20"})
    assert _footer_filter(t, y).false_positive_rate() > 0.99
    result = t.upsert(spark.createDataFrame([(1300, "a", "y1300-new"), (1200, "a", "y1200-new"),
                                             (2000, "a", "new2000"), (1001, "a", "x1001-new"),
                                             (14000, "a", "new14000")], DDL))
    assert reads == {"key_columns": 0, "probes": 0}
    # 14000 sorts inside Y's range only and passes its filter: Y's task, lacking it, inserts it there.
    assert {s.file_id: (s.num_update_writes, s.num_inserts) for s in result.metadata.write_stats} == {
        x: (1, 1), y: (2, 1)}
    got = by_key(t.read(), "v")
    assert len(got) == 502 and got["1300"] == ("y1300-new",) and got["1200"] == ("y1200-new",)
    assert got["14000"] == ("new14000",)
    assert got["1001"] == ("x1001-new",) and got["2000"] == ("new2000",)

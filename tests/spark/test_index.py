"""Index types on the same upsert sequence: BLOOM and SIMPLE agree; GLOBAL_BLOOM and GLOBAL_SIMPLE move a
record whose partition changed (no duplicates across partitions) while the non-global ones keep both
copies (Hudi's documented behaviour). Base files carry the footer the bloom index reads."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import footer, latest_files, read_base_file, rows

from hoodpy.index.bloom_filter import (
    FOOTER_BLOOM_FILTER_KEY,
    FOOTER_BLOOM_TYPE_KEY,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
)
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string, _hoodie_is_deleted boolean"
INDEX_TYPES = ("BLOOM", "SIMPLE", "GLOBAL_BLOOM", "GLOBAL_SIMPLE")

BATCH1 = [(i, "a" if i < 8 else "b", 1, f"v{i}", False) for i in range(16)]
BATCH2 = [
    (1, "a", 2, "u1", False),     # update in place
    (9, "b", 2, "u9", False),     # update in place
    (2, "b", 2, "m2", False),     # was in a: moves to b
    (10, "c", 2, "m10", False),   # was in b: moves to a new partition c
    (20, "a", 2, "n20", False),   # insert
    (3, "a", 2, "d3", True),      # delete where it lives
    (11, "a", 2, "d11", True),    # delete naming the wrong partition (it lives in b)
]
BATCH3 = [
    (2, "b", 3, "m2b", False),    # update the moved record where it now lives
    (10, "c", 3, "m10b", False),
    (20, "a", 3, "u20", False),
    (4, "a", 0, "stale", False),  # lower ordering value: ignored
]


@pytest.fixture(scope="module")
def indexed(spark, tmp_path_factory):
    """One table per index type, each given the same batches (globals stop after the second)."""
    out = {}
    for index_type in INDEX_TYPES:
        path = str(tmp_path_factory.mktemp(index_type.lower()) / "t")
        opts = {"hoodie.index.type": index_type}
        t = HoodieTable.create(spark, path, table_name=f"idx_{index_type.lower()}", record_key_fields=["id"],
                               partition_fields=["p"], precombine_field="ts", options=opts)
        s = SimpleNamespace(t=t, results=[])
        batches = (BATCH1, BATCH2, BATCH3) if not index_type.startswith("GLOBAL") else (BATCH1, BATCH2)
        for batch in batches:
            s.results.append(t.upsert(spark.createDataFrame(batch, DDL)))
        s.rows = rows(t.read(), "_hoodie_record_key", "_hoodie_partition_path", "id", "p", "ts", "v")
        out[index_type] = s
    return out


def _counts(result):
    return (result.num_writes, result.num_inserts, result.num_update_writes, result.num_deletes,
            result.files_added, result.files_updated)


def test_bloom_and_simple_give_identical_results(indexed):
    bloom, simple = indexed["BLOOM"], indexed["SIMPLE"]
    assert bloom.rows == simple.rows
    assert [_counts(r) for r in bloom.results] == [_counts(r) for r in simple.results]


def test_global_bloom_and_global_simple_give_identical_results(indexed):
    gb, gs = indexed["GLOBAL_BLOOM"], indexed["GLOBAL_SIMPLE"]
    assert gb.rows == gs.rows
    assert [_counts(r) for r in gb.results] == [_counts(r) for r in gs.results]


@pytest.mark.parametrize("index_type", ["GLOBAL_BLOOM", "GLOBAL_SIMPLE"])
def test_global_index_moves_a_record_whose_partition_changed(indexed, index_type):
    s = indexed[index_type]
    got = {r[0]: r[1:] for r in s.rows}
    assert len(got) == len(s.rows), Counter(r[0] for r in s.rows)  # no key twice, in any partition
    assert got["2"] == ("b", 2, "b", 2, "m2")
    assert got["10"] == ("c", 10, "c", 2, "m10")
    assert "3" not in got and "11" not in got  # deletes find the key wherever it lives
    assert got["1"] == ("a", 1, "a", 2, "u1") and got["20"] == ("a", 20, "a", 2, "n20")
    assert len(got) == 16 - 2 + 1
    c2 = s.results[1]
    # Moves are a delete in the old file group plus an insert in the new partition.
    assert (c2.num_deletes, c2.num_update_writes, c2.num_inserts) == (2 + 2, 2, 3)
    assert sorted(st.partition_path for st in c2.metadata.write_stats) == ["a", "b", "c"]


@pytest.mark.parametrize("index_type", ["BLOOM", "SIMPLE"])
def test_non_global_index_keeps_both_copies_of_a_moved_key(indexed, index_type):
    s = indexed[index_type]
    by_key = {}
    for r in s.rows:
        by_key.setdefault(r[0], []).append(r[1:])
    assert sorted(by_key["2"]) == [("a", 2, "a", 1, "v2"), ("b", 2, "b", 3, "m2b")]
    assert sorted(by_key["10"]) == [("b", 10, "b", 1, "v10"), ("c", 10, "c", 3, "m10b")]
    assert "3" not in by_key
    assert by_key["11"] == [("b", 11, "b", 1, "v11")]  # the delete named partition a: nothing to delete
    assert by_key["4"] == [("a", 4, "a", 1, "v4")]  # stale update ignored
    assert by_key["20"] == [("a", 20, "a", 3, "u20")]
    c2, c3 = s.results[1], s.results[2]
    assert (c2.num_deletes, c2.num_update_writes, c2.num_inserts) == (1, 2, 3)
    assert (c3.num_deletes, c3.num_update_writes, c3.num_inserts) == (0, 3, 0)
    assert len(s.rows) == 16 - 1 + 3


def test_base_files_carry_the_bloom_footer(indexed):
    t = indexed["BLOOM"].t
    files = latest_files(t)
    assert files
    for path in files.values():
        keys = read_base_file(t, path).column("_hoodie_record_key").to_pylist()
        meta = footer(t, path)
        assert meta[FOOTER_BLOOM_TYPE_KEY] == b"DYNAMIC_V0"
        assert meta[FOOTER_MIN_RECORD_KEY].decode() == min(keys)
        assert meta[FOOTER_MAX_RECORD_KEY].decode() == max(keys)
        bloom = BloomFilter.deserialize(meta[FOOTER_BLOOM_FILTER_KEY])
        assert (bloom.vector_size, bloom.num_hashes) == (2587966, 30)  # Hudi's 60000 entries at 1e-9
        # Rewritten files continue their old file's filter: still exactly the filter of their keys.
        scratch = BloomFilter.create()
        scratch.add_all(keys)
        assert meta[FOOTER_BLOOM_FILTER_KEY].decode() == scratch.serialize()
        assert all(bloom.might_contain_many(keys))
        assert not any(bloom.might_contain_many([f"absent-{i}" for i in range(50)]))


def test_reads_prune_by_footer_key_range_and_still_find_the_key(indexed):
    t = indexed["BLOOM"].t
    assert rows(t.read(filters=[("id", "=", 9)]), "id", "p", "v") == [(9, "b", "u9")]
    assert rows(t.read(filters=[("id", "in", [9, 20])]), "id", "p", "v") == [(9, "b", "u9"), (20, "a", "u20")]


def test_key_range_pruning_with_a_float_literal_on_an_int_key(indexed):
    t = indexed["BLOOM"].t
    assert rows(t.read(filters=[("id", "=", 9.0)]), "id", "p", "v") == [(9, "b", "u9")]
    assert rows(t.read(filters=[("id", "in", [9.0, "20"])]), "id", "p", "v") == [(9, "b", "u9"), (20, "a", "u20")]

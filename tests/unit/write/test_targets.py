"""Driver-decided target file groups (sql_ext.write.targets), without Spark."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sql_ext.index.murmur_hash import hash32
from sql_ext.write.merge import PARTITION_PATH, RECORD_KEY, TARGET_FILE_ID
from sql_ext.write.partitioner import HASH_SPACE, InsertBucket, hash_ranges
from sql_ext.write.targets import assign_by_ranges, attach_targets, key_hashes, target_table

keys_st = st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=60, unique=True)


@settings(max_examples=100, deadline=None)
@given(keys_st)
def test_key_hashes_equal_scalar_murmur(keys: list[str]) -> None:
    got = key_hashes(pa.array(keys))
    assert got.tolist() == [(hash32(k.encode("utf-8", "surrogatepass"), 0) & 0xFFFFFFFF) % HASH_SPACE
                            for k in keys]


@settings(max_examples=100, deadline=None)
@given(keys_st, st.lists(st.integers(1, 50), min_size=1, max_size=4), st.booleans())
def test_assign_by_ranges_picks_the_range_holding_the_hash(keys, weights, partitioned) -> None:
    partitions = ["p=a", "p=b"] if partitioned else [""]
    buckets = [InsertBucket(p, f"{p}-f{i}", w) for p in partitions for i, w in enumerate(weights)]
    ranges = hash_ranges(buckets)
    parts = [partitions[i % len(partitions)] for i in range(len(keys))]
    got = assign_by_ranges(pa.array(keys), pa.array(parts), ranges).to_pylist()
    hashes = key_hashes(pa.array(keys))
    expected = [next(f for p2, f, lo, hi in ranges if p2 == p and lo <= h < hi) for p, h in zip(parts, hashes)]
    assert got == expected


def test_assign_by_ranges_spreads_by_weight() -> None:
    keys = pa.array([f"id:{i}" for i in range(20000)])
    ranges = hash_ranges([InsertBucket("", "small", 5000), InsertBucket("", "new", 15000)])
    got = assign_by_ranges(keys, pa.array([""] * len(keys)), ranges).to_numpy(zero_copy_only=False)
    share = np.mean(got == "small")
    assert 0.22 < share < 0.28


def _batch(rows: dict) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(rows)


def test_attach_targets_joins_on_key_and_partition_and_drops_unknown_rows() -> None:
    targets = target_table(pa.array(["k1", "k2", "k1"]), pa.array(["p=1", "p=1", "p=2"]),
                           pa.array(["f1", "f2", "f3"]))
    batch = _batch({RECORD_KEY: ["k1", "k1", "k2", "k3", "k2"], PARTITION_PATH: ["p=1", "p=2", "p=1", "p=1", "p=9"],
                    "v": [[1], [2], [3], [4], [5]]})  # a nested payload column: Arrow joins reject those
    out = pa.Table.from_batches(list(attach_targets(targets, iter([batch]))))
    got = sorted(zip(out.column(RECORD_KEY).to_pylist(), out.column(PARTITION_PATH).to_pylist(),
                     out.column("v").to_pylist(), out.column(TARGET_FILE_ID).to_pylist()))
    assert got == [("k1", "p=1", [1], "f1"), ("k1", "p=2", [2], "f3"), ("k2", "p=1", [3], "f2")]
    assert out.schema.names == [RECORD_KEY, PARTITION_PATH, "v", TARGET_FILE_ID]


def test_attach_targets_keeps_repeated_records_of_one_key() -> None:
    targets = target_table(pa.array(["k1"]), pa.array([""]), pa.array(["f1"]))
    batch = _batch({RECORD_KEY: ["k1", "k1"], PARTITION_PATH: ["", ""], "v": [1, 2]})
    out = pa.Table.from_batches(list(attach_targets(targets, iter([batch]))))
    assert out.column("v").to_pylist() == [1, 2]  # batch order: the merge keeps the last of repeats
    assert out.column(TARGET_FILE_ID).to_pylist() == ["f1", "f1"]


def test_attach_targets_skips_batches_without_targets() -> None:
    targets = target_table(pa.array(["k1"]), pa.array([""]), pa.array(["f1"]))
    batch = _batch({RECORD_KEY: ["zz"], PARTITION_PATH: [""], "v": [1]})
    assert list(attach_targets(targets, iter([batch]))) == []


def test_attach_targets_over_many_batches_keeps_batch_order() -> None:
    targets = target_table(pa.array([f"k{i}" for i in range(0, 50, 2)]), pa.array([""] * 25),
                           pa.array([f"f{i % 3}" for i in range(25)]))
    batches = [_batch({RECORD_KEY: [f"k{i}" for i in range(s, s + 10)], PARTITION_PATH: [""] * 10,
                       "v": list(range(s, s + 10))}) for s in range(0, 50, 10)]
    out = pa.Table.from_batches(list(attach_targets(targets, iter(batches))))
    assert out.column("v").to_pylist() == list(range(0, 50, 2))
    assert out.column(TARGET_FILE_ID).to_pylist() == [f"f{i % 3}" for i in range(25)]
    assert list(attach_targets(targets, iter([]))) == []

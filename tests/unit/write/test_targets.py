"""Driver-decided target file groups (hoodpy.write.targets), without Spark."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.index.murmur_hash import hash32
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.merge import TARGET_FILE_ID
from hoodpy.write.bucket_assignment import HASH_SPACE, InsertBucket, hash_ranges
from hoodpy.write.targets import MERGE_BIN, assign_by_ranges, key_hashes, target_table

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


@settings(max_examples=100, deadline=None)
@given(keys_st, st.lists(st.integers(1, 50), min_size=2, max_size=4))
def test_assign_by_ranges_hashes_only_keys_of_spread_partitions(keys, weights) -> None:
    # p=one has a single bucket, p=many several: the same targets as hashing every key, and only p=many's keys
    # are hashed.
    buckets = [InsertBucket("p=one", "only", 7)] + [InsertBucket("p=many", f"m{i}", w) for i, w in enumerate(weights)]
    ranges = hash_ranges(buckets)
    parts = ["p=one" if i % 3 == 0 else "p=many" for i in range(len(keys))]
    hashed: list[list[str]] = []

    def counting(array):
        hashed.append(array.to_pylist())
        return key_hashes(array)

    import hoodpy.write.targets as targets_module
    original, targets_module.key_hashes = targets_module.key_hashes, counting
    try:
        got = assign_by_ranges(pa.array(keys), pa.array(parts), ranges).to_pylist()
    finally:
        targets_module.key_hashes = original
    hashes = key_hashes(pa.array(keys))
    expected = [next(f for p2, f, lo, hi in ranges if p2 == p and lo <= h < hi) for p, h in zip(parts, hashes)]
    assert got == expected
    assert sorted(k for batch in hashed for k in batch) == sorted(k for k, p in zip(keys, parts) if p == "p=many")


def test_assign_by_ranges_one_bucket_per_partition_hashes_nothing(monkeypatch) -> None:
    import hoodpy.write.targets as targets_module

    monkeypatch.setattr(targets_module, "key_hashes", lambda keys: (_ for _ in ()).throw(AssertionError("hashed")))
    ranges = hash_ranges([InsertBucket("p=a", "fa", 3), InsertBucket("p=b", "fb", 9)])
    got = assign_by_ranges(pa.array(["k1", "k2", "k3"]), pa.array(["p=b", "p=a", "p=b"]), ranges)
    assert got.to_pylist() == ["fb", "fa", "fb"]


def test_assign_by_ranges_spreads_by_weight() -> None:
    keys = pa.array([f"id:{i}" for i in range(20000)])
    ranges = hash_ranges([InsertBucket("", "small", 5000), InsertBucket("", "new", 15000)])
    got = assign_by_ranges(keys, pa.array([""] * len(keys)), ranges).to_numpy(zero_copy_only=False)
    share = np.mean(got == "small")
    assert 0.22 < share < 0.28


def test_target_table_types() -> None:
    t = target_table(pa.array(["k1", "k2"]), pa.array(["", ""]), pa.array(["f1", "f2"]), pa.array([3, 7]))
    assert t.schema == pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()),
                                  (TARGET_FILE_ID, pa.string()), (MERGE_BIN, pa.int32())])
    assert t.column(MERGE_BIN).to_pylist() == [3, 7]


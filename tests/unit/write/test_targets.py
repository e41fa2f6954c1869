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
from hoodpy.storage import Storage
from hoodpy.write.targets import (MERGE_BIN, TARGETS_FILE, assign_by_ranges, key_hashes, target_table,
                                  targeted_task, with_targets, write_targets)

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



@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["", "p=a", "p=b"])), min_size=1, max_size=80),
       st.sets(st.tuples(st.integers(0, 30), st.sampled_from(["", "p=a", "p=b"])), max_size=40))
def test_with_targets_joins_in_row_order_and_drops_untargeted_rows(rows, targeted) -> None:
    """A deltacommit task's own join (targets.with_targets): each row gets its key's target, the rows keep their
    order (repeated keys included), rows without a target are dropped as Spark's inner join drops them."""
    table = pa.table({RECORD_KEY: pa.array([str(k) for k, _ in rows], pa.large_string()),
                      PARTITION_PATH: pa.array([p for _, p in rows], pa.large_string()),
                      "seq": pa.array(range(len(rows)), pa.int64())})
    targets = target_table(pa.array([str(k) for k, _ in sorted(targeted)]),
                           pa.array([p for _, p in sorted(targeted)]),
                           pa.array([f"f-{k % 3}-{p}" for k, p in sorted(targeted)]),
                           pa.array([0] * len(targeted), pa.int32()))
    got = with_targets(table, targets)
    expected = [(i, f"f-{k % 3}-{p}") for i, (k, p) in enumerate(rows) if (k, p) in targeted]
    assert list(zip(got.column("seq").to_pylist(), got.column(TARGET_FILE_ID).to_pylist())) == expected
    assert got.column_names == [RECORD_KEY, PARTITION_PATH, "seq", TARGET_FILE_ID]
    assert got.schema.field(RECORD_KEY).type == pa.large_string()


def test_targeted_task_reads_the_targets_file_and_writes_the_joined_rows(tmp_path) -> None:
    storage = Storage(str(tmp_path))
    targets = target_table(pa.array(["a", "b"]), pa.array(["", ""]), pa.array(["f1", "f2"]),
                           pa.array([0, 0], pa.int32()))
    rel = write_targets(storage, ".hoodie/.temp/001", targets)
    assert rel == f".hoodie/.temp/001/{TARGETS_FILE}"
    batch = pa.record_batch({RECORD_KEY: ["b", "c", "a"], PARTITION_PATH: ["", "", ""], "v": [1, 2, 3]})
    seen = []

    def write(batches):
        seen.append(pa.Table.from_batches(list(batches)))
        return iter([pa.record_batch({"n": [seen[-1].num_rows]})])

    out = list(targeted_task(write, str(tmp_path), rel, iter([batch])))
    assert out[0].column(0).to_pylist() == [2]
    assert seen[0].column("v").to_pylist() == [1, 3]
    assert seen[0].column(TARGET_FILE_ID).to_pylist() == ["f2", "f1"]
    assert list(targeted_task(write, str(tmp_path), rel, iter([]))) == [] and len(seen) == 1  # an empty task

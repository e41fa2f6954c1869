"""Merge task placement (hoodpy.write.task_placement), without Spark."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pyarrow as pa

from hoodpy.write.task_placement import (
    assign_bins,
    partition_labels,
    place_file_groups,
    row_labels,
    spark_hash_int,
    spark_partition_of,
)

# SELECT hash(CAST(v AS INT)) on pyspark 4.0.5.
SPARK_HASHES = {0: 933211791, 1: -559580957, -1: -1604776387, 42: 29417773, 2**31 - 1: 133916647,
                -(2**31): 723455942}


def test_spark_hash_int_matches_spark() -> None:
    assert {v: spark_hash_int(v) for v in SPARK_HASHES} == SPARK_HASHES


def test_partition_labels_hit_every_partition_once() -> None:
    for n in range(1, 300):
        labels = partition_labels(n)
        assert [spark_partition_of(label, n) for label in labels] == list(range(n))
        assert len(set(labels)) == n


def test_one_bin_per_target_largest_first() -> None:
    bins, n = assign_bins({"a": 10, "b": 30, "c": 20})
    assert n == 3 and bins == {"b": 0, "c": 1, "a": 2}
    assert assign_bins({}) == ({}, 0)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 1000), st.integers(0, 10**6), min_size=1, max_size=60),
       st.integers(1, 12))
def test_bins_capped_and_balanced(work: dict, max_bins: int) -> None:
    bins, n = assign_bins(work, max_bins)
    assert set(bins) == set(work)
    assert n == min(len(work), max_bins)
    assert all(0 <= b < n for b in bins.values())
    if len(work) > max_bins:
        loads = [0] * n
        for t, b in bins.items():
            loads[b] += work[t]
        # Greedy largest-first: no bin exceeds the lightest one by more than the largest target.
        assert max(loads) - min(loads) <= max(work.values())


def test_file_groups_are_placed_by_old_size_plus_incoming_bytes() -> None:
    counts = {("p", "small"): 100, ("p", "big"): 1, ("q", "new"): 50}
    sizes = {("p", "small"): 10, ("p", "big"): 5000}
    num_bins, label_of = place_file_groups(counts, sizes, record_size=40, max_bins=None)
    # work: big 5040, small 4010, new 2000: one task each, largest first.
    assert num_bins == 3
    assert [spark_partition_of(label_of[g], 3) for g in (("p", "big"), ("p", "small"), ("q", "new"))] == [0, 1, 2]
    labels = row_labels(pa.array(["q", "p", "p", "p"]), pa.array(["new", "big", "small", "big"]), label_of)
    assert labels.to_pylist() == [label_of[("q", "new")], label_of[("p", "big")], label_of[("p", "small")],
                                  label_of[("p", "big")]]

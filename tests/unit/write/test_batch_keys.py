"""The collected batch keys' duplicate check (hoodpy.write.records.has_duplicate_keys), without Spark."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.merge import OP
from hoodpy.write.records import has_duplicate_keys


def _keys(keys: list[str], partitions: list[str | None]) -> pa.Table:
    return pa.table({RECORD_KEY: pa.array(keys, pa.string()), PARTITION_PATH: pa.array(partitions, pa.string()),
                     OP: pa.array([0] * len(keys), pa.int32())})


def test_same_key_in_two_partitions_repeats_only_globally() -> None:
    keys = _keys(["a", "a", "b"], ["p=1", "p=2", "p=1"])
    assert not has_duplicate_keys(keys, by_partition=True)
    assert has_duplicate_keys(keys, by_partition=False)


def test_one_partition_and_null_partitions() -> None:
    assert has_duplicate_keys(_keys(["a", "b", "a"], ["", "", ""]), by_partition=True)
    assert not has_duplicate_keys(_keys(["a", "b", "c"], ["", "", ""]), by_partition=True)
    assert has_duplicate_keys(_keys(["a", "a"], [None, None]), by_partition=True)  # deletes by key alone
    assert not has_duplicate_keys(_keys(["a", "a"], [None, "p=1"]), by_partition=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from([None, "", "p=1", "p=2"])), max_size=8))
def test_matches_a_set_of_pairs(rows) -> None:
    keys = _keys([k for k, _ in rows], [p for _, p in rows])
    assert has_duplicate_keys(keys, by_partition=True) == (len(set(rows)) != len(rows))
    assert has_duplicate_keys(keys, by_partition=False) == (len({k for k, _ in rows}) != len(rows))

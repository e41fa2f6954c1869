"""Arrow key arrays in the bloom filter and the driver-side bloom index lookup: same answers as the
per-key Python path and the Spark lookup, without a Python object per key."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.errors import InvalidRecordError
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import base_file_name, new_file_id, parse_base_file_name
from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION
from hoodpy.index.bloom import locate_on_driver
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, write_base_file

keys_strategy = st.lists(st.text(min_size=1, max_size=40), max_size=300)


@settings(max_examples=40, deadline=None)
@given(keys=keys_strategy, split=st.integers(0, 300), entries=st.sampled_from([(5, 12), (20, 0), (60000, 100000)]))
def test_arrow_add_sets_the_same_bits_as_python_strings(keys, split, entries):
    keys = [k for k in keys if not any("\ud800" <= c <= "\udfff" for c in k)]  # not valid in Arrow strings
    per_row, max_entries = entries
    fpp = 0.01 if per_row < 100 else 1e-9
    python = BloomFilter.create(per_row, fpp, max_entries)
    python.add_all(keys)
    arrow = BloomFilter.create(per_row, fpp, max_entries)
    arrow.add_all(pa.array(keys[:split], pa.string()))
    arrow.add_all(pa.chunked_array([pa.array(keys[split:], pa.large_string())], pa.large_string()))
    assert arrow.serialize() == python.serialize()
    probe = keys[:20] + [k + "~" for k in keys[:20]]
    assert arrow.might_contain_many(pa.array(probe, pa.string())) == python.might_contain_many(probe)


def test_arrow_add_rejects_empty_keys_and_adds_none():
    bloom = BloomFilter.create(10, 0.01, 20)
    before = bloom.serialize()
    with pytest.raises(InvalidRecordError, match="must not be empty"):
        bloom.add_all(pa.array(["a", ""]))
    with pytest.raises(InvalidRecordError, match="must not be empty"):
        bloom.add_all(pa.array(["a", None]))
    assert bloom.serialize() == before


def _write(storage: Storage, partition: str, keys: list[str]) -> BaseFile:
    file_id = new_file_id()
    name = base_file_name(file_id, "0-0-0", "20250101000000000")
    rel = f"{partition}/{name}" if partition else name
    data = pa.table({"v": pa.array(range(len(keys)), pa.int64())})
    rows = add_meta_columns(data, pa.array(keys, pa.string()), partition, "20250101000000000")
    rows = finalize(rows, pa.array([True] * len(keys)), instant_time="20250101000000000", file_name=name,
                    task_partition=0)
    size = write_base_file(storage, rel, rows, BaseFileOptions(compression="snappy", bloom_num_entries=100))
    return BaseFile(partition, parse_base_file_name(name), size)


def _found(located: pa.Table) -> set[tuple[str, str, str]]:
    return set(zip(located.column(RECORD_KEY).to_pylist(), located.column(LOC_PARTITION).to_pylist(),
                   located.column(LOC_FILE_ID).to_pylist()))


@pytest.mark.parametrize("prune", [True, False])
def test_driver_lookup_finds_exactly_the_stored_keys_per_partition(tmp_path, prune):
    storage = Storage(str(tmp_path))
    a1 = _write(storage, "p=a", [f"k{i:03d}" for i in range(0, 50)])
    a2 = _write(storage, "p=a", [f"k{i:03d}" for i in range(50, 100)])
    b1 = _write(storage, "p=b", [f"k{i:03d}" for i in range(0, 100, 2)])
    batch = pa.table({
        RECORD_KEY: ["k001", "k060", "k200", "k002", "k003", "k001"],
        PARTITION_PATH: ["p=a", "p=a", "p=a", "p=b", "p=b", "p=c"],
    })
    located = locate_on_driver(storage, batch, [a1, a2, b1], is_global=False, prune_by_ranges=prune)
    assert _found(located) == {("k001", "p=a", a1.file_id), ("k060", "p=a", a2.file_id),
                               ("k002", "p=b", b1.file_id)}
    everywhere = locate_on_driver(storage, batch, [a1, a2, b1], is_global=True, prune_by_ranges=prune)
    assert ("k002", "p=b", b1.file_id) in _found(everywhere) and ("k002", "p=a", a1.file_id) in _found(everywhere)


def test_driver_lookup_of_nothing(tmp_path):
    storage = Storage(str(tmp_path))
    f = _write(storage, "", ["x"])
    empty = pa.table({RECORD_KEY: pa.array([], pa.string()), PARTITION_PATH: pa.array([], pa.string())})
    assert locate_on_driver(storage, empty, [f], is_global=False).num_rows == 0
    assert locate_on_driver(storage, pa.table({RECORD_KEY: ["x"], PARTITION_PATH: [""]}), [],
                            is_global=False).num_rows == 0

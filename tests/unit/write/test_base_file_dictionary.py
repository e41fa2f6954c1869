"""Which columns a base file dictionary encodes (chosen from a sample of its first rows), and the one-entry
dictionary arrays constant columns are written as."""

from __future__ import annotations

import datetime
import io
import random

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.write.base_file import dictionary_columns, one_value


def _order_keys(n: int, seed: int = 3) -> list[int]:
    """Ascending keys with 1-7 rows each, as TPC-H's l_orderkey arrives."""
    rng, out, key = random.Random(seed), [], 1
    while len(out) < n:
        out += [key] * rng.randint(1, 7)
        key += rng.randint(1, 4)
    return out[:n]


def test_ascending_numbers_with_many_values_are_written_plain():
    keys = _order_keys(5000)
    shuffled = random.Random(1).sample(keys, len(keys))
    day = datetime.date(2020, 1, 1)
    table = pa.table({
        "orderkey": keys,  # ascending, ~1/4 distinct: plain
        "shuffled": shuffled,  # the same values out of order: repeats worth a dictionary
        "dates": pa.array([day + datetime.timedelta(days=k) for k in keys], pa.date32()),  # ascending: plain
        "year": [2000 + k // 4000 for k in keys],  # ascending but few values: dictionary
        "distinct": list(range(5000)),  # no repeats: plain, as before
        "names": [f"n{k}" for k in keys],  # strings: by repeats only
    })
    assert dictionary_columns(table) == ["shuffled", "year", "names"]


def test_ascending_column_written_plain_is_smaller():
    table = pa.table({"orderkey": pa.array(_order_keys(200_000), pa.int64())})

    def size(dictionary) -> int:
        sink = io.BytesIO()
        pq.write_table(table, sink, compression="zstd", compression_level=3, use_dictionary=dictionary)
        return len(sink.getvalue())

    assert dictionary_columns(table) == []
    assert size(False) < size(True) / 2


def test_one_value_is_a_one_entry_dictionary_read_back_as_the_value():
    a = one_value("f1.parquet", 5)
    b = one_value("x", 70_000)  # longer than any before: the shared zero indices grow
    assert a.type == pa.dictionary(pa.int32(), pa.string()) and len(a.dictionary) == 1
    assert a.to_pylist() == ["f1.parquet"] * 5
    assert len(b) == 70_000 and b.indices.to_numpy().max() == 0 and b.dictionary.to_pylist() == ["x"]
    assert one_value("f1.parquet", 3).to_pylist() == ["f1.parquet"] * 3  # still right after growing

"""Record sequence numbers of freshly written rows (hoodpy.arrow_rows.numbered): ``<instant>_<task>_<n>`` strings
written straight into Arrow buffers, equal to Arrow's cast-and-join of the numbers, across digit-count changes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodpy.arrow_rows import finalize, numbered
from hoodpy.meta_fields import COMMIT_SEQNO


def _joined(prefix: str, first: int, n: int) -> pa.Array:
    positions = pc.cast(pa.array(np.arange(first, first + n, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(prefix, positions, "_")


@pytest.mark.parametrize(("first", "n"), [
    (0, 1), (0, 12), (5, 200), (98, 3), (999_990, 30), (0, 100_001), (123_456_789, 1000),
    (2**32 - 5, 10),  # past 32 bits
    (10**12 - 5, 10),
])
def test_numbered_equals_the_cast_and_join(first, n):
    got = numbered("20240101000000000_3", first, n)
    got.validate(full=True)
    assert got.type == pa.string() and got.equals(_joined("20240101000000000_3", first, n))


def test_no_rows_and_negative_starts():
    assert numbered("x_0", 7, 0).to_pylist() == []
    with pytest.raises(ValueError, match="start at 0"):
        numbered("x_0", -1, 3)


def test_finalize_numbers_fresh_rows_from_first():
    rows = pa.table({name: pa.nulls(3, pa.string()) for name in
                     ("_hoodie_commit_time", COMMIT_SEQNO, "_hoodie_record_key", "_hoodie_partition_path",
                      "_hoodie_file_name")})
    out = finalize(rows, pa.array([True] * 3), instant_time="001", file_name="f.parquet", task_partition=4, first=9)
    assert out.column(COMMIT_SEQNO).to_pylist() == ["001_4_9", "001_4_10", "001_4_11"]
    assert out.column("_hoodie_file_name").to_pylist() == ["f.parquet"] * 3


def test_file_names_of_successive_batches_and_files():
    """finalize keeps the last file name's array for the next batch: slices of it stay right when a longer
    batch, another file's name, or a batch of other chunking comes."""
    def rows(lengths):
        chunks = [pa.table({name: pa.nulls(n, pa.string()) for name in
                            ("_hoodie_commit_time", COMMIT_SEQNO, "_hoodie_record_key", "_hoodie_partition_path",
                             "_hoodie_file_name")}) for n in lengths]
        return pa.concat_tables(chunks)

    for name, lengths in (("a.parquet", [3]), ("a.parquet", [2, 5]), ("b.parquet", [4]), ("a.parquet", [1])):
        out = finalize(rows(lengths), pa.array([True] * sum(lengths)), instant_time="001", file_name=name,
                       task_partition=0, first=0)
        column = out.column("_hoodie_file_name")
        assert column.to_pylist() == [name] * sum(lengths)
        assert [len(c) for c in column.chunks] == lengths

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.read.data_skipping import clear_cache, column_ranges, prune_by_column_stats
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.naming import BaseFileName
from hoodpy.storage import Storage

UTC = dt.timezone.utc


@pytest.fixture
def files(tmp_path):
    clear_cache()
    storage = Storage(str(tmp_path))
    tables = [
        pa.table({"n": [1, 5, None], "f": [0.5, 1.5, 2.5], "s": ["apple", "banana", "cherry"],
                  "d": [dt.date(2024, 1, 1), dt.date(2024, 1, 5), None],
                  "t": pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC)] * 3, pa.timestamp("us", tz="UTC")),
                  "m": pa.array([Decimal("1.00"), Decimal("2.50"), None], pa.decimal128(6, 2)),
                  "st": [{"a": 1}, {"a": 2}, {"a": 3}], "z": pa.array([None, None, None], pa.int32())}),
        pa.table({"n": [10, 20, 30], "f": [float("nan"), 0.1, 0.2], "s": ["x", "y", "zebra"],
                  "d": [dt.date(2024, 2, 1)] * 3,
                  "t": pa.array([dt.datetime(2024, 3, 1, tzinfo=UTC)] * 3, pa.timestamp("us", tz="UTC")),
                  "m": pa.array([Decimal("9.00")] * 3, pa.decimal128(6, 2)),
                  "st": [{"a": 10}, {"a": 20}, {"a": 30}], "z": pa.array([1, 1, 1], pa.int32())}),
    ]
    out = []
    for i, table in enumerate(tables):
        name = BaseFileName(f"f{i}", "0-1-1", "20240101000000001")
        storage.write_bytes(f"p/{name.name}", b"")
        pq.write_table(table, storage.full_path(f"p/{name.name}"), row_group_size=2)
        out.append(BaseFile("p", name, 1))
    return storage, out


def kept(files, *filters):
    storage, base_files = files
    return [bf.file_id for bf in prune_by_column_stats(storage, base_files, list(filters))]


def test_comparisons_prune_files_outside_the_range(files):
    assert kept(files, ("n", "=", 5)) == ["f0"]
    assert kept(files, ("n", "==", 7)) == []
    assert kept(files, ("n", ">", 5)) == ["f1"]
    assert kept(files, ("n", ">=", 5)) == ["f0", "f1"]
    assert kept(files, ("n", "<", 10)) == ["f0"]
    assert kept(files, ("n", "<=", 10)) == ["f0", "f1"]
    assert kept(files, ("n", "in", [3, 25])) == ["f0", "f1"]
    assert kept(files, ("n", "IN", [7, 8])) == []
    assert kept(files, ("n", ">=", 2), ("n", "<=", 9)) == ["f0"]  # between
    assert kept(files) == ["f0", "f1"]


def test_strings_dates_timestamps_decimals_and_nested_columns(files):
    assert kept(files, ("s", ">=", "d")) == ["f1"]
    assert kept(files, ("s", "=", "banana")) == ["f0"]
    assert kept(files, ("d", ">", dt.date(2024, 1, 10))) == ["f1"]
    assert kept(files, ("d", "<", "2024-01-03")) == ["f0"]
    assert kept(files, ("t", ">=", dt.datetime(2024, 2, 1, tzinfo=UTC))) == ["f1"]
    assert kept(files, ("t", "<", "2024-02-01T00:00:00")) == ["f0"]
    assert kept(files, ("m", ">", 5)) == ["f1"]
    assert kept(files, ("m", "=", Decimal("2.5"))) == ["f0"]
    assert kept(files, ("st.a", ">", 5)) == ["f1"]


def test_what_statistics_cannot_decide_keeps_the_file(files):
    assert kept(files, ("missing", "=", 1)) == ["f0", "f1"]
    assert kept(files, ("s", "=", 5)) == ["f0", "f1"]  # a value of another type
    assert kept(files, ("f", ">", 100.0)) == ["f0", "f1"]  # NaN may be there, and sorts above numbers
    assert kept(files, ("f", "<", 0.3)) == ["f1"]
    assert kept(files, ("n", "!=", 10)) == ["f0", "f1"]


def test_all_null_columns_and_single_valued_not_equal(files):
    assert kept(files, ("z", "=", 1)) == ["f1"]
    assert kept(files, ("z", "!=", 2)) == ["f1"]
    assert kept(files, ("z", "!=", 1)) == []
    assert kept(files, ("z", "not in", [1, 2])) == []


def test_ranges_fold_row_groups_and_are_cached(files):
    storage, base_files = files
    first = column_ranges(storage, base_files)
    assert first[0]["n"].min == 1 and first[0]["n"].max == 5 and first[0]["n"].null_count == 1
    assert first[1]["n"].num_values == 3 and first[0]["st.a"].max == 3
    assert column_ranges(storage, base_files)[0] is first[0]

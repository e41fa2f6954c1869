"""Reading the base rows the logs name skips the row groups whose key statistics admit none of the named keys
(base files are written sorted by key, so an update of a key range touches few groups); without statistics,
or with groups whose ranges overlap, every group that may hold a key is read, and the rows found are the same."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read import file_scan
from hoodpy.read.file_scan import key_positions, key_row_groups, read_base_rows
from hoodpy.storage import Storage


def _write(tmp_path, name, keys, **kwargs):
    rows = pa.table({RECORD_KEY: keys, "v": list(range(len(keys))), "s": [f"s{i}" for i in range(len(keys))]})
    pq.write_table(rows, tmp_path / name, row_group_size=10, **kwargs)
    return rows


def test_groups_whose_key_range_admits_a_named_key(tmp_path):
    _write(tmp_path, "sorted.parquet", [f"k{i:03d}" for i in range(100)])
    pf = pq.ParquetFile(tmp_path / "sorted.parquet")
    assert key_row_groups(pf, RECORD_KEY, pa.array(["k057", "k003", "k051"])) == [0, 5]
    assert key_row_groups(pf, RECORD_KEY, pa.array(["k0935"])) == [9]  # within group 9's range, not a row of it
    assert key_row_groups(pf, RECORD_KEY, pa.array(["a", "zzz"])) == []  # outside every range
    assert key_row_groups(pf, RECORD_KEY, pa.array([], pa.string())) == []
    _write(tmp_path, "nostats.parquet", [f"k{i:03d}" for i in range(100)], write_statistics=False)
    pf = pq.ParquetFile(tmp_path / "nostats.parquet")
    assert key_row_groups(pf, RECORD_KEY, pa.array(["k003"])) == list(range(10))  # no bounds: every group


def test_skipped_groups_are_not_read(tmp_path, monkeypatch):
    _write(tmp_path, "sorted.parquet", [f"k{i:03d}" for i in range(100)])
    read = []
    real = pq.ParquetFile.read_row_groups

    def spy(self, groups, *args, **kwargs):
        read.append(list(groups))
        return real(self, groups, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    storage = Storage(str(tmp_path))
    assert key_positions(storage, "sorted.parquet", RECORD_KEY, pa.array(["k057", "k052"])).tolist() == [52, 57]
    schema = pa.schema([(RECORD_KEY, pa.string()), ("v", pa.int64())])
    got = read_base_rows(storage, "sorted.parquet", schema, RECORD_KEY, pa.array(["k093", "k0935"]),
                         position_column="pos")
    assert got.to_pylist() == [{RECORD_KEY: "k093", "v": 93, "pos": 93}]
    assert read == [[5], [9], [9]]  # the key column of the admitting group, then its rows holding a named key


def test_rows_found_equal_a_scan_of_every_row(tmp_path):
    """Over files whose groups' key ranges are disjoint (sorted), overlapping (shuffled, or numbers as
    strings the way record keys hold them) and absent (no statistics), for random named keys: the positions
    and rows (key alone, or with other columns) are those of a read of the whole file."""
    rng = random.Random(7)
    shuffled = [f"k{i:03d}" for i in range(100)]
    rng.shuffle(shuffled)
    files = {"sorted.parquet": ([f"k{i:03d}" for i in range(100)], {}),
             "shuffled.parquet": (shuffled, {}),
             "numbers.parquet": ([f"id:{i}" for i in range(95, 195)], {}),
             "nostats.parquet": (shuffled, {"write_statistics": False})}
    storage = Storage(str(tmp_path))
    for name, (keys, kwargs) in files.items():
        rows = _write(tmp_path, name, keys, **kwargs)
        for _ in range(25):
            named = rng.sample(keys, rng.randint(1, 12)) + rng.sample(["k0005", "id:1000", "zz", "a"], 1)
            want = np.flatnonzero(np.isin(np.array(keys, dtype=object), named))
            assert key_positions(storage, name, RECORD_KEY, pa.array(named)).tolist() == want.tolist(), name
            for schema in (pa.schema([(RECORD_KEY, pa.string())]),
                           pa.schema([(RECORD_KEY, pa.string()), ("s", pa.string()), ("v", pa.int64())])):
                got = read_base_rows(storage, name, schema, RECORD_KEY, pa.array(named), position_column="pos")
                expected = rows.take(pa.array(want, pa.int64())).select(schema.names)
                expected = expected.append_column("pos", pa.array(want, pa.int64()))
                assert got.equals(expected), (name, named)
    assert file_scan.key_row_groups(pq.ParquetFile(tmp_path / "numbers.parquet"), RECORD_KEY,
                                    pa.array(["id:150"])) != list(range(10))  # some groups skipped

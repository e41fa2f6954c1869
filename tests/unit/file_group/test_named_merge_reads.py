"""A merge-on-read task's merge of the keys the logs name (hoodpy.read.slice_scan.slice_rows, named_only): it
reads only the key and ordering columns of the base rows it compares, and the other columns of only the base
rows that win; its rows are those of the in-memory merge, full width, whatever the row groups."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read import file_scan
from hoodpy.read.file_scan import read_base_positions, read_base_rows
from hoodpy.read.slice_parts import merge_slice_part
from hoodpy.read.slice_scan import slice_rows
from hoodpy.storage import Storage
from test_log_file import ARROW, T1, T2, T3, T4, _row, avro_block, delete_block, parquet_block
from test_slice_parts import _blocks

BASE = pa.Table.from_pylist([_row(k, 5, T1) for k in "abcdefg"], schema=ARROW)
LOG_1 = avro_block(T2, [_row("a", 6, T2), _row("x", 1, T2), _row("c", 4, T2)]) + delete_block(T3, [("b", 0)])
LOG_2 = parquet_block(T3, [_row("e", 7, T3), _row("g", 2, T3)]) + avro_block(T4, [_row("x", 3, T4)])


def _full(table: pa.Table) -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r["id"])


@pytest.fixture
def slice_files(tmp_path):
    pq.write_table(BASE, tmp_path / "base.parquet", row_group_size=2)
    (tmp_path / ".f1_001.log.1_0").write_bytes(LOG_1)
    (tmp_path / ".f1_001.log.2_0").write_bytes(LOG_2)
    return Storage(str(tmp_path)), "base.parquet", [".f1_001.log.1_0", ".f1_001.log.2_0"]


@pytest.mark.parametrize("parts", [1, 2, 3])
@pytest.mark.parametrize("ordering", ["ts", None])
def test_named_rows_are_the_in_memory_merge_full_width(slice_files, parts, ordering, monkeypatch):
    storage, base, logs = slice_files
    committed = {T1, T2, T3, T4}
    expected = [r for part in range(parts) for r in _full(merge_slice_part(
        BASE, _blocks(LOG_1, LOG_2), ARROW, ordering, part, parts, named_only=True))]
    # Which columns the task reads from the base file, and how many base rows it reads whole.
    widths, whole = [], []
    real_rows, real_positions = file_scan.read_base_rows, file_scan.read_base_positions
    monkeypatch.setattr("hoodpy.read.slice_scan.read_base_rows",
                        lambda *a, **k: widths.append(a[2].names) or real_rows(*a, **k))
    monkeypatch.setattr("hoodpy.read.slice_scan.read_base_positions",
                        lambda *a: whole.append(len(a[3])) or real_positions(*a))
    got = [r for part in range(parts) for r in _full(slice_rows(storage, base, logs, ARROW, committed, ordering,
                                                                part, parts, named_only=True))]
    assert sorted(got, key=lambda r: r["id"]) == sorted(expected, key=lambda r: r["id"])
    assert all(len(r) == len(ARROW) for r in got)
    if ordering:  # c (5 > 4) and g (5 > 2) keep their base rows: only they are read whole
        assert widths == [[RECORD_KEY, ordering]] * parts
        assert {r["id"]: r["ts"] for r in got} == {"a": 6, "c": 5, "e": 7, "g": 5, "x": 3}
        assert sum(whole) == 2
    else:  # commit time: a log version always wins, so the base file is not read at all
        assert widths == [] and whole == []


def test_positions_read_across_row_groups(tmp_path):
    rows = pa.table({RECORD_KEY: [f"k{i:03d}" for i in range(100)], "v": list(range(100))})
    pq.write_table(rows, tmp_path / "base.parquet", row_group_size=10)
    storage = Storage(str(tmp_path))
    schema = pa.schema([(RECORD_KEY, pa.string()), ("v", pa.int64()), ("absent", pa.string())])
    got = read_base_rows(storage, "base.parquet", schema.remove(1), RECORD_KEY, pa.array(["k057", "k003", "k051"]),
                         position_column="pos")
    assert got.column("pos").to_pylist() == [3, 51, 57]
    back = read_base_positions(storage, "base.parquet", schema, np.array([57, 3, 51, 99, 0]))
    assert back.schema == schema
    assert back.column("v").to_pylist() == [0, 3, 51, 57, 99]
    assert read_base_positions(storage, "base.parquet", schema, np.array([], np.int64)).num_rows == 0
    none = read_base_rows(storage, "base.parquet", schema, RECORD_KEY, pa.array(["zz"]), position_column="pos")
    assert none.column_names == [*schema.names, "pos"] and none.num_rows == 0



@pytest.mark.parametrize("index", [None, 0, 3])
def test_positions_task_keys_rows_for_the_anti_join(slice_files, index):
    """The positions task gives the base rows of every key the logs name (a delete's too), keyed as the scan
    keys them: ``index << 40 | position`` for a file scanned alone, else (file name, position)."""
    from hoodpy.read import slice_scan

    storage, base, logs = slice_files
    task = slice_scan._named_positions(storage.base_uri, [(base, "base.parquet", index, logs)], 1, {T1, T2, T3, T4})
    [batch] = list(task(iter([pa.record_batch([pa.array([0], pa.int64())], names=["id"])])))
    named = sorted(BASE.column("id").to_pylist().index(k) for k in "abceg")  # x, y, z are not in the base
    if index is None:
        assert batch.column_names == [slice_scan._FILE, slice_scan._ROW]
        assert set(batch.column(0).to_pylist()) == {"base.parquet"}
        assert sorted(batch.column(1).to_pylist()) == named
    else:
        assert batch.column_names == [slice_scan._ROW]
        assert sorted(batch.column(0).to_pylist()) == [(index << 40) + p for p in named]

"""The positions of a base file's rows whose keys the logs name (what the merge-on-read anti-join drops), and
the row positions the pyarrow scan reports (Spark's ``_metadata.row_index`` where Spark cannot reach the
storage)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read.file_scan import _scan_files, key_positions
from hoodpy.storage import Storage


def test_positions_of_named_keys_across_row_groups(tmp_path):
    rows = pa.table({RECORD_KEY: [f"k{i:03d}" for i in range(100)], "v": list(range(100))})
    pq.write_table(rows, tmp_path / "base.parquet", row_group_size=10)
    storage = Storage(str(tmp_path))
    got = key_positions(storage, "base.parquet", RECORD_KEY, pa.array(["k057", "k003", "k051", "zzz"]))
    assert got.tolist() == [3, 51, 57]
    assert key_positions(storage, "base.parquet", RECORD_KEY, pa.array(["nope"])).tolist() == []
    pq.write_table(rows.drop_columns([RECORD_KEY]), tmp_path / "virtual.parquet")  # virtual keys: none stored
    assert key_positions(storage, "virtual.parquet", RECORD_KEY, pa.array(["k003"])).tolist() == []


def test_pyarrow_scan_reports_each_rows_position_in_its_file(tmp_path):
    pq.write_table(pa.table({"v": list(range(25))}), tmp_path / "a.parquet", row_group_size=10)
    pq.write_table(pa.table({"v": [100, 101]}), tmp_path / "b.parquet")
    scan = _scan_files(str(tmp_path), ["a.parquet", "b.parquet"], 1, pa.schema([("v", pa.int64())]), "file", "row")
    out = pa.Table.from_batches(list(scan([pa.record_batch([pa.array([0])], names=["id"])])))
    assert out.column_names == ["v", "file", "row"]
    assert list(zip(*out.to_pydict().values())) == [
        *((v, "a.parquet", v) for v in range(25)), (100, "b.parquet", 0), (101, "b.parquet", 1)]

"""A merge-on-read task reads only the base rows of keys the logs name, from the row groups that hold them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read.file_scan import read_base_rows
from hoodpy.storage import Storage


def test_rows_of_named_keys_in_file_order(tmp_path):
    rows = pa.table({RECORD_KEY: [f"k{i:03d}" for i in range(100)], "v": list(range(100))})
    pq.write_table(rows, tmp_path / "base.parquet", row_group_size=10)
    schema = pa.schema([(RECORD_KEY, pa.string()), ("v", pa.int64()), ("absent", pa.string())])
    storage = Storage(str(tmp_path))
    got = read_base_rows(storage, "base.parquet", schema, RECORD_KEY, pa.array(["k057", "k003", "k051", "zzz"]))
    assert got.schema == schema
    assert got.to_pylist() == [{RECORD_KEY: k, "v": v, "absent": None} for k, v in (("k003", 3), ("k051", 51),
                                                                                     ("k057", 57))]
    assert read_base_rows(storage, "base.parquet", schema, RECORD_KEY, pa.array(["nope"])).num_rows == 0
    # a base file without stored keys (virtual keys): no stored key names a row
    pq.write_table(rows.drop_columns([RECORD_KEY]), tmp_path / "virtual.parquet")
    assert read_base_rows(storage, "virtual.parquet", schema, RECORD_KEY, pa.array(["k003"])).num_rows == 0

"""Log blocks written by hoodpy: Hudi's own single log files (hudi-rs ``core/log_files``) reproduced byte for byte
from what they hold, and every block type read back by hoodpy's parser with every column type."""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.file_group import log_writer
from hoodpy.file_group.log_file import data_rows, deleted_records, effective_blocks
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema import arrow_schema_from_avro, avro_schema_from_arrow, avro_schema_to_json, parse_avro_schema
from hoodpy.timeline import log_format as lf
from java_samples import LOG_FILES

T1, T2 = "20250101000000001", "20250101000000002"


def _fixture(folder: str) -> bytes:
    [path] = [p for p in Path(LOG_FILES / folder).iterdir() if p.name.startswith(".")]
    return path.read_bytes()


def test_avro_data_block_reproduces_hudi_bytes():
    """The Avro fixture's record decoded to Arrow and written again: the same 1172 bytes (magic, block size,
    header map, content of version 3 with the length-prefixed record, empty footer, reverse pointer)."""
    data = _fixture("valid_log_avro_data")
    [block] = lf.scan_blocks(data)
    schema = block.header[lf.SCHEMA]
    rows = data_rows(block, arrow_schema_from_avro(parse_avro_schema(schema)))
    assert rows.num_rows == 1 and rows.column("_hoodie_file_name")[0].as_py() == "ff32ab89-5ad0-4968-83b4-89a34c95d32f-0"
    assert log_writer.avro_data_block(rows, block.header[lf.INSTANT_TIME], schema) == data
    assert len(data) == 1172 and struct.unpack(">q", data[6:14])[0] == 1158 and data[-8:] == struct.pack(">q", 1164)


def test_delete_block_reproduces_hudi_bytes():
    """Three keys without an ordering value: each one's orderingVal is union branch 2, long 0, as Java writes."""
    data = _fixture("valid_log_delete")
    [block] = lf.scan_blocks(data)
    deletes = [(d.record_key, d.partition_path, log_writer.ordering_value(None, None))
               for d in deleted_records(block)]
    assert len(deletes) == 3
    assert log_writer.delete_block(deletes, block.header[lf.INSTANT_TIME], block.header[lf.SCHEMA]) == data
    payload = block.content[8:]
    assert payload[0] == 0x06 and payload.count(bytes([0x04, 0x00])) >= 3  # 3 items; long (index 2) zero


def test_rollback_block_reproduces_hudi_bytes():
    data = _fixture("valid_log_rollback")
    assert log_writer.rollback_block("20250126040936578", "20250126040826878") == data
    assert len(data) == 105


def test_parquet_data_block_frame_reproduces_hudi_bytes():
    """The parquet content is Java's own file (pyarrow cannot write parquet-mr's bytes); the frame around it,
    header order included, is the fixture's."""
    data = _fixture("valid_log_parquet_data")
    [block] = lf.scan_blocks(data)
    assert log_writer.parquet_data_block(block.content, block.header[lf.INSTANT_TIME], block.header[lf.SCHEMA]) == data


# -- round trips with every column type ----------------------------------------------------------------
DATA = pa.schema([
    ("id", pa.int32()), ("ts", pa.int64()), ("name", pa.string()), ("score", pa.float64()), ("f", pa.float32()),
    ("flag", pa.bool_()), ("amt", pa.decimal128(10, 2)), ("d", pa.date32()),
    ("t", pa.timestamp("us", tz="UTC")), ("local", pa.timestamp("us")), ("bin", pa.binary()),
    ("tags", pa.list_(pa.string())), ("info", pa.struct([("a", pa.int32()), ("b", pa.string())])),
    ("m", pa.map_(pa.string(), pa.struct([("x", pa.float64())]))),
    ("nested", pa.list_(pa.struct([("k", pa.string()), ("mm", pa.map_(pa.string(), pa.int64()))]))),
])
META = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])
FULL = pa.schema([*META, *DATA])


def _rows() -> pa.Table:
    return pa.Table.from_pylist([
        {"_hoodie_commit_time": T1, "_hoodie_commit_seqno": f"{T1}_0_1", "_hoodie_record_key": "1",
         "_hoodie_partition_path": "p=1", "_hoodie_file_name": "f-0", "id": 1, "ts": 1695091554790, "name": "é",
         "score": 1.5, "f": 0.25, "flag": True, "amt": Decimal("12.34"), "d": dt.date(2024, 2, 29),
         "t": dt.datetime(2024, 1, 1, 12, 0, 1, 5, tzinfo=dt.timezone.utc),
         "local": dt.datetime(2024, 1, 1, 12, 0, 1, 6), "bin": b"\x00\xff", "tags": ["a", None],
         "info": {"a": 7, "b": None}, "m": [("k1", {"x": 2.5}), ("k2", None)],
         "nested": [{"k": "z", "mm": [("q", 3)]}]},
        {"_hoodie_commit_time": T1, "_hoodie_commit_seqno": f"{T1}_0_2", "_hoodie_record_key": "2",
         "_hoodie_partition_path": "p=1", "_hoodie_file_name": "f-0", "id": 2},
    ], schema=FULL)


def _schema_json() -> str:
    return avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(DATA, "t")))


def test_log_schema_puts_meta_fields_first_as_hudi_does():
    schema = json.loads(_schema_json())
    assert [f["name"] for f in schema["fields"]] == [*META_COLUMNS, *DATA.names]
    assert schema["fields"][0] == {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "",
                                   "default": None}
    assert (schema["name"], schema["namespace"]) == ("t_record", "hoodie.t")


@pytest.mark.parametrize("fmt", ["avro", "parquet"])
def test_data_blocks_read_back_with_every_type(fmt):
    rows = _rows()
    if fmt == "avro":
        data = log_writer.avro_data_block(rows, T1, _schema_json())
    else:
        sink = io.BytesIO()
        pq.write_table(rows, sink)
        data = log_writer.parquet_data_block(sink.getvalue(), T1, _schema_json())
    [block] = lf.scan_blocks(data)
    assert block.block_type == (lf.AVRO_DATA_BLOCK if fmt == "avro" else lf.PARQUET_DATA_BLOCK)
    assert block.header == {lf.INSTANT_TIME: T1, lf.SCHEMA: _schema_json()} and block.footer == {}
    assert data_rows(block, FULL).to_pylist() == rows.to_pylist()
    if fmt == "avro":
        assert struct.unpack(">ii", block.content[:8]) == (3, 2)  # block version 3, two records


def test_delete_block_ordering_values_read_back():
    """Each ordering value keeps its Avro type's union branch; none is long 0 (the delete operation's)."""
    deletes = [("1", "p", log_writer.ordering_value(None, pa.int64())),
               ("2", "p", log_writer.ordering_value(1695091554790, pa.int64())),
               ("3", "p", log_writer.ordering_value(7, pa.int32())),
               ("4", "p", log_writer.ordering_value("b", pa.string())),
               ("5", "p", log_writer.ordering_value(2.5, pa.float64())),
               ("6", "p", log_writer.ordering_value(dt.date(2024, 1, 1), pa.date32()))]
    assert [o for _, _, o in deletes] == [("long", 0), ("long", 1695091554790), ("int", 7), ("string", "b"),
                                          ("double", 2.5), ("long", 0)]
    [block] = lf.scan_blocks(log_writer.delete_block(deletes, T2, _schema_json()))
    assert block.header == {lf.SCHEMA: _schema_json(), lf.INSTANT_TIME: T2}
    assert [(d.record_key, d.ordering_value) for d in deleted_records(block)] == [
        ("1", 0), ("2", 1695091554790), ("3", 7), ("4", "b"), ("5", 2.5), ("6", 0)]


def test_rollback_block_drops_the_target_blocks():
    """A slice's log files as a failed write and its rollback leave them (Java's way): the rolled-back
    instant's data block no longer counts, the earlier one does."""
    first = log_writer.avro_data_block(_rows().slice(0, 1), T1, _schema_json())
    failed = log_writer.avro_data_block(_rows().slice(1, 1), T2, _schema_json())
    rollback = log_writer.rollback_block("20250101000000003", T2)
    committed = {T1, T2}  # even were the rolled-back instant taken as committed, its block is out
    kept = effective_blocks([("log.1", first), ("log.2", failed), ("log.3", rollback)], committed).blocks
    assert [b.instant_time for b in kept] == [T1]

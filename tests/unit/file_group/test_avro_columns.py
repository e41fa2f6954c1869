"""Avro data blocks of flat schemas decoded and encoded column-wise: exactly fastavro's values and bytes."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import struct
from decimal import Decimal
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pytest

from hoodpy.errors import HoodieIOError
from hoodpy.file_group.avro_block import avro_block_keys, avro_block_table, record_offsets
from hoodpy.file_group import avro_columns
from hoodpy.file_group.avro_columns import decode_records, encode_records, flat_fields
from hoodpy.file_group.log_writer import avro_data_block
from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema
from hoodpy.timeline import log_format as lf
from java_samples import LOG_FILES

SCHEMA = {"type": "record", "name": "r", "fields": [
    {"name": "_hoodie_record_key", "type": ["null", "string"]},
    {"name": "s", "type": "string"},
    {"name": "ns", "type": ["string", "null"]},
    {"name": "i", "type": "int"},
    {"name": "ni", "type": ["null", "int"]},
    {"name": "l", "type": ["null", "long"]},
    {"name": "f", "type": ["null", "float"]},
    {"name": "d", "type": "double"},
    {"name": "b", "type": ["null", "boolean"]},
    {"name": "by", "type": ["null", "bytes"]},
    {"name": "fx", "type": {"type": "fixed", "name": "fx", "size": 3}},
    {"name": "dec", "type": ["null", {"type": "fixed", "name": "dec", "size": 9, "logicalType": "decimal",
                                      "precision": 20, "scale": 2}]},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
    {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
    {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
]}
ARROW = pa.schema([
    ("_hoodie_record_key", pa.string()), ("s", pa.string()), ("ns", pa.string()), ("i", pa.int32()),
    ("ni", pa.int16()), ("l", pa.int64()), ("f", pa.float32()), ("d", pa.float64()), ("b", pa.bool_()),
    ("by", pa.binary()), ("fx", pa.binary(3)), ("dec", pa.decimal128(20, 2)), ("day", pa.date32()),
    ("ts", pa.timestamp("us", tz="UTC")), ("tsm", pa.timestamp("ms")),
])


def _records(n: int, seed: int = 7, null_rate: float = 0.3) -> list[dict]:
    rnd = random.Random(seed)

    def maybe(v):
        return None if rnd.random() < null_rate else v

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return [{
        "_hoodie_record_key": maybe(f"key-{k}"), "s": rnd.choice(["", "é€😀", "x" * rnd.randrange(200)]),
        "ns": maybe("ü" * rnd.randrange(5)), "i": rnd.randrange(-2 ** 31, 2 ** 31),
        "ni": maybe(rnd.randrange(-2 ** 15, 2 ** 15)), "l": maybe(rnd.choice([0, -1, 2 ** 63 - 1, -2 ** 63,
                                                                                rnd.randrange(-2 ** 40, 2 ** 40)])),
        "f": maybe(float(np.float32(rnd.uniform(-1e6, 1e6)))), "d": rnd.uniform(-1e300, 1e300),
        "b": maybe(rnd.random() < 0.5), "by": maybe(bytes(rnd.randrange(256) for _ in range(rnd.randrange(4)))),
        "fx": bytes(rnd.randrange(256) for _ in range(3)),
        "dec": maybe(Decimal(rnd.randrange(-10 ** 18, 10 ** 18)).scaleb(-2)),
        "day": maybe(dt.date(1970, 1, 1) + dt.timedelta(days=rnd.randrange(-30000, 30000))),
        "ts": maybe(epoch + dt.timedelta(microseconds=rnd.randrange(-2 ** 50, 2 ** 50))),
        "tsm": (epoch + dt.timedelta(milliseconds=rnd.randrange(-2 ** 40, 2 ** 40))).replace(tzinfo=None),
    } for k in range(n)]


def _block(records: list[dict], schema: dict = SCHEMA) -> bytes:
    parsed = fastavro.parse_schema(schema)
    parts = [struct.pack(">ii", 3, len(records))]
    for r in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        parts += [struct.pack(">i", buf.tell()), buf.getvalue()]
    return b"".join(parts)


def test_flat_block_decodes_as_fastavro_does():
    records = _records(500)
    table = avro_block_table(_block(records), json.dumps(SCHEMA), ARROW)
    assert table.schema == ARROW
    assert table.to_pylist() == pa.Table.from_pylist(records, schema=ARROW).to_pylist()


@pytest.mark.parametrize("null_rate", [0.0, 1.0, 0.5])
def test_union_fields_without_or_only_with_nulls_decode_as_fastavro_does(null_rate):
    # No nulls in a union field takes the decoder's all-records route, only nulls its empty-values one.
    content = _block(_records(400, seed=13, null_rate=null_rate))
    parsed = fastavro.parse_schema(SCHEMA)
    offsets = record_offsets(content)
    decoded = [fastavro.schemaless_reader(io.BytesIO(content[offsets[i]:offsets[i + 1] - 4]), parsed, None)
               for i in range(400)]
    assert sum(v is None for r in decoded for v in r.values()) == (0 if null_rate == 0 else 400 * 10
                                                                     if null_rate == 1 else pytest.approx(2000, 0.2))
    table = avro_block_table(content, json.dumps(SCHEMA), ARROW)
    assert table.to_pylist() == pa.Table.from_pylist(decoded, schema=ARROW).to_pylist()
    picks = np.array([1, 2, 50, 399])
    subset = avro_block_table(content, json.dumps(SCHEMA), ARROW, picks)
    assert subset.to_pylist() == pa.Table.from_pylist([decoded[i] for i in picks], schema=ARROW).to_pylist()


def test_projection_and_record_subset():
    records = _records(300, seed=3)
    wanted = pa.schema([ARROW.field("l"), ARROW.field("_hoodie_record_key"), ARROW.field("dec")])
    picks = np.array([0, 5, 6, 299])
    table = avro_block_table(_block(records), json.dumps(SCHEMA), wanted, picks)
    assert table.to_pylist() == pa.Table.from_pylist([records[i] for i in picks], schema=wanted).to_pylist()


def test_keys_read_without_the_rest():
    records = _records(50, seed=5)
    keys = avro_block_keys(_block(records), json.dumps(SCHEMA), "_hoodie_record_key")
    assert keys.to_pylist() == [r["_hoodie_record_key"] for r in records]


def test_nested_schema_is_not_flat():
    nested = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": "a", "type": {"type": "array", "items": "int"}}]}
    assert flat_fields(json.dumps(nested)) is None
    assert flat_fields(json.dumps({**SCHEMA, "fields": [{"name": "u", "type": ["null", "int", "string"]}]})) is None
    assert len(flat_fields(json.dumps(SCHEMA))) == len(SCHEMA["fields"])


@pytest.mark.parametrize("damage", ["truncate", "longer", "branch", "past_end", "varint_at_end"])
def test_damaged_records_are_reported_not_misread(damage):
    schema = {"type": "record", "name": "r", "fields": [{"name": "k", "type": ["null", "string"]},
                                                         {"name": "v", "type": "long"}]}
    content = bytearray(_block([{"k": "abc", "v": 5}, {"k": "de", "v": -7}], schema))
    offsets = record_offsets(bytes(content))
    starts, ends = offsets[:-1], offsets[1:] - 4
    if damage == "truncate":  # the first record's length says one byte less than its fields take
        ends = ends.copy()
        ends[0] -= 1
    elif damage == "longer":  # its string's length runs past the record
        content[int(starts[0]) + 1] = 0x7E
    elif damage == "branch":
        content[int(starts[1])] = 0x08  # union branch 4 of two
    elif damage == "past_end":  # the last record's length says more than the block holds
        ends = ends.copy()
        ends[-1] += 3
    else:  # the block's last byte, the end of the last long, says another byte follows
        content[-1] |= 0x80
    wanted = pa.schema([("k", pa.string()), ("v", pa.int64())])
    with pytest.raises(HoodieIOError, match="corrupt Avro record"):
        decode_records(bytes(content), starts, ends, flat_fields(json.dumps(schema)), wanted)


def test_flat_records_encode_byte_for_byte_as_fastavro():
    records = _records(400, seed=11)
    rows = pa.Table.from_pylist(records, schema=ARROW)
    block = avro_data_block(rows.slice(3), "20260101000000000", json.dumps(SCHEMA))  # a slice: non-zero offsets
    assert next(lf.read_blocks(block)).content == _block(records[3:])


@pytest.mark.parametrize("order", ["as_declared", "strings_last", "strings_only"])
def test_encoding_past_int32_offsets_and_any_field_order_is_fastavros(monkeypatch, order):
    """Columns are joined record by record; past an Arrow binary's int32 offsets (here lowered to 100 bytes)
    they are joined as large_binary. A string field first or last, or only strings, frame the same way."""
    monkeypatch.setattr(avro_columns, "BINARY_MAX_BYTES", 100)
    fields = list(SCHEMA["fields"])
    strings = [f for f in fields if f["name"] in ("s", "ns", "by", "_hoodie_record_key")]
    if order == "strings_last":
        fields = [f for f in fields if f not in strings] + strings
    elif order == "strings_only":
        fields = strings
    schema = {**SCHEMA, "fields": fields}
    records = [{f["name"]: r[f["name"]] for f in fields} for r in _records(60, seed=5)]
    rows = pa.Table.from_pylist(records, schema=pa.schema([ARROW.field(f["name"]) for f in fields]))
    block = avro_data_block(rows.slice(2), "20260101000000000", json.dumps(schema))
    assert next(lf.read_blocks(block)).content == _block(records[2:], schema)


def test_columns_the_encoder_does_not_take_go_to_fastavro():
    fields = flat_fields(json.dumps(SCHEMA))
    rows = pa.Table.from_pylist(_records(20), schema=ARROW)
    assert encode_records(rows, fields) is not None
    assert encode_records(rows.drop_columns(["d"]), fields) is None
    assert encode_records(rows.set_column(1, "s", rows.column("s").cast(pa.large_string())), fields) is None
    assert encode_records(rows.set_column(14, "tsm", rows.column("tsm").cast(pa.timestamp("us"))), fields) is None
    # a decimal whose unscaled value does not fit the fixed's 9 bytes: fastavro decides (and refuses it)
    big = pa.array([Decimal(10) ** 30] * 20, pa.decimal128(38, 2))
    assert encode_records(rows.set_column(11, "dec", big), fields) is None


def test_blocks_go_in_chunks_and_empty_blocks_work(monkeypatch):
    monkeypatch.setattr(avro_columns, "CHUNK_RECORDS", 7)
    records = _records(50, seed=13)
    content = _block(records)
    table = avro_block_table(content, json.dumps(SCHEMA), ARROW)
    assert table.to_pylist() == pa.Table.from_pylist(records, schema=ARROW).to_pylist()
    rows = pa.Table.from_pylist(records, schema=ARROW)
    assert next(lf.read_blocks(avro_data_block(rows, "1", json.dumps(SCHEMA)))).content == content
    empty = avro_block_table(_block([]), json.dumps(SCHEMA), ARROW)
    assert empty.num_rows == 0 and empty.schema == ARROW
    assert next(lf.read_blocks(avro_data_block(rows.slice(0, 0), "1", json.dumps(SCHEMA)))).content == _block([])


def test_java_written_block_decodes_as_fastavro_does():
    """hudi-rs ``core/log_files/valid_log_avro_data``: an Avro data block written by Java Hudi."""
    [path] = [p for p in Path(LOG_FILES / "valid_log_avro_data").iterdir() if p.name.startswith(".")]
    [block] = lf.scan_blocks(path.read_bytes())
    schema = block.header[lf.SCHEMA]
    assert flat_fields(schema) is not None  # the column-wise route
    target = arrow_schema_from_avro(parse_avro_schema(schema))
    offsets = record_offsets(block.content)
    parsed = fastavro.parse_schema(json.loads(schema))
    decoded = [fastavro.schemaless_reader(io.BytesIO(block.content[offsets[i]:offsets[i + 1] - 4]), parsed, None)
               for i in range(len(offsets) - 1)]
    table = avro_block_table(block.content, schema, target)
    assert table.num_rows == len(decoded) == 1
    assert table.to_pylist() == pa.Table.from_pylist(decoded, schema=target).to_pylist()

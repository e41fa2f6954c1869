"""CDC images printed a column at a time (hoodpy.read.cdc_columns) are the per-record printers' text exactly:
rows from files (Jackson) and images logged in DATA_BEFORE_AFTER records (Avro's toString), every type,
nulls, escapes, and the record ranges a CDC file is split into."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal

import fastavro

import pyarrow as pa
import pytest

from hoodpy.file_group.cdc_log import cdc_record, cdc_schema_json
from hoodpy.errors import HoodieIOError
from hoodpy.file_group.avro_block import record_offsets
from hoodpy.file_group.avro_nested_columns import UnsupportedSchema, block_columns
from hoodpy.file_group.log_file import cdc_blocks, cdc_records
from hoodpy.file_group.log_writer import _avro_content, avro_records, cdc_data_block
from hoodpy.read.cdc_columns import logged_changes, row_texts
from hoodpy.read.cdc_images import avro_string, avro_text, jackson_float, jackson_string, java_float_text, row_text
from hoodpy.schema import avro_schema_from_arrow

UTC = dt.timezone.utc
STRINGS = ["plain", 'quo"te \\ back', "tab\tnew\nline\r", "ctl \x01\x1f \x7f", "uni é 中 \u2028", "", None]
TYPES = pa.schema([
    ("i", pa.int32()), ("l", pa.int64()), ("b", pa.bool_()), ("s", pa.string()),
    ("d", pa.decimal128(15, 2)), ("d0", pa.decimal128(5, 0)), ("d9", pa.decimal128(20, 9)),
    ("day", pa.date32()), ("us", pa.timestamp("us", tz="UTC")), ("ms", pa.timestamp("ms")),
    ("f", pa.float64()), ("bin", pa.binary()), ("lst", pa.list_(pa.int64())),
    ("st", pa.struct([("a", pa.int32()), ("c", pa.string())])), ("m", pa.map_(pa.string(), pa.int64()))])


def _rows(n: int) -> list[dict]:
    out = []
    for k in range(n):
        out.append({
            "i": None if k % 5 == 4 else k - 3, "l": -(2 ** 40) + k, "b": None if k % 7 == 3 else k % 2 == 0,
            "s": STRINGS[k % len(STRINGS)], "d": Decimal(k * 37 - 150) / 100, "d0": Decimal(k - 2),
            "d9": Decimal("0E-9") if k % 3 == 0 else Decimal(k) / 1000,
            "day": None if k % 6 == 5 else dt.date(1969, 12, 30) + dt.timedelta(days=k * 400),
            "us": dt.datetime(2024, 1, 2, 3, 4, 5, k, tzinfo=UTC), "ms": dt.datetime(1999, 5, 6, 7, 8, 9, 1000 * k),
            "f": [1.5, -0.0, 1e-7, 1e22, None][k % 5], "bin": None if k % 2 else bytes([0, k % 256, 200]),
            "lst": None if k % 4 == 1 else [k, None, -k], "st": None if k % 3 == 2 else {"a": k, "c": "x\"y"},
            "m": {"k": k} if k % 2 else None})
    return out


def test_row_texts_are_row_text_for_every_type():
    table = pa.Table.from_pylist(_rows(40), schema=TYPES)
    expected = [row_text(r) for r in avro_records(table)]
    assert row_texts(table).to_pylist() == expected
    assert expected[0].startswith('{"i":-3,"l":-1099511627776,"b":true,"s":"plain","d":-1.50,"d0":-2,"d9":0E-9,')
    assert row_texts(table.slice(0, 0)).to_pylist() == []


def test_row_texts_of_a_chunked_table_with_meta_columns():
    table = pa.concat_tables([pa.table({"_hoodie_commit_time": ["1", "2"], "id": [1, None]})] * 2)
    assert row_texts(table).to_pylist() == [row_text(r) for r in table.to_pylist()]
    assert row_texts(table).to_pylist()[1] == '{"_hoodie_commit_time":"2","id":null}'


NESTED = ("f", "bin", "lst", "st", "m")  # printed per value (floats: Python's repr); the others column-wise


def _logged(n: int, blocks: int, flat: bool = False) -> tuple[bytes, pa.DataType, list[dict]]:
    """A CDC file of ``blocks`` DATA_BEFORE_AFTER blocks over ``n`` changes of rows of every type (``flat``:
    the types printed column-wise only, decoded column-wise too)."""
    skip = NESTED if flat else ("m",)  # maps: Avro maps of the images
    data_schema = pa.schema([f for f in TYPES if f.name not in skip])
    image = avro_schema_from_arrow(data_schema, "t")
    schema = cdc_schema_json("DATA_BEFORE_AFTER", image)
    rows = [{k: v for k, v in r.items() if k not in skip} for r in _rows(n + 1)]
    records = [cdc_record("DATA_BEFORE_AFTER", "iud"[k % 3], str(k), "20250126040823628",
                          None if k % 3 == 0 else rows[k], None if k % 3 == 2 else rows[k + 1]) for k in range(n)]
    per = -(-n // blocks)
    data = b"".join(cdc_data_block(records[i:i + per], "20250126040823628", schema) for i in range(0, n, per))
    return data, pa.struct(list(data_schema)), records


@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("parts", [1, 3])
def test_logged_images_are_avro_text_in_every_part(parts, flat):
    data, image_type, records = _logged(31, blocks=2, flat=flat)
    decoded = cdc_records(data, "cdc")
    expected = [(r["op"], None if r["before"] is None else avro_text(r["before"], image_type),
                 None if r["after"] is None else avro_text(r["after"], image_type)) for r in decoded]
    got = []
    for part in range(parts):
        ops, before, after = logged_changes(cdc_blocks(data, "cdc"), image_type, part, parts)
        got += list(zip(ops.to_pylist(), before.to_pylist(), after.to_pylist(), strict=True))
    assert got == expected and len(got) == len(records) == 31
    assert '"d": [-1, -1, -1, -1, -1, -1, -113]' in expected[1][1]  # -1.13: the fixed's signed bytes
    # Without the table's types (the streaming source), decimals print as the per-record printer prints them.
    ops, before, _ = logged_changes(cdc_blocks(data, "cdc"), None)
    assert before.to_pylist() == [None if r["before"] is None else avro_text(r["before"]) for r in decoded]


def test_no_records_in_a_part():
    data, image_type, _ = _logged(2, blocks=1)
    ops, before, after = logged_changes(cdc_blocks(data, "cdc"), image_type, 0, 3)  # 2 records in 3 parts
    assert len(ops) == len(before) == len(after) == 0


def test_block_columns_are_fastavro_values():
    """The column-wise decoder reads what fastavro reads (raw values: logical types ignored), nested records and
    nulls included; a schema it does not read is refused, a record whose length disagrees is an error."""
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "i", "type": "int"}, {"name": "l", "type": ["null", "long"]},
        {"name": "s", "type": ["string", "null"]},
        {"name": "b", "type": "boolean"}, {"name": "f", "type": "float"}, {"name": "d", "type": ["null", "double"]},
        {"name": "y", "type": "bytes"}, {"name": "x", "type": {"type": "fixed", "name": "x3", "size": 3}},
        {"name": "n", "type": ["null", {"type": "record", "name": "inner", "fields": [
            {"name": "a", "type": "long"}, {"name": "x", "type": "x3"}]}]},
        {"name": "again", "type": ["null", "inner"]}]}
    rows = [{"i": k - 5, "l": None if k % 3 else -(2 ** 62) + k, "s": None if k % 4 == 1 else "é" * k,
             "b": k % 2 == 0, "f": k / 4, "d": None if k % 2 else k * 1e300, "y": bytes(range(k)),
             "x": bytes([k, 255, 0]), "n": None if k % 5 == 2 else {"a": 2 ** 40 * k, "x": b"abc"},
             "again": {"a": k, "x": b"xyz"} if k % 2 else None} for k in range(12)]
    content = _avro_content(rows, json.dumps(schema))
    offsets = record_offsets(content)
    got = block_columns(content, offsets[2:9], offsets[3:10] - 4, schema)
    assert got.to_pylist() == [fastavro.schemaless_reader(io.BytesIO(content[offsets[i]:offsets[i + 1] - 4]),
                                                          fastavro.parse_schema(schema)) for i in range(2, 9)]
    with pytest.raises(HoodieIOError, match="stored length"):
        block_columns(content, offsets[:2], offsets[1:3] - 3, schema)
    with pytest.raises(UnsupportedSchema):
        block_columns(content, offsets[:1], offsets[1:2] - 4, {"type": "record", "name": "r", "fields": [
            {"name": "a", "type": {"type": "array", "items": "int"}}]})


def test_strings_are_escaped_as_jackson_and_avro_escape_them():
    """Jackson (CharTypes): control characters, upper-case hex; Avro's writeEscapedString: those, U+007F-U+009F
    and U+2000-U+20FF too; neither escapes '/' or other non-ASCII."""
    text = 'a"\\/\b\f\n\r\t\x01\x1f\x7f\x85é\u2028中'
    assert jackson_string(text) == '"a\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001F\x7f\x85é\u2028中"'
    assert avro_string(text) == '"a\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001F\\u007F\\u0085é\\u2028中"'
    column = pa.array([text, "plain/é", None])
    assert row_texts(pa.table({"s": column})).to_pylist() == \
        ['{"s":' + jackson_string(text) + "}", '{"s":"plain/é"}', '{"s":null}']


@pytest.mark.parametrize(("value", "single", "java"), [
    (1.5, False, "1.5"), (100.0, False, "100.0"), (0.001, False, "0.001"), (0.00123, False, "0.00123"),
    (9999999.0, False, "9999999.0"), (1e7, False, "1.0E7"), (12345678.9, False, "1.23456789E7"),
    (1e-4, False, "1.0E-4"), (1.23e-8, False, "1.23E-8"), (-1e22, False, "-1.0E22"), (4.9e-324, False, "4.9E-324"),
    (-0.0, False, "-0.0"), (0.0, False, "0.0"), (0.1, True, "0.1"), (3.4028235e38, True, "3.4028235E38"),
    (1e-5, True, "1.0E-5")])
def test_floats_print_as_java_prints_them(value, single, java):
    assert java_float_text(value, single) == java


def test_non_finite_floats():
    assert jackson_float(float("nan")) == '"NaN"' and jackson_float(float("-inf")) == '"-Infinity"'
    assert avro_text(float("nan")) == "NaN" and avro_text(float("inf")) == "Infinity"
    assert row_text({"f": 1e7, "g": float("nan")}) == '{"f":1.0E7,"g":"NaN"}'
    assert avro_text({"f": 0.10000000149011612}, pa.struct([("f", pa.float32())])) == '{"f": 0.1}'
    table = pa.table({"f": pa.array([0.1, None, float("inf")], pa.float32())})
    assert row_texts(table).to_pylist() == ['{"f":0.1}', '{"f":null}', '{"f":"Infinity"}']

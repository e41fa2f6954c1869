"""CDC log files: their names, the record schema of each supplemental logging mode (Hudi 0.14's
HoodieCDCUtils), and CDC data blocks written and read back."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest

from hoodpy.file_group.cdc_log import cdc_record, cdc_schema, cdc_schema_json
from hoodpy.file_group.log_file import cdc_records
from hoodpy.file_group.log_writer import cdc_data_block
from hoodpy.file_group.naming import cdc_log_file_name, parse_log_file_name
from hoodpy.read.cdc_images import avro_text as _avro_text
from hoodpy.read.cdc_images import row_text as _row_text
from hoodpy.timeline import log_format

FID = "1d3c5d6e-7f80-4a1b-9c2d-3e4f5a6b7c8d-0"
TABLE = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "id", "type": ["null", "int"], "default": None},
    {"name": "v", "type": ["null", "string"], "default": None}]}


def test_cdc_log_names_are_not_data_log_names():
    name = cdc_log_file_name(FID, "20250126040823628", "0-11-16")
    assert name == f".{FID}_20250126040823628.log.1_0-11-16-cdc"
    assert parse_log_file_name(name) is None  # readers of file slices never see it
    parsed = parse_log_file_name(name, cdc=True)
    assert parsed.is_cdc and parsed.base_instant_time == "20250126040823628" and parsed.name == name
    assert not parse_log_file_name(f".{FID}_20250126040823628.log.1_0-11-16", cdc=True).is_cdc


def test_schemas_per_mode():
    assert [f["name"] for f in cdc_schema("OP_KEY_ONLY", TABLE)["fields"]] == ["op", "record_key"]
    assert cdc_schema("OP_KEY_ONLY", TABLE)["name"] == "Record"
    before = cdc_schema("DATA_BEFORE", TABLE)
    assert before["name"] == "CDC" and [f["name"] for f in before["fields"]] == ["op", "record_key", "before"]
    full = cdc_schema("DATA_BEFORE_AFTER", TABLE)
    assert [f["name"] for f in full["fields"]] == ["op", "ts_ms", "before", "after"]
    assert full["fields"][2]["type"] == ["null", TABLE] and full["fields"][3]["type"] == ["null", "hoodie.t.t_record"]
    with pytest.raises(ValueError, match="mode"):
        cdc_schema("EVERYTHING", TABLE)


@pytest.mark.parametrize("mode", ["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"])
def test_cdc_block_round_trip(mode):
    records = [cdc_record(mode, "u", "1", "20250126040823628", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}),
               cdc_record(mode, "i", "2", "20250126040823628", None, {"id": 2, "v": None}),
               cdc_record(mode, "d", "3", "20250126040823628", {"id": 3, "v": "c"}, None)]
    schema = cdc_schema_json(mode, TABLE)
    data = cdc_data_block(records, "20250126040823628", schema)
    (block,) = log_format.scan_blocks(data, "cdc")
    assert block.block_type == log_format.CDC_DATA_BLOCK == 6
    assert block.instant_time == "20250126040823628" and json.loads(block.header[log_format.SCHEMA])
    assert cdc_records(data + cdc_data_block([], "20250126040823628", schema), "cdc") == records


def test_image_texts():
    # Avro's GenericData.toString for logged images, Jackson's compact form for rows read from base files.
    assert _avro_text({"id": 1, "v": "a\"b", "f": 1.5, "n": None, "b": True}) == \
        '{"id": 1, "v": "a\\"b", "f": 1.5, "n": null, "b": true}'
    assert _row_text({"_hoodie_commit_time": "1", "id": 1, "v": None}) == '{"_hoodie_commit_time":"1","id":1,"v":null}'
    # Timestamps and dates as Spark and Avro hold them: microseconds and days since the epoch.
    moment = dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    assert _avro_text({"t": moment, "d": dt.date(1970, 1, 3)}) == '{"t": 1704164645000006, "d": 2}'
    assert _row_text({"t": moment}) == '{"t":1704164645000006}'


def test_image_texts_of_decimals_binary_maps_and_structs():
    """What Java prints, checked with Spark 3's Avro and Jackson (see hoodpy.read.cdc_images): a logged decimal is
    the Avro fixed's signed bytes (decimal(10,2) 1.50 -> fixed(5) 0x0000000096), bytes one char per byte, maps
    and records as objects."""
    t = pa.struct([("d", pa.decimal128(10, 2)), ("b", pa.binary()), ("m", pa.map_(pa.string(), pa.int32())),
                   ("s", pa.struct([("a", pa.int32()), ("c", pa.string()), ("e", pa.decimal128(4, 1))])),
                   ("l", pa.list_(pa.decimal128(3, 0)))])
    image = {"d": Decimal("1.50"), "b": b"\x00ab", "m": {"k": 1}, "s": {"a": 3, "c": "x", "e": Decimal("-0.1")},
             "l": [Decimal("5")]}
    assert _avro_text(image, t) == ('{"d": [0, 0, 0, 0, -106], "b": {"bytes": "\\u0000ab"}, "m": {"k": 1}, '
                                    '"s": {"a": 3, "c": "x", "e": [-1, -1]}, "l": [[0, 5]]}')
    assert _avro_text({"d": Decimal("-1.50")}, pa.struct([("d", pa.decimal128(10, 2))])) == \
        '{"d": [-1, -1, -1, -1, 106]}'
    # Rows read from files: binary as Jackson's base64, maps and structs as objects, decimals as numbers.
    assert _row_text({"d": Decimal("1.50"), "b": b"\x00ab", "m": {"k": 1}, "s": {"a": 3, "c": None}}) == \
        '{"d":1.50,"b":"AGFi","m":{"k":1},"s":{"a":3,"c":null}}'

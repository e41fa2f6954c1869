"""An Avro data block's records as an Arrow table, decoded in one pass.

fastavro turns logical types into Python objects (``Decimal``, ``date``, ``datetime``) that Arrow then
turns back into numbers: for decimal-heavy rows that is most of a merge-on-read read's time. So top-level
fields whose logical type maps onto the Arrow column type directly are decoded as their raw Avro values
(fixed bytes, int, long) and converted column-wise:

* decimal stored as ``fixed`` of at most 16 bytes (big-endian two's complement) -> decimal128;
* date (days, int) -> date32;
* timestamp-millis / timestamp-micros (long) -> timestamp of the same unit.

Any other field (nested types, bytes decimals, a column type that does not match) keeps fastavro's own
decoding. Block layout (version 3): int version, int record count, then per record int length and the
record's schemaless encoding under the header's SCHEMA.
"""

from __future__ import annotations

import io
import json
import struct
from functools import lru_cache
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa

from hoodpy.errors import HoodieIOError
from hoodpy.file_group.avro_columns import decimal_from_big_endian, decode_records, flat_fields
from hoodpy.hfile.encoding import read_protobuf_varint

DATA_BLOCK_VERSION = 3
_TIMESTAMP_UNITS = {"timestamp-millis": "ms", "timestamp-micros": "us"}


def _record_count(content: bytes) -> int:
    version, count = struct.unpack(">ii", content[:8])
    if version != DATA_BLOCK_VERSION:
        raise HoodieIOError("avro data block", f"Unsupported Avro data block version {version}")
    return count


# The last block's offsets: a merge reads a block's keys, then decodes its records (the same walk twice).
_last_offsets: tuple[bytes, np.ndarray] | None = None


def record_offsets(content: bytes) -> np.ndarray:
    """Where each record's encoding starts, and the block's end (count + 1 offsets; read-only)."""
    global _last_offsets
    last = _last_offsets
    if last is not None and last[0] is content:
        return last[1]
    _last_offsets = None  # the previous block's bytes are not kept past the next one
    offsets = _walk_offsets(content)
    offsets.flags.writeable = False
    _last_offsets = (content, offsets)
    return offsets


def _walk_offsets(content: bytes) -> np.ndarray:
    count = _record_count(content)
    offsets = np.empty(count + 1, dtype=np.int64)
    pos = 8
    unpack = struct.Struct(">i").unpack_from
    for i in range(count):
        offsets[i] = pos + 4
        pos += 4 + unpack(content, pos)[0]
    offsets[count] = pos + 4
    return offsets


def avro_block_records(content: bytes, writer: dict[str, Any]) -> list[dict[str, Any]]:
    """Every record of the block decoded as a dict (``writer``: the parsed writer schema); for small blocks
    read whole, such as CDC data blocks."""
    offsets = record_offsets(content)
    return [fastavro.schemaless_reader(io.BytesIO(content[offsets[i]:offsets[i + 1] - 4]), writer, None)
            for i in range(len(offsets) - 1)]


def avro_block_table(content: bytes, writer_schema: str, target: pa.Schema,
                     records: np.ndarray | None = None) -> pa.Table:
    """The block's records with ``target``'s fields (each one the writer schema holds), in block order;
    ``records``: only those (ascending record indexes). A flat writer schema is decoded column-wise
    (:mod:`hoodpy.file_group.avro_columns`), any other record by record with fastavro."""
    fields = flat_fields(writer_schema)
    if fields is not None:
        offsets = record_offsets(content)
        starts, ends = (offsets[:-1], offsets[1:] - 4) if records is None else (offsets[records], offsets[records + 1] - 4)
        try:
            return decode_records(content, starts, ends, fields, target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a column type the raw values do not cast to
            pass
    count = _record_count(content)
    parsed, raw, converted = _raw_reading(writer_schema, target)
    buf = io.BytesIO(content)
    read = fastavro.schemaless_reader
    decoded = []
    if records is None:
        buf.seek(8)
        for _ in range(count):
            buf.seek(4, io.SEEK_CUR)  # the record's length: records follow one another, one stream reads them all
            decoded.append(read(buf, parsed, None))
    else:
        offsets = record_offsets(content)
        for i in records.tolist():
            buf.seek(offsets[i])
            decoded.append(read(buf, parsed, None))
    table = pa.Table.from_pylist(decoded, schema=raw)
    for name in converted:
        i = table.schema.get_field_index(name)
        table = table.set_column(i, target.field(name), _convert(table.column(i), target.field(name).type))
    return table


@lru_cache(maxsize=64)
def _raw_reading(writer_schema: str, target: pa.Schema) -> tuple[dict[str, Any], pa.Schema, tuple[str, ...]]:
    """The writer schema with the convertible fields' logical types removed (parsed for fastavro), the Arrow
    schema of what it decodes, and the names of the fields to convert to ``target``'s types."""
    schema = json.loads(writer_schema)
    raw_fields: list[pa.Field] = []
    converted: list[str] = []
    for field in schema["fields"]:
        if field["name"] not in target.names:
            continue
        wanted = target.field(field["name"])
        branches = field["type"] if isinstance(field["type"], list) else [field["type"]]
        values = [i for i, b in enumerate(branches) if b != "null"]
        raw_type = _raw_type(branches[values[0]], wanted.type) if len(values) == 1 else None
        if raw_type is None:
            raw_fields.append(wanted)
            continue
        stripped = {k: v for k, v in branches[values[0]].items() if k != "logicalType"}
        if isinstance(field["type"], list):
            field["type"] = [stripped if i == values[0] else b for i, b in enumerate(branches)]
        else:
            field["type"] = stripped
        raw_fields.append(pa.field(wanted.name, raw_type, wanted.nullable))
        converted.append(wanted.name)
    return fastavro.parse_schema(schema), pa.schema(raw_fields), tuple(converted)


def _raw_type(branch: Any, wanted: pa.DataType) -> pa.DataType | None:
    """The Arrow type of ``branch``'s raw Avro value when it converts column-wise to ``wanted``, else None."""
    if not isinstance(branch, dict):
        return None
    logical, avro_type = branch.get("logicalType"), branch.get("type")
    if logical == "decimal" and avro_type == "fixed" and branch.get("size", 17) <= 16 \
            and pa.types.is_decimal128(wanted) and wanted.scale == branch.get("scale", 0):
        return pa.binary(branch["size"])
    if logical == "date" and avro_type == "int" and wanted == pa.date32():
        return pa.int32()
    if logical in _TIMESTAMP_UNITS and avro_type == "long" and pa.types.is_timestamp(wanted) \
            and wanted.unit == _TIMESTAMP_UNITS[logical]:
        return pa.int64()
    return None


def _convert(column: pa.ChunkedArray, wanted: pa.DataType) -> pa.Array:
    raw = column.combine_chunks()
    if not pa.types.is_decimal128(wanted):
        return raw.cast(wanted)  # int32 days -> date32, int64 -> timestamp of the same unit
    size = raw.type.byte_width
    values = np.frombuffer(raw.buffers()[1], dtype=np.uint8, count=(raw.offset + len(raw)) * size)
    values = values[raw.offset * size:].reshape(len(raw), size)
    return decimal_from_big_endian(values, wanted, np.asarray(raw.is_null(), dtype=bool) if raw.null_count else None)


def avro_block_keys(content: bytes, writer_schema: str, key_field: str) -> pa.Array:
    """Every record's ``key_field`` (a string field), without decoding the rest of the records: the fields
    before it are skipped by their encoded lengths when each is a string or a union of null and string (Hudi's
    meta fields, which come first), else the records are decoded with a reader schema of that field only."""
    schema = json.loads(writer_schema)
    names = [f["name"] for f in schema["fields"]]
    lead = names[:names.index(key_field) + 1] if key_field in names else []
    shapes = [_string_shape(f["type"]) for f in schema["fields"][:len(lead)]]
    offsets = record_offsets(content)
    fields = flat_fields(writer_schema)
    if lead and fields is not None:
        wanted = pa.schema([pa.field(key_field, pa.string())])
        return decode_records(content, offsets[:-1], offsets[1:] - 4, fields, wanted).column(0).combine_chunks()
    if not lead or None in shapes:
        reader = fastavro.parse_schema({**schema, "fields": [f for f in schema["fields"] if f["name"] == key_field]})
        parsed = fastavro.parse_schema(schema)
        buf = io.BytesIO(content)
        keys = []
        for start in offsets[:-1].tolist():
            buf.seek(start)
            keys.append(fastavro.schemaless_reader(buf, parsed, reader).get(key_field))
        return pa.array(keys, pa.string())
    keys = []
    for start in offsets[:-1].tolist():
        pos, key = start, None
        for string_branch in shapes:
            if string_branch >= 0:  # a union: its branch index first
                branch, pos = _varint(content, pos)
                if branch != string_branch:
                    key = None
                    continue
            length, pos = _varint(content, pos)
            key = content[pos:pos + length]
            pos += length
        keys.append(key)
    return pa.array(keys, pa.binary()).cast(pa.string())


def _string_shape(avro_type: Any) -> int | None:
    """-1 for a plain string, the string branch's index for a union of null and string, else None."""
    if avro_type == "string" or avro_type == {"type": "string"}:
        return -1
    if isinstance(avro_type, list) and len(avro_type) == 2 and set(map(str, avro_type)) == {"null", "string"}:
        return avro_type.index("string")
    return None


def _varint(content: bytes, pos: int) -> tuple[int, int]:
    """The Avro long (a zigzag-encoded varint) at ``pos``, and the position after it."""
    raw, pos = read_protobuf_varint(content, pos)
    return (raw >> 1) ^ -(raw & 1), pos

"""HFiles of Avro records: the metadata table's base files and the content of HFile log blocks.

Each cell's row is a record key; its value is the record's schemaless Avro encoding (HoodieAvroUtils.avroToBytes)
under the schema kept in the file info's ``schema`` (and, for a log block, its header's SCHEMA). Hudi writes
the record's ``key`` field (HoodieAvroHFileReaderImplBase.KEY_FIELD_NAME), when the schema has one, as the empty
string, since the row holds the key; readers put the row back into an empty ``key``.

Records are sorted by key before writing (HoodieHFileDataBlock sorts by String order, which is the UTF-8
byte order the HFile index needs for keys without characters outside the BMP); a repeated key is refused,
as HFileUtils.serializeRecordsToLogBlock refuses it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

import fastavro

from hoodpy.errors import HFileFormatError, InvalidRecordError
from hoodpy.hfile import file_info
from hoodpy.hfile.block import Compression
from hoodpy.hfile.reader import HFileReader
from hoodpy.hfile.writer import DEFAULT_BLOCK_SIZE, HFileWriter

KEY_FIELD = "key"


def write_records(records: Iterable[tuple[str, Mapping[str, Any] | bytes]], schema: str, *,
                  compression: Compression = Compression.GZ, block_size: int = DEFAULT_BLOCK_SIZE,
                  file_info_entries: Mapping[str, bytes] | None = None,
                  meta_blocks: Mapping[str, bytes] | None = None, create_time_ms: int | None = None,
                  full_index_keys: bool = True) -> bytes:
    """An HFile of ``(record key, record)`` pairs encoded under ``schema`` (Avro JSON, kept in the file info); a
    record given as bytes is taken as already encoded (:func:`encode_value`).

    ``file_info_entries`` are added after ``schema`` and ``meta_blocks`` after the data: Hudi's base files
    carry ``minRecordKey``, ``maxRecordKey`` and ``bloomFilterTypeCode`` and the ``bloomFilter`` meta block
    (HoodieAvroHFileWriter); log blocks carry neither."""
    encoded: dict[bytes, bytes] = {}
    for record_key, record in records:
        row = record_key.encode("utf-8")
        if row in encoded:
            raise InvalidRecordError(f"Two records with key {record_key!r} in one HFile; Hudi writes each key once")
        encoded[row] = record if isinstance(record, bytes) else encode_value(record, schema)
    writer = HFileWriter(compression=compression, block_size=block_size, create_time_ms=create_time_ms,
                         full_index_keys=full_index_keys)
    writer.append_file_info(file_info.SCHEMA, schema.encode("utf-8"))
    for name, value in (file_info_entries or {}).items():
        writer.append_file_info(name, value)
    for name, value in (meta_blocks or {}).items():
        writer.append_meta_block(name, value)
    writer.append_all((row, encoded[row]) for row in sorted(encoded))
    return writer.finish()


def encode_value(record: Mapping[str, Any], schema: str) -> bytes:
    """A record's cell value: its schemaless Avro encoding under ``schema``, its ``key`` field (when the schema
    has one) written empty. Records that differ only in ``key`` encode to the same bytes."""
    parsed = _parsed(schema)
    if record.get(KEY_FIELD) is not None and _has_key(schema):
        record = {**record, KEY_FIELD: ""}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, record)
    return buf.getvalue()


def read_records(reader: HFileReader, schema: str | None = None) -> Iterator[dict[str, Any]]:
    """Every record of the file in key order, decoded under ``schema`` (default: the file info's)."""
    parsed = _parsed(_schema_of(reader, schema))
    for key, value in reader:
        yield decode_record(key, value, parsed, reader.source)


def decode_record(key: str, value: bytes, schema: dict[str, Any], source: str = "<bytes>") -> dict[str, Any]:
    """One record (``schema`` as :func:`parsed_schema` returns it), its empty ``key`` field set to ``key``."""
    try:
        record = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as e:
        raise HFileFormatError(
            source, f"value of key {key!r} is not an Avro record of the file's schema ({e or type(e).__name__})") from e
    if record.get(KEY_FIELD) == "":
        record[KEY_FIELD] = key
    return record


def parsed_schema(schema: str) -> dict[str, Any]:
    """An Avro schema's JSON text, parsed for :func:`decode_record` (cached)."""
    return _parsed(schema)


def _schema_of(reader: HFileReader, schema: str | None) -> str:
    if schema is not None:
        return schema
    if reader.schema is None:
        raise HFileFormatError(reader.source, "the file info has no Avro schema ('schema') to decode values with")
    return reader.schema


@lru_cache(maxsize=32)
def _has_key(schema: str) -> bool:
    return any(f["name"] == KEY_FIELD for f in _parsed(schema)["fields"])


@lru_cache(maxsize=32)
def _parsed(schema: str) -> dict[str, Any]:
    return fastavro.parse_schema(json.loads(schema))

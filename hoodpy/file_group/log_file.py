"""Merge-on-read log files read into records: which blocks of a file slice's logs count, and what they hold.

Blocks are framed by :mod:`hoodpy.timeline.log_format` (the block parser the archived timeline uses too).
What counts follows Java's AbstractHoodieLogRecordReader, reading the slice's log files in order:

* a data or delete block counts only when the instant in its INSTANT_TIME header is a committed write (as of
  the read's instant, :class:`hoodpy.timeline.timeline.CommittedInstants`);
* a rollback command block (COMMAND_BLOCK_TYPE 0) drops every block read before it whose instant is its
  TARGET_INSTANT_TIME, and the corrupt blocks read before it;
* a corrupt block (see log_format) is skipped and counted, as Hudi's merged reader skips it.

Block contents (table version 6, block version 3):

* Avro data block: int version, int record count, then per record int length and the record's schemaless
  Avro encoding under the header's SCHEMA;
* parquet data block: one whole parquet file (meta columns first);
* HFile data block: one whole HFile (GZ by default), a cell per record: the record key as the row, the
  record's schemaless Avro encoding under the header's SCHEMA as the value, its ``key`` field blanked
  (:mod:`hoodpy.hfile.records`; the metadata table's log files hold these);
* delete block: int version, int length, then one HoodieDeleteRecordList datum (record key, partition path
  and ordering value of each deleted record); at table versions 8 and 9 (timeline layout 2) Hudi 1.x's schema,
  whose ordering values are Avro value wrappers (:mod:`hoodpy.file_group.ordering_wrappers`).
"""

from __future__ import annotations

import dataclasses
import io
import logging
import struct
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.errors import HoodieIOError
from hoodpy.file_group.avro_block import DATA_BLOCK_VERSION, avro_block_keys, avro_block_records, avro_block_table
from hoodpy.file_group.ordering_wrappers import delete_schema_1x, unwrap
from hoodpy.hfile import HFileReader, decode_record, parsed_schema
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.timeline import log_format
from hoodpy.timeline.log_format import CorruptBlock, LogBlock

ROLLBACK_COMMAND = log_format.ROLLBACK_COMMAND_TYPE
_log = logging.getLogger(__name__)

# HoodieDeleteRecordList as delete blocks of version 3 (Hudi 0.14) hold it.
DELETE_RECORD_LIST_SCHEMA = {
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "default": None, "type": [
                "null", "int", "long", "float", "double", "bytes", "string",
                {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
                {"type": "int", "logicalType": "date"}, {"type": "int", "logicalType": "time-millis"},
                {"type": "long", "logicalType": "time-micros"}, {"type": "long", "logicalType": "timestamp-millis"},
                {"type": "long", "logicalType": "timestamp-micros"}]},
        ]}}}],
}


@dataclass(frozen=True)
class DeletedRecord:
    record_key: str
    partition_path: str | None
    ordering_value: Any  # None or 0: the delete carries no ordering value (Hudi's default); a tuple: several fields'


@dataclass(frozen=True)
class SliceLogBlocks:
    """The blocks of a slice's log files that count, in log order, and how many corrupt blocks were skipped."""

    blocks: tuple[LogBlock, ...]
    corrupt_blocks: int
    total_blocks: int = 0  # every block read, whatever its type (compaction reports them)
    rollback_blocks: int = 0


def effective_blocks(files: Iterable[tuple[str, bytes]], committed: Container[str]) -> SliceLogBlocks:
    """The data and delete blocks of a slice's log files ((name, bytes), in log order) that count; a timeline
    of layout 2 (``committed.layout``) marks them :attr:`LogBlock.hudi_1x`."""
    hudi_1x = getattr(committed, "layout", 1) >= 2
    queue: list[LogBlock | CorruptBlock] = []
    total = rollbacks = 0
    for source, data in files:
        for block in log_format.scan_blocks(data, source):
            total += 1
            if isinstance(block, CorruptBlock):
                _log.warning("Skipping a corrupt log block of %d bytes at byte %d of %s",
                             block.length, block.offset, source)
                queue.append(block)
            elif block.block_type == log_format.COMMAND_BLOCK:
                if block.header.get(log_format.COMMAND_BLOCK_TYPE) != ROLLBACK_COMMAND:
                    raise HoodieIOError(source, f"Unknown log command block type "
                                                f"{block.header.get(log_format.COMMAND_BLOCK_TYPE)!r}")
                rollbacks += 1
                target = block.header.get(log_format.TARGET_INSTANT_TIME)
                queue = [b for b in queue if isinstance(b, LogBlock) and b.instant_time != target]
            elif block.block_type in (log_format.AVRO_DATA_BLOCK, log_format.PARQUET_DATA_BLOCK,
                                      log_format.HFILE_DATA_BLOCK, log_format.DELETE_BLOCK):
                if block.instant_time in committed:
                    queue.append(dataclasses.replace(block, hudi_1x=True) if hudi_1x else block)
            else:
                raise HoodieIOError(source, f"Unsupported log block type {block.block_type}")
    blocks = tuple(b for b in queue if isinstance(b, LogBlock))
    return SliceLogBlocks(blocks, len(queue) - len(blocks), total, rollbacks)


def data_rows(block: LogBlock, schema: pa.Schema, records: np.ndarray | None = None) -> pa.Table:
    """The records of a data block as Arrow, with ``schema``'s fields where the block has them; ``records``:
    only those (ascending indexes into the block's records)."""
    if block.block_type == log_format.PARQUET_DATA_BLOCK:
        table = pq.read_table(pa.BufferReader(block.content), columns=_columns_of(block, schema))
        return table if records is None else table.take(pa.array(records, pa.int64()))
    if block.block_type not in (log_format.AVRO_DATA_BLOCK, log_format.HFILE_DATA_BLOCK):
        raise ValueError(f"log block type {block.block_type} holds no records")
    writer_text = block.header.get(log_format.SCHEMA) or ""
    writer = parsed_schema(writer_text)
    names = {f["name"] for f in writer["fields"]}
    fields = pa.schema([f for f in schema if f.name in names])
    if block.block_type == log_format.AVRO_DATA_BLOCK:
        return avro_block_table(block.content, writer_text, fields, records)
    hfile = HFileReader(block.content, f"HFile data block of instant {block.instant_time}")
    table = pa.Table.from_pylist([decode_record(key, value, writer, hfile.source) for key, value in hfile],
                                 schema=fields)
    return table if records is None else table.take(pa.array(records, pa.int64()))


def _columns_of(block: LogBlock, schema: pa.Schema) -> list[str]:
    names = set(pq.read_schema(pa.BufferReader(block.content)).names)
    return [n for n in schema.names if n in names]


def record_keys(block: LogBlock) -> pa.Array:
    """The record key of each record of a data block, in block order (Avro blocks decode only the fields up
    to the key)."""
    if block.block_type == log_format.AVRO_DATA_BLOCK:
        return avro_block_keys(block.content, block.header.get(log_format.SCHEMA) or "", RECORD_KEY)
    rows = data_rows(block, pa.schema([pa.field(RECORD_KEY, pa.string())]))
    return rows.column(RECORD_KEY).combine_chunks() if RECORD_KEY in rows.column_names \
        else pa.nulls(rows.num_rows, pa.string())


def deleted_records(block: LogBlock) -> list[DeletedRecord]:
    """The keys a delete block deletes, with their ordering values (an ArrayWrapper's as a tuple)."""
    version, length = struct.unpack(">ii", block.content[:8])
    if version != DATA_BLOCK_VERSION:
        raise HoodieIOError("delete block", f"Unsupported delete block version {version}")
    payload = io.BytesIO(block.content[8:8 + length])
    if block.hudi_1x:
        datum = fastavro.schemaless_reader(payload, delete_schema_1x(), None, return_record_name=True)
        return [DeletedRecord(r["recordKey"], r["partitionPath"], unwrap(r["orderingVal"]))
                for r in datum["deleteRecordList"]]
    datum = fastavro.schemaless_reader(payload, _delete_schema(), None)
    return [DeletedRecord(r["recordKey"], r["partitionPath"], r["orderingVal"]) for r in datum["deleteRecordList"]]


@lru_cache(maxsize=1)
def _delete_schema() -> dict[str, Any]:
    return fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


def cdc_records(data: bytes, source: str) -> list[dict[str, Any]]:
    """The records of a CDC log file's CDC data blocks (type 6, encoded as Avro data blocks), in file order,
    each decoded with its block's SCHEMA header."""
    return [r for content, schema in cdc_blocks(data, source)
            for r in avro_block_records(content, parsed_schema(schema))]


def cdc_blocks(data: bytes, source: str) -> list[tuple[bytes, str]]:
    """A CDC log file's CDC data blocks, in file order: (Avro data block content, its SCHEMA header)."""
    out: list[tuple[bytes, str]] = []
    for block in log_format.scan_blocks(data, source):
        if isinstance(block, CorruptBlock):
            raise HoodieIOError(source, f"corrupt CDC log block of {block.length} bytes at byte {block.offset}")
        if block.block_type != log_format.CDC_DATA_BLOCK:
            raise HoodieIOError(source, f"log block type {block.block_type} in a CDC log file")
        out.append((block.content, block.header.get(log_format.SCHEMA) or ""))
    return out

"""Merge-on-read log blocks written as Hudi 0.14 writes them (table version 6): the counterpart of
:mod:`hoodpy.file_group.log_file`, which reads them back. Framing (magic, lengths, header and footer maps,
reverse pointer) is :func:`hoodpy.timeline.log_format.encode_block`.

* Avro data block (type 3): block version 3, record count, then each record's length and its schemaless Avro
  encoding under the header's SCHEMA (the table schema with the five meta fields first);
* parquet data block (type 5): one whole parquet file, which the caller encodes (the base-file writer's codec);
* delete block (type 1): block version 3, payload length, one HoodieDeleteRecordList datum; a delete without an
  ordering value carries ``long 0``, as Java writes it (hudi-rs 0.5.0 applies only that form); at table versions
  8 and 9 Hudi 1.x's schema of wrapped ordering values (:mod:`hoodpy.file_group.ordering_wrappers`);
* rollback command block (type 0): no content; header INSTANT_TIME (the rollback), COMMAND_BLOCK_TYPE 0 and
  TARGET_INSTANT_TIME (the instant rolled back).

Header entries follow Java's HashMap iteration, which varies between runs; each block type here uses the
order of Hudi's own fixture of that type (hudi-rs ``core/log_files``), so those files are reproduced byte for
byte. Readers must not (and hoodpy's and hudi-rs's do not) depend on the order.
"""

from __future__ import annotations

import copy
import io
import json
import struct
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa

from hoodpy.file_group.avro_columns import encode_records, flat_fields
from hoodpy.file_group.log_file import DATA_BLOCK_VERSION, DELETE_RECORD_LIST_SCHEMA, ROLLBACK_COMMAND
from hoodpy.file_group.ordering_wrappers import delete_schema_1x
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.timeline import log_format as lf

# Avro union branch of HoodieDeleteRecord.orderingVal per Arrow type family (the branch names of its schema).
_ORDERING_BRANCHES = (
    (pa.types.is_int64, "long"), (pa.types.is_integer, "int"), (pa.types.is_float32, "float"),
    (pa.types.is_floating, "double"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
    (pa.types.is_binary, "bytes"),
)
NO_ORDERING = ("long", 0)  # what Java writes for a delete that carries no ordering value


def log_schema(table_schema: dict[str, Any]) -> dict[str, Any]:
    """The writer schema of log records: ``table_schema`` (an Avro record without meta fields) with the meta
    fields first, as HoodieAvroUtils.addMetadataFields adds them (nullable strings, empty doc)."""
    out = copy.deepcopy(table_schema)
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_COLUMNS]
    out["fields"] = meta + [f for f in out["fields"] if f["name"] not in META_COLUMNS]
    return out


def avro_data_block(rows: pa.Table, instant_time: str, schema_json: str) -> bytes:
    """An Avro data block of ``rows`` (meta columns first, the table's columns after) written by
    ``instant_time``; ``schema_json`` is the :func:`log_schema` the records are encoded with. A flat schema's
    records are encoded column-wise (:mod:`hoodpy.file_group.avro_columns`), any other's with fastavro."""
    fields = flat_fields(schema_json)
    records = encode_records(rows, fields) if fields is not None else None
    content = struct.pack(">ii", DATA_BLOCK_VERSION, rows.num_rows) + records if records is not None \
        else _avro_content(avro_records(rows), schema_json)
    return lf.encode_block(lf.AVRO_DATA_BLOCK, {lf.INSTANT_TIME: instant_time, lf.SCHEMA: schema_json}, content)


def cdc_data_block(records: list[dict[str, Any]], instant_time: str, schema_json: str) -> bytes:
    """A CDC data block (type 6, Java's HoodieCDCDataBlock): encoded as an Avro data block, its records under
    ``schema_json`` (the CDC schema of the table's supplemental logging mode)."""
    return lf.encode_block(lf.CDC_DATA_BLOCK, {lf.INSTANT_TIME: instant_time, lf.SCHEMA: schema_json},
                           _avro_content(records, schema_json))


def _avro_content(records: Iterable[dict[str, Any]], schema_json: str) -> bytes:
    """Block version 3, record count, then each record's length and schemaless Avro encoding."""
    parsed = _parsed(schema_json)
    out = [b""]
    buf = io.BytesIO()
    for record in records:
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, parsed, record)
        out.append(struct.pack(">i", buf.tell()))
        out.append(buf.getvalue())
    out[0] = struct.pack(">ii", DATA_BLOCK_VERSION, (len(out) - 1) // 2)
    return b"".join(out)


def parquet_data_block(parquet: bytes, instant_time: str, schema_json: str) -> bytes:
    """A parquet data block holding ``parquet`` (a whole parquet file of the rows, meta columns first)."""
    return lf.encode_block(lf.PARQUET_DATA_BLOCK, {lf.SCHEMA: schema_json, lf.INSTANT_TIME: instant_time}, parquet)


def delete_block(deletes: Iterable[tuple[str, str, Any]], instant_time: str, schema_json: str, *,
                 hudi_1x: bool = False) -> bytes:
    """A delete block of ``(record key, partition path, ordering value)``; an ordering value is a
    ``(branch, value)`` pair of HoodieDeleteRecord.orderingVal's union (:func:`ordering_value`), or with
    ``hudi_1x`` (table versions 8 and 9) a wrapper of Hudi 1.x's (:mod:`hoodpy.file_group.ordering_wrappers`)."""
    datum = {"deleteRecordList": [{"recordKey": k, "partitionPath": p, "orderingVal": o} for k, p, o in deletes]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, delete_schema_1x() if hudi_1x else _delete_schema(), datum)
    payload = buf.getvalue()
    return lf.encode_block(lf.DELETE_BLOCK, {lf.SCHEMA: schema_json, lf.INSTANT_TIME: instant_time},
                           struct.pack(">ii", DATA_BLOCK_VERSION, len(payload)) + payload)


def rollback_block(instant_time: str, target_instant_time: str) -> bytes:
    """A rollback command block: the blocks of ``target_instant_time`` read before it no longer count."""
    return lf.encode_block(lf.COMMAND_BLOCK, {lf.INSTANT_TIME: instant_time, lf.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
                                              lf.TARGET_INSTANT_TIME: target_instant_time}, b"")


def ordering_value(value: Any, arrow_type: pa.DataType | None) -> tuple[str, Any]:
    """A delete's ordering value as the union branch Java picks for it (its field's Avro type); no value
    (None) is ``long 0``. Types without a branch of their own (timestamps, dates, decimals) have none: the
    delete is written without one, so it wins like a delete operation's."""
    if value is None or arrow_type is None:
        return NO_ORDERING
    for matches, branch in _ORDERING_BRANCHES:
        if matches(arrow_type):
            return branch, value
    return NO_ORDERING


def avro_records(rows: pa.Table) -> list[dict[str, Any]]:
    """``rows`` as the Python values fastavro encodes: Arrow maps (lists of pairs) become dicts."""
    columns = {}
    for name, column in zip(rows.column_names, rows.columns, strict=True):
        values = column.to_pylist()
        if _has_map(column.type):
            values = [_maps_to_dicts(v, column.type) for v in values]
        columns[name] = values
    names = rows.column_names
    return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)] \
        if names else [{} for _ in range(rows.num_rows)]


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_map(t.value_type)
    return False


def _maps_to_dicts(value: Any, t: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(t):
        return {k: _maps_to_dicts(v, t.item_type) for k, v in value}
    if pa.types.is_struct(t):
        return {t.field(i).name: _maps_to_dicts(value[t.field(i).name], t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_maps_to_dicts(v, t.value_type) for v in value]
    return value


@lru_cache(maxsize=16)
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


@lru_cache(maxsize=1)
def _delete_schema() -> Any:
    return fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


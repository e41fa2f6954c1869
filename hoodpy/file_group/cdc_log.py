"""CDC log files (tables with ``hoodie.table.cdc.enabled``): what their records hold, per supplemental logging
mode, as Hudi 0.14's HoodieCDCUtils and HoodieCDCLogger write them.

A CDC log file sits next to the base file a copy-on-write merge wrote (same file group, named after the new
file slice, suffix ``-cdc``: :func:`hoodpy.file_group.naming.cdc_log_file_name`) and holds CDC data blocks
(:func:`hoodpy.file_group.log_writer.cdc_data_block`), one record per changed key of the merge:

* ``OP_KEY_ONLY``: ``Record {op, record_key}`` (strings, ``["string", "null"]``);
* ``DATA_BEFORE``: ``CDC {op, record_key, before}``;
* ``DATA_BEFORE_AFTER``: ``CDC {op, ts_ms, before, after}``, ``ts_ms`` the commit's instant time (a string).

``op`` is ``i``, ``u`` or ``d``; ``before`` / ``after`` are the record images without meta fields (the table's
Avro record, nullable). The write stat of the merge lists the file in ``cdcStats`` (path -> size).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hoodpy.config.table import DATA_BEFORE, DATA_BEFORE_AFTER, OP_KEY_ONLY

OP_INSERT, OP_UPDATE, OP_DELETE = "i", "u", "d"
OP, TS_MS, BEFORE, AFTER, RECORD_KEY = "op", "ts_ms", "before", "after", "record_key"

_OP_KEY_ONLY_SCHEMA = {"type": "record", "name": "Record", "fields": [
    {"name": OP, "type": ["string", "null"]}, {"name": RECORD_KEY, "type": ["string", "null"]}]}


def cdc_schema(mode: str, table_schema: dict[str, Any]) -> dict[str, Any]:
    """The Avro schema of CDC log records in ``mode``; ``table_schema`` is the table's Avro record without meta
    fields (the images' schema)."""
    if mode == OP_KEY_ONLY:
        return copy.deepcopy(_OP_KEY_ONLY_SCHEMA)
    if mode not in (DATA_BEFORE, DATA_BEFORE_AFTER):
        raise ValueError(f"unknown CDC supplemental logging mode {mode!r}")
    image = copy.deepcopy(table_schema)

    def field(name: str, schema: Any) -> dict[str, Any]:
        return {"name": name, "type": ["null", schema], "doc": "", "default": None}

    # The image schema is defined once (in the first image field) and referred to by its full name after.
    full_name = f"{image['namespace']}.{image['name']}" if image.get("namespace") else image["name"]
    if mode == DATA_BEFORE_AFTER:
        fields = [field(OP, "string"), field(TS_MS, "string"), field(BEFORE, image), field(AFTER, full_name)]
    else:
        fields = [field(OP, "string"), field(RECORD_KEY, "string"), field(BEFORE, image)]
    return {"type": "record", "name": "CDC", "doc": "", "fields": fields}


def cdc_schema_json(mode: str, table_schema: dict[str, Any]) -> str:
    return json.dumps(cdc_schema(mode, table_schema), separators=(",", ":"))


def cdc_record(mode: str, op: str, key: str, instant_time: str, before: dict | None, after: dict | None,
               ) -> dict[str, Any]:
    """One CDC log record in ``mode`` (images as dicts of the table's columns, None where absent)."""
    if mode == DATA_BEFORE_AFTER:
        return {OP: op, TS_MS: instant_time, BEFORE: before, AFTER: after}
    if mode == DATA_BEFORE:
        return {OP: op, RECORD_KEY: key, BEFORE: before}
    return {OP: op, RECORD_KEY: key}

"""CDC images printed a column at a time: the text of :mod:`hoodpy.read.cdc_images`'s per-record printers, built
with Arrow compute over whole columns.

A CDC query prints two JSON images per change; printed record by record (a Python recursion per value) that was
~85% of its CPU. Here each column becomes one string array (numbers cast, strings escaped, decimals' fixed
bytes listed) and the columns are joined element-wise. A column with no column-wise printer (floats, binary,
nested types, decimals Java would print in scientific notation, timestamps in nanoseconds) is printed per value
by the per-record printers, so the text is the same either way.

Logged images (DATA_BEFORE_AFTER CDC records) are decoded as raw Avro values: days, micro- or milliseconds, a
fixed decimal's bytes are what Hudi's images print, so nothing converts them to Python objects and back. Images
whose columns all print column-wise are decoded a field at a time over all records
(:mod:`hoodpy.file_group.avro_nested_columns`); others by fastavro, record by record, with those logical types
removed.
"""

from __future__ import annotations

import io
import json
from functools import lru_cache
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.file_group.avro_block import record_offsets
from hoodpy.file_group.avro_nested_columns import UnsupportedSchema, block_columns
from hoodpy.file_group.log_writer import avro_records
from hoodpy.read.cdc_images import avro_string, avro_text, jackson_float, jackson_string, jackson_text
from hoodpy.schema import decimal_fixed_size

# Column kinds: how a column's values print.
_INT, _MILLIS, _BOOL, _STRING, _FIXED, _PYTHON = "int", "millis", "bool", "string", "fixed", "python"
_RAW_TYPES = {_INT: pa.int64(), _MILLIS: pa.int64(), _BOOL: pa.bool_(), _STRING: pa.string()}
_SIGNED_BYTES = pa.array([str(b - 256 if b > 127 else b) for b in range(256)])  # Java's byte, by unsigned value
# The characters a printer writes as \uXXXX (RE2): control characters without a short escape; Avro's also
# U+007F to U+009F and U+2000 to U+20FF.
_HEX_ESCAPED = {False: "[\\x00-\\x07\\x0b\\x0e-\\x1f]",
                True: "[\\x00-\\x07\\x0b\\x0e-\\x1f\\x7f-\\x9f\\x{2000}-\\x{20ff}]"}


def _json_strings(col: pa.Array, avro: bool) -> pa.Array:
    """Strings quoted and escaped as Avro's toString (``avro``) or Jackson writes them
    (:func:`hoodpy.read.cdc_images.avro_string`, :func:`~hoodpy.read.cdc_images.jackson_string`)."""
    if col.null_count < len(col) and pc.any(pc.match_substring_regex(col, _HEX_ESCAPED[avro])).as_py():
        quote = avro_string if avro else jackson_string  # rare: \u escapes, per value
        return pa.array([None if s is None else quote(s) for s in col.to_pylist()], pa.string())
    for plain, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"),
                           ("\b", "\\b"), ("\f", "\\f")):
        col = pc.replace_substring(col, plain, escaped)
    return pc.binary_join_element_wise('"', col, '"', "")


def _signed_bytes(col: pa.Array) -> pa.Array:
    """Fixed-size binary values as Java's ``Arrays.toString(byte[])``: ``[0, 0, -106]``."""
    size = col.type.byte_width
    raw = np.frombuffer(col.buffers()[1], dtype=np.uint8, count=(col.offset + len(col)) * size)[col.offset * size:]
    listed = pa.ListArray.from_arrays(pa.array(np.arange(0, len(raw) + 1, size, dtype=np.int32)),
                                      _SIGNED_BYTES.take(pa.array(raw)))
    return pc.binary_join_element_wise("[", pc.binary_join(listed, ", "), "]", "")


def _printed(col: pa.Array, kind: str, avro: bool) -> pa.Array:
    """A column's values printed (null where the value is null)."""
    if kind == _STRING:
        return _json_strings(col.cast(pa.string()), avro)
    if kind == _BOOL:
        return pc.if_else(col, "true", "false")
    if kind == _FIXED:
        return _signed_bytes(col)
    if kind == _MILLIS:
        col = pc.multiply(col, 1000)
    return col.cast(pa.string())


def _joined(names: list[str], texts: list[pa.Array], valid: pa.Array | None, *, avro: bool, rows: int,
            ) -> pa.Array:
    """Objects of the printed columns: ``{"a": 1, "b": null}`` (Avro) or ``{"a":1,"b":null}`` (Jackson);
    null where ``valid`` is false."""
    colon, comma = (": ", ", ") if avro else (":", ",")
    if not names:
        out = pa.array(["{}"] * rows, pa.string())
    else:
        parts: list[Any] = []
        for i, (name, text) in enumerate(zip(names, texts, strict=True)):
            parts += [("{" if i == 0 else comma) + (avro_string if avro else jackson_string)(name) + colon,
                      pc.fill_null(text, "null")]
        out = pc.binary_join_element_wise(*parts, "}", "")
    return out if valid is None else pc.if_else(valid, out, pa.scalar(None, pa.string()))


# -- rows read from base and log files (Jackson) -------------------------------------------------------------
def _row_kind(t: pa.DataType) -> str | None:
    if pa.types.is_integer(t) or pa.types.is_date32(t):
        return _INT
    if pa.types.is_boolean(t):
        return _BOOL
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _STRING
    if pa.types.is_decimal(t) and 0 <= t.scale <= 6:  # BigDecimal.toString: no exponent at these scales
        return _INT
    if pa.types.is_timestamp(t) and t.unit in ("ms", "us"):
        return _MILLIS if t.unit == "ms" else _INT
    return None


def row_texts(rows: pa.Table) -> pa.Array:
    """Every row printed as :func:`hoodpy.read.cdc_images.row_text` prints it (meta columns included)."""
    texts = []
    for name, col in zip(rows.column_names, rows.columns, strict=True):
        col = col.combine_chunks()
        kind = _row_kind(col.type)
        if kind is None and pa.types.is_floating(col.type):  # Float.toString for float32
            single = pa.types.is_float32(col.type)
            texts.append(pa.array([None if v is None else jackson_float(v, single) for v in col.to_pylist()],
                                  pa.string()))
            continue
        if kind is None:
            values = [r[name] for r in avro_records(rows.select([name]))]
            texts.append(pa.array([jackson_text(v) for v in values], pa.string()))
            continue
        if pa.types.is_timestamp(col.type) or pa.types.is_date32(col.type):
            col = col.cast(pa.int64() if pa.types.is_timestamp(col.type) else pa.int32())
        texts.append(_printed(col, kind, avro=False))
    return _joined(rows.column_names, texts, None, avro=False, rows=rows.num_rows)


# -- images logged in CDC records (Avro's GenericData.toString) ----------------------------------------------
@lru_cache(maxsize=32)
def _image_reading(schema_json: str, image_type: pa.DataType | None,
                   ) -> tuple[dict[str, Any], tuple[tuple[str, str, pa.DataType | None], ...]]:
    """The CDC schema parsed for fastavro with the printable logical types removed from the image record, and
    the image's fields: (name, kind, the Arrow type it is decoded to, or its table type for per-value
    printing)."""
    schema = json.loads(schema_json)
    before = next(f for f in schema["fields"] if f["name"] == "before")
    image = next(b for b in before["type"] if isinstance(b, dict))
    fields = []
    for field in image["fields"]:
        table_type = image_type.field(field["name"]).type \
            if image_type is not None and image_type.get_field_index(field["name"]) >= 0 else None
        branches = field["type"] if isinstance(field["type"], list) else [field["type"]]
        values = [i for i, b in enumerate(branches) if b != "null"]
        kind = _image_kind(branches[values[0]], table_type) if len(values) == 1 else _PYTHON
        if kind == _FIXED and _full_name(branches[values[0]]) in _type_references(schema_json):
            kind = _PYTHON  # another field reads this fixed by name: keep its logical type for it
        if kind != _PYTHON and isinstance(branches[values[0]], dict):
            stripped = {k: v for k, v in branches[values[0]].items() if k != "logicalType"}
            branches[values[0]] = stripped
            field["type"] = branches if isinstance(field["type"], list) else stripped
        raw = pa.binary(branches[values[0]]["size"]) if kind == _FIXED else _RAW_TYPES.get(kind, table_type)
        fields.append((field["name"], kind, raw))
    return fastavro.parse_schema(schema), tuple(fields)


def _full_name(named: dict[str, Any]) -> str:
    return f"{named['namespace']}.{named['name']}" if named.get("namespace") else named["name"]


def _type_references(schema_json: str) -> set[str]:
    """The type names a schema refers to by name (as a field's type or a union branch)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.add(node)
        elif isinstance(node, list):
            for n in node:
                walk(n)
        elif isinstance(node, dict):
            for key in ("type", "items", "values", "fields"):
                if key in node:
                    walk(node[key])

    walk(json.loads(schema_json))
    return found


def _image_kind(branch: Any, table_type: pa.DataType | None) -> str:
    """How an image field of Avro type ``branch`` prints column-wise (``_PYTHON``: per value)."""
    if branch in ("int", "long"):
        return _INT
    if branch in ("boolean", "string"):
        return _BOOL if branch == "boolean" else _STRING
    if not isinstance(branch, dict):
        return _PYTHON  # float and double (Java's toString), bytes, and names of types defined elsewhere
    logical, avro_type = branch.get("logicalType"), branch.get("type")
    if logical is None and avro_type in ("int", "long", "string", "boolean"):
        return _image_kind(avro_type, table_type)
    if (logical == "date" and avro_type == "int") or \
            (logical in ("timestamp-micros", "local-timestamp-micros") and avro_type == "long"):
        return _INT  # days and microseconds: what Hudi's images hold
    if logical in ("timestamp-millis", "local-timestamp-millis") and avro_type == "long":
        return _MILLIS
    if logical == "decimal" and avro_type == "fixed" and table_type is not None and pa.types.is_decimal(table_type) \
            and branch.get("size") == decimal_fixed_size(table_type.precision) \
            and branch.get("scale", 0) == table_type.scale:
        return _FIXED  # the fixed's bytes are what Java prints (sized by the table's precision)
    return _PYTHON


def logged_changes(blocks: list[tuple[bytes, str]], image_type: pa.DataType | None, part: int = 0, parts: int = 1,
                   ) -> tuple[pa.Array, pa.Array, pa.Array]:
    """The ops and the printed before / after images of DATA_BEFORE_AFTER CDC records: the ``part``-th of
    ``parts`` equal ranges of the records of ``blocks`` (Avro data block contents and their schemas), in order."""
    offsets = [record_offsets(content) for content, _ in blocks]
    total = sum(len(o) - 1 for o in offsets)
    first, end = total * part // parts, total * (part + 1) // parts
    ops, befores, afters = [pa.array([], pa.string())], [pa.array([], pa.string())], [pa.array([], pa.string())]
    start = 0
    for (content, schema_json), block_offsets in zip(blocks, offsets, strict=True):
        count = len(block_offsets) - 1
        lo, hi = max(first - start, 0), min(end - start, count)
        start += count
        if lo >= hi:
            continue
        parsed, fields = _image_reading(schema_json, image_type)
        records = None
        if all(kind != _PYTHON for _, kind, _ in fields):
            try:
                records = block_columns(content, block_offsets[lo:hi], block_offsets[lo + 1:hi + 1] - 4,
                                        json.loads(schema_json))
            except UnsupportedSchema:
                pass
        if records is None:  # per record (fastavro), for images with values printed per value
            buf = io.BytesIO(content)
            buf.seek(int(block_offsets[lo]))
            decoded = []
            for _ in range(hi - lo):
                decoded.append(fastavro.schemaless_reader(buf, parsed, None))
                buf.seek(4, io.SEEK_CUR)  # the next record's length
            images = pa.struct([(n, t) for n, k, t in fields if k != _PYTHON])
            records = pa.array(decoded, pa.struct([("op", pa.string()), ("before", images), ("after", images)]))
            python = {side: [r[side] for r in decoded] for side in ("before", "after")}
        else:
            python = {"before": None, "after": None}
        ops.append(records.field("op").cast(pa.string()))
        befores.append(_images(records.field("before"), python["before"], fields))
        afters.append(_images(records.field("after"), python["after"], fields))
    return pa.concat_arrays(ops), pa.concat_arrays(befores), pa.concat_arrays(afters)


def _images(decoded: pa.StructArray, images: list[dict[str, Any] | None] | None,
            fields: tuple[tuple[str, str, pa.DataType | None], ...]) -> pa.Array:
    """Images printed: columns from ``decoded``, per-value columns from the decoded ``images``."""
    texts = []
    for name, kind, t in fields:
        if kind == _PYTHON:
            assert images is not None
            texts.append(pa.array([None if im is None else avro_text(im[name], t) for im in images], pa.string()))
        else:
            texts.append(_printed(decoded.field(name), kind, avro=True))
    valid = decoded.is_valid()
    return _joined([n for n, _, _ in fields], texts, valid, avro=True, rows=len(decoded))

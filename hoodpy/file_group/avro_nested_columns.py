"""An Avro data block's records decoded a field at a time over all records at once (numpy), for schemas of
primitives, records and nullable unions: a CDC log's DATA_BEFORE_AFTER records are ~30 µs each through
fastavro's per-record decoder, ~1 µs here. (Flat schemas, the data blocks of merge-on-read reads and appends,
go through :mod:`hoodpy.file_group.avro_columns`, which also encodes and keeps logical types.)

Each record's encoding starts at a known offset (the block stores each record's length,
:func:`hoodpy.file_group.avro_block.record_offsets`), so one cursor per record walks the schema in step with
all the others: a varint is read for every record in a handful of vectorized passes (one per byte), a
string's bytes are gathered into one Arrow buffer. Values come out raw, as Avro encodes them, logical types
ignored: int and long (dates, timestamps: days and units since the epoch) as int64, fixed as fixed-size
binary (decimals: the unscaled two's complement), string and bytes, boolean, float and double.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from hoodpy.errors import HoodieIOError
from hoodpy.file_group.avro_columns import gather_binary, zigzag_varints

_PADDING = 10  # a varint's longest encoding: reads past the content's end hit zeros, not an IndexError


class UnsupportedSchema(Exception):
    """The schema has a type this decoder does not read (arrays, maps, enums, unions of several types)."""


class _Cursors:
    """The data and one read position per record."""

    def __init__(self, content: bytes, starts: np.ndarray):
        self.data = np.frombuffer(content + bytes(_PADDING), dtype=np.uint8)
        self.pos = starts.astype(np.int64)

    def varint(self, sel: np.ndarray) -> np.ndarray:
        """The zigzag varints (Avro int and long) at the selected records' positions, as int64."""
        values, self.pos[sel] = zigzag_varints(self.data, self.pos[sel], "avro data block")
        return values

    def binary(self, sel: np.ndarray, sizes: np.ndarray, n: int) -> pa.Array:
        """The selected records' next ``sizes`` bytes as binary values among ``n`` (null elsewhere); the
        positions move past them."""
        pos = self.pos[sel]
        if len(pos) and int((pos + sizes).max()) > len(self.data) - _PADDING:
            raise HoodieIOError("avro data block", "a record runs past the end of its block")
        mask = None
        if len(sel) != n:
            mask = np.ones(n, dtype=bool)
            mask[sel] = False
        self.pos[sel] = pos + sizes
        return gather_binary(self.data, pos, sizes, sel, n, mask)

    def take(self, sel: np.ndarray, sizes: np.ndarray | int) -> np.ndarray:
        """The bytes of the selected records' next ``sizes`` bytes, concatenated; the positions move past them."""
        pos = self.pos[sel]
        sizes = np.broadcast_to(np.asarray(sizes, dtype=np.int64), pos.shape)
        ends = np.cumsum(sizes)
        index = np.repeat(pos - (ends - sizes), sizes) + np.arange(int(ends[-1]) if len(ends) else 0)
        if len(index) and index[-1] >= len(self.data) - _PADDING:
            raise HoodieIOError("avro data block", "a record runs past the end of its block")
        self.pos[sel] = pos + sizes
        return self.data[index]


def _with_nulls(values: pa.Array, sel: np.ndarray, n: int) -> pa.Array:
    """``values`` of the selected records placed among ``n`` (null elsewhere)."""
    if len(sel) == n:
        return values
    index = np.full(n, -1, dtype=np.int64)
    index[sel] = np.arange(len(sel))
    return values.take(pa.array(index, mask=index < 0))


class _Decoder:
    def __init__(self, cursors: _Cursors, names: dict[str, Any]):
        self.c, self.names = cursors, names

    def read(self, schema: Any, sel: np.ndarray, n: int, namespace: str | None) -> pa.Array:
        """The values of type ``schema`` of the selected records (each at its position), among ``n``."""
        if isinstance(schema, str) and schema in self.names:
            schema = self.names[schema]
        elif isinstance(schema, str) and namespace and f"{namespace}.{schema}" in self.names:
            schema = self.names[f"{namespace}.{schema}"]
        if isinstance(schema, list):
            return self._union(schema, sel, n, namespace)
        kind = schema if isinstance(schema, str) else schema["type"]
        c = self.c
        if kind in ("int", "long"):
            return _with_nulls(pa.array(c.varint(sel), pa.int64()), sel, n)
        if kind in ("string", "bytes"):
            sizes = c.varint(sel)
            if (sizes < 0).any():
                raise HoodieIOError("avro data block", "a negative string length")
            values = c.binary(sel, sizes, n)
            return values.cast(pa.string()) if kind == "string" else values
        if kind == "fixed":
            size = int(schema["size"])
            buf = pa.py_buffer(c.take(sel, size))
            return _with_nulls(pa.Array.from_buffers(pa.binary(size), len(sel), [None, buf]), sel, n)
        if kind == "boolean":
            return _with_nulls(pa.array(c.take(sel, 1) != 0), sel, n)
        if kind in ("float", "double"):
            dtype = np.dtype("<f4" if kind == "float" else "<f8")
            return _with_nulls(pa.array(c.take(sel, dtype.itemsize).view(dtype)), sel, n)
        if kind == "null":
            return pa.nulls(n)
        if kind == "record":
            space = schema.get("namespace", namespace)
            children = [self.read(f["type"], sel, n, space) for f in schema["fields"]]
            present = np.zeros(n, dtype=bool)
            present[sel] = True
            return pa.StructArray.from_arrays(children, [f["name"] for f in schema["fields"]],
                                              mask=pa.array(~present))
        raise UnsupportedSchema(kind)

    def _union(self, branches: list[Any], sel: np.ndarray, n: int, namespace: str | None) -> pa.Array:
        values = [i for i, b in enumerate(branches) if b != "null"]
        if len(values) != 1:
            raise UnsupportedSchema("a union of several types")
        index = self.c.varint(sel)
        if ((index < 0) | (index >= len(branches))).any():
            raise HoodieIOError("avro data block", "a union branch index out of range")
        return self.read(branches[values[0]], sel[index == values[0]], n, namespace)


def _named(schema: Any, namespace: str | None, out: dict[str, Any]) -> None:
    if isinstance(schema, list):
        for b in schema:
            _named(b, namespace, out)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "fixed", "enum") and "name" in schema:
            space = schema.get("namespace", namespace)
            name = schema["name"] if "." in schema["name"] or not space else f"{space}.{schema['name']}"
            out[name] = schema
            namespace = space
        for f in schema.get("fields", ()):
            _named(f["type"], namespace, out)
        for key in ("items", "values"):
            if key in schema:
                _named(schema[key], namespace, out)


def block_columns(content: bytes, starts: np.ndarray, ends: np.ndarray, writer: dict[str, Any]) -> pa.StructArray:
    """The records starting at ``starts`` (each encoding ending at ``ends``) of a block with the record schema
    ``writer`` (JSON form), as a struct array of raw values. Raises :class:`UnsupportedSchema` for a schema it
    does not read, HoodieIOError when a record's encoding is not its stored length."""
    names: dict[str, Any] = {}
    _named(writer, None, names)
    cursors = _Cursors(content, starts)
    n = len(starts)
    out = _Decoder(cursors, names).read(writer, np.arange(n), n, None)
    if not np.array_equal(cursors.pos, ends):
        raise HoodieIOError("avro data block", "a record's encoding does not match its stored length")
    return out

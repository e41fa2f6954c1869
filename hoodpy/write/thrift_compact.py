"""Thrift's compact protocol, generically: a parquet footer read and written back field by field.

A struct is a :class:`Struct` of field id -> (wire type, value), whatever the ids: fields this code does not
know (a newer parquet spec's size statistics, geospatial statistics, logical types) are written back as they
were read, byte for byte. fastparquet's codec (the other candidate) writes only field ids 1-13 and drops the
rest (ColumnMetaData's bloom filter offset/length and size statistics, LogicalType's UUID and FLOAT16), and
narrows list element types: not safe for a footer that is copied on.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

# Thrift's compact protocol writes lengths and zigzagged integers as protobuf's base-128 varints.
from hoodpy.hfile.encoding import protobuf_varint, read_protobuf_varint

# Wire types.
BOOL_TRUE, BOOL_FALSE, I8, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)


@dataclass
class Struct:
    """A thrift struct: field id -> (wire type, value). Values: int, float, bool, bytes, :class:`Struct`,
    (element type, [values]) for lists and sets, (key type, value type, [(key, value)]) for maps."""

    fields: dict[int, tuple[int, object]] = field(default_factory=dict)

    def get(self, fid: int, default=None):
        entry = self.fields.get(fid)
        return default if entry is None else entry[1]

    def set(self, fid: int, wire: int, value) -> None:
        self.fields[fid] = (wire, value)

    def drop(self, *fids: int) -> None:
        for fid in fids:
            self.fields.pop(fid, None)

    def items(self, fid: int) -> list:
        """The elements of list field ``fid`` (empty when absent)."""
        value = self.get(fid)
        return [] if value is None else value[1]

    def copy(self) -> Struct:
        """A copy deep enough to edit fields of this struct and of its nested structs and lists."""
        return Struct({k: (w, _copied(v)) for k, (w, v) in self.fields.items()})


def _copied(value):
    if isinstance(value, Struct):
        return value.copy()
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], list):
        return value[0], [_copied(v) for v in value[1]]
    return value


def decode(data: bytes | memoryview) -> Struct:
    """The struct encoded at the start of ``data``."""
    value, _ = _read_struct(memoryview(data), 0)
    return value


def encode(value: Struct) -> bytes:
    out = bytearray()
    _write_struct(out, value)
    return bytes(out)


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _read_struct(data: memoryview, pos: int) -> tuple[Struct, int]:
    out, last = Struct(), 0
    while True:
        header = data[pos]
        pos += 1
        if header == 0:
            return out, pos
        wire, delta = header & 0x0F, header >> 4
        if delta:
            fid = last + delta
        else:
            raw, pos = read_protobuf_varint(data, pos)
            fid = _zigzag(raw)
        if wire in (BOOL_TRUE, BOOL_FALSE):
            value = wire == BOOL_TRUE
        else:
            value, pos = _read_value(data, pos, wire)
        out.fields[fid] = (wire, value)
        last = fid


def _read_value(data: memoryview, pos: int, wire: int):
    if wire in (I16, I32, I64):
        raw, pos = read_protobuf_varint(data, pos)
        return _zigzag(raw), pos
    if wire == I8:
        return struct.unpack_from("<b", data, pos)[0], pos + 1
    if wire == DOUBLE:
        return struct.unpack_from("<d", data, pos)[0], pos + 8
    if wire == BINARY:
        size, pos = read_protobuf_varint(data, pos)
        return bytes(data[pos:pos + size]), pos + size
    if wire == STRUCT:
        return _read_struct(data, pos)
    if wire in (LIST, SET):
        header = data[pos]
        pos += 1
        size, elem = header >> 4, header & 0x0F
        if size == 15:
            size, pos = read_protobuf_varint(data, pos)
        items = []
        for _ in range(size):
            if elem in (BOOL_TRUE, BOOL_FALSE):  # a byte per element; kept as read
                items.append(data[pos])
                pos += 1
            else:
                item, pos = _read_value(data, pos, elem)
                items.append(item)
        return (elem, items), pos
    if wire == MAP:
        size, pos = read_protobuf_varint(data, pos)
        if not size:
            return (0, 0, []), pos
        types = data[pos]
        pos += 1
        key_type, value_type, pairs = types >> 4, types & 0x0F, []
        for _ in range(size):
            key, pos = _read_value(data, pos, key_type)
            val, pos = _read_value(data, pos, value_type)
            pairs.append((key, val))
        return (key_type, value_type, pairs), pos
    raise ValueError(f"thrift compact: unknown wire type {wire} at byte {pos}")


def _put_zigzag(out: bytearray, n: int) -> None:
    out += protobuf_varint((n << 1) ^ (n >> 63))


def _write_struct(out: bytearray, value: Struct) -> None:
    last = 0
    for fid in sorted(value.fields):
        wire, item = value.fields[fid]
        if wire in (BOOL_TRUE, BOOL_FALSE):
            wire = BOOL_TRUE if item else BOOL_FALSE
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | wire)
        else:
            out.append(wire)
            _put_zigzag(out, fid)
        if wire not in (BOOL_TRUE, BOOL_FALSE):
            _write_value(out, wire, item)
        last = fid
    out.append(0)


def _write_value(out: bytearray, wire: int, value) -> None:
    if wire in (I16, I32, I64):
        _put_zigzag(out, value)
    elif wire == I8:
        out += struct.pack("<b", value)
    elif wire == DOUBLE:
        out += struct.pack("<d", value)
    elif wire == BINARY:
        out += protobuf_varint(len(value))
        out += value
    elif wire == STRUCT:
        _write_struct(out, value)
    elif wire in (LIST, SET):
        elem, items = value
        if len(items) < 15:
            out.append((len(items) << 4) | elem)
        else:
            out.append(0xF0 | elem)
            out += protobuf_varint(len(items))
        for item in items:
            if elem in (BOOL_TRUE, BOOL_FALSE):
                out.append(item)
            else:
                _write_value(out, elem, item)
    elif wire == MAP:
        key_type, value_type, pairs = value
        out += protobuf_varint(len(pairs))
        if pairs:
            out.append((key_type << 4) | value_type)
            for key, val in pairs:
                _write_value(out, key_type, key)
                _write_value(out, value_type, val)
    else:
        raise ValueError(f"thrift compact: unknown wire type {wire}")

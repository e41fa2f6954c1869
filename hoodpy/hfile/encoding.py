"""The variable-length integers an HFile uses: protobuf varints (the trailer's and the file info's length prefix
and their fields) and Hadoop's WritableUtils vlongs (index key lengths, a cell's MVCC timestamp).

Both decoders take ``(data, pos)`` and return ``(value, next_pos)``; they raise IndexError on truncated input,
which the callers turn into :class:`~hoodpy.errors.HFileFormatError` naming the file.
"""

from __future__ import annotations

Bytes = bytes | bytearray | memoryview  # what the readers take (memoryview: no copies of a file's blocks)

_UINT64 = (1 << 64) - 1


def protobuf_varint(value: int) -> bytes:
    """Base-128 varint, low group first; a negative int64 is its two's complement (10 bytes), as protobuf
    writes an int64/uint64 field set to -1."""
    value &= _UINT64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_protobuf_varint(data: Bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("protobuf varint longer than 10 bytes")


def hadoop_vlong(value: int) -> bytes:
    """WritableUtils.writeVLong: one byte for -112..127, else a length byte then the value's big-endian bytes
    (of its one's complement when negative)."""
    if -112 <= value <= 127:
        return bytes([value & 0xFF])
    marker = -112
    if value < 0:
        value = ~value
        marker = -120
    size = (value.bit_length() + 7) // 8
    marker -= size
    return bytes([marker & 0xFF]) + value.to_bytes(size, "big")


def read_hadoop_vlong(data: Bytes, pos: int) -> tuple[int, int]:
    first = data[pos]
    first = first - 256 if first > 127 else first
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)  # bytes after the marker, plus one
    if pos + size > len(data):
        raise IndexError("vlong runs past the end of the data")
    value = int.from_bytes(data[pos + 1:pos + size], "big")
    return (~value if negative else value), pos + size

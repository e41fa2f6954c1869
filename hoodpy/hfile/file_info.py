"""The file info block (``FILEINF2``): the HFile's string-keyed properties.

Payload: ``PBUF``, a protobuf varint length, then ``InfoProto { repeated BytesBytesPair map_entry = 1 }`` with
``BytesBytesPair { bytes first = 1; bytes second = 2 }``. HFile's own keys carry big-endian numbers; Hudi adds
UTF-8 text entries (the Avro schema, the bloom filter type, min / max record key).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from hoodpy.hfile.encoding import Bytes, protobuf_varint, read_protobuf_varint

PB_MAGIC = b"PBUF"

# HFile's keys.
LAST_KEY = "hfile.LASTKEY"  # Hudi: short rowLength + row of the last cell (empty when there is none)
AVG_KEY_LEN = "hfile.AVG_KEY_LEN"  # int; Hudi: average row length
AVG_VALUE_LEN = "hfile.AVG_VALUE_LEN"  # int
CREATE_TIME_TS = "hfile.CREATE_TIME_TS"  # long, epoch milliseconds
KEY_VALUE_VERSION = "KEY_VALUE_VERSION"  # int; 1 = every cell ends with its MVCC timestamp
MAX_MEMSTORE_TS_KEY = "MAX_MEMSTORE_TS_KEY"  # long; a reader refuses cells with MVCC timestamps above 0
KEY_VALUE_VERSION_WITH_MVCC = 1
# Hudi's keys (HoodieAvroHFileReaderImplBase).
SCHEMA = "schema"  # the Avro schema (JSON) of the values
BLOOM_FILTER_TYPE_CODE = "bloomFilterTypeCode"
MIN_RECORD_KEY = "minRecordKey"
MAX_RECORD_KEY = "maxRecordKey"
BLOOM_FILTER_META_BLOCK = "bloomFilter"  # the meta block holding the bloom filter's serialized text


def parse(payload: Bytes) -> dict[str, bytes]:
    """The entries of a file info payload, in file order (ValueError when it is not one)."""
    if bytes(payload[:4]) != PB_MAGIC:
        raise ValueError(f"file info block does not start with PBUF (found {bytes(payload[:4])!r})")
    length, pos = read_protobuf_varint(payload, 4)
    end = pos + length
    if end > len(payload):
        raise ValueError(f"file info message of {length} bytes runs past the block")
    entries: dict[str, bytes] = {}
    while pos < end:
        pair, pos = _length_delimited(payload, pos, 1)
        first = second = b""
        inner = 0
        while inner < len(pair):
            tag = pair[inner]
            if tag == 0x0A:
                first, inner = _bytes(pair, inner + 1)
            elif tag == 0x12:
                second, inner = _bytes(pair, inner + 1)
            else:
                raise ValueError(f"unexpected field tag {tag} in a file info entry")
        entries[first.decode("utf-8")] = second
    return entries


def encode(entries: Mapping[str, bytes]) -> bytes:
    """A file info payload holding ``entries`` in their order."""
    message = bytearray()
    for name, value in entries.items():
        key = name.encode("utf-8")
        pair = b"\x0a" + protobuf_varint(len(key)) + key + b"\x12" + protobuf_varint(len(value)) + value
        message += b"\x0a" + protobuf_varint(len(pair)) + pair
    return PB_MAGIC + protobuf_varint(len(message)) + bytes(message)


def int_value(value: bytes | None) -> int | None:
    """A big-endian int or long entry (None when absent)."""
    if value is None:
        return None
    if len(value) not in (4, 8):
        raise ValueError(f"expected a 4- or 8-byte number, found {len(value)} bytes")
    return struct.unpack(">i" if len(value) == 4 else ">q", value)[0]


def _length_delimited(data: Bytes, pos: int, field: int) -> tuple[bytes, int]:
    tag, pos = read_protobuf_varint(data, pos)
    if tag != (field << 3 | 2):
        raise ValueError(f"unexpected field tag {tag} in the file info message")
    return _bytes(data, pos)


def _bytes(data: Bytes, pos: int) -> tuple[bytes, int]:
    size, pos = read_protobuf_varint(data, pos)
    if pos + size > len(data):
        raise ValueError(f"file info field of {size} bytes runs past its message")
    return bytes(data[pos:pos + size]), pos + size


def java_hash_map_order(names: list[str]) -> list[str]:
    """``names`` (distinct, in insertion order) in the order a java.util.HashMap<String, ?> holding them iterates:
    by bucket of the spread String.hashCode in the smallest power-of-two table (from 16) the 0.75 load factor
    allows, then by insertion within a bucket. Hudi's writer keeps the file info in such a map, so writing the
    entries in this order makes hoodpy's file info block the bytes Java writes."""
    size = 16
    while len(names) > size * 3 // 4:
        size *= 2

    def bucket(name: str) -> int:
        h = 0
        units = name.encode("utf-16-be")
        for i in range(0, len(units), 2):
            h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (size - 1)

    return sorted(names, key=bucket)  # sorted() is stable: insertion order within a bucket

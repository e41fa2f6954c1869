"""The HFile trailer: the file's last 4096 bytes.

``TRABLK"$``, a protobuf varint length, the ``TrailerProto`` message, zeros, and in the last 4 bytes the version:
minor version in byte 4092, major version in bytes 4093-4095 (24-bit). Only major version 3 is read (Hudi
writes minor 0, HBase 2.4 minor 3).

TrailerProto fields (all optional; numbers are protobuf field numbers):

==  ============================  ===========================================================================
1   file_info_offset              offset of the file info block
2   load_on_open_data_offset      offset of the root data index (meta index and file info follow it)
3   uncompressed_data_index_size  HBase: the index's size; Hudi: the total uncompressed data-block payload
4   total_uncompressed_bytes      (Hudi leaves it unset)
5   data_index_count              root data index entries
6   meta_index_count              meta index entries
7   entry_count                   cells in the file
8   num_data_index_levels         1 unless HBase wrote leaf / intermediate index blocks
9   first_data_block_offset       (-1 as a 64-bit varint when the file has no data block)
10  last_data_block_offset
11  comparator_class_name         Hudi: ``org.apache.hudi.io.storage.HoodieHBaseKVComparator``
12  compression_codec             :class:`~hoodpy.hfile.block.Compression` id
13  encryption_key                (never set by Hudi)
==  ============================  ===========================================================================

Protobuf writes the set fields in field-number order; :meth:`Trailer.encode` does the same, so a trailer with
Hudi's fields set comes out byte for byte as Java writes it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields

from hoodpy.hfile.block import TRAILER, Compression
from hoodpy.hfile.encoding import Bytes, protobuf_varint, read_protobuf_varint

TRAILER_SIZE = 4096
MAJOR_VERSION = 3
HUDI_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
_FIELD_NUMBERS = {
    "file_info_offset": 1, "load_on_open_data_offset": 2, "uncompressed_data_index_size": 3,
    "total_uncompressed_bytes": 4, "data_index_count": 5, "meta_index_count": 6, "entry_count": 7,
    "num_data_index_levels": 8, "first_data_block_offset": 9, "last_data_block_offset": 10,
    "comparator_class_name": 11, "compression_codec": 12, "encryption_key": 13,
}
_NAMES = {number: name for name, number in _FIELD_NUMBERS.items()}
_BYTES_FIELDS = {"comparator_class_name", "encryption_key"}


@dataclass(frozen=True)
class Trailer:
    """The TrailerProto fields; None = not set in the file."""

    file_info_offset: int | None = None
    load_on_open_data_offset: int | None = None
    uncompressed_data_index_size: int | None = None
    total_uncompressed_bytes: int | None = None
    data_index_count: int | None = None
    meta_index_count: int | None = None
    entry_count: int | None = None
    num_data_index_levels: int | None = None
    first_data_block_offset: int | None = None
    last_data_block_offset: int | None = None
    comparator_class_name: str | None = None
    compression_codec: int | None = None
    encryption_key: bytes | None = None
    minor_version: int = 0

    @property
    def codec(self) -> Compression:
        """The compression codec (ValueError for an id no codec has)."""
        return Compression(self.compression_codec if self.compression_codec is not None else Compression.NONE)

    @property
    def index_levels(self) -> int:
        return self.num_data_index_levels or 1

    def encode(self) -> bytes:
        """The 4096 trailer bytes."""
        message = bytearray()
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "minor_version" or value is None:
                continue
            number = _FIELD_NUMBERS[f.name]
            if f.name in _BYTES_FIELDS:
                data = value.encode("utf-8") if isinstance(value, str) else value
                message += protobuf_varint(number << 3 | 2) + protobuf_varint(len(data)) + data
            else:
                message += protobuf_varint(number << 3) + protobuf_varint(value)
        body = TRAILER + protobuf_varint(len(message)) + message
        if len(body) > TRAILER_SIZE - 4:
            raise ValueError(f"trailer message of {len(message)} bytes does not fit in {TRAILER_SIZE} bytes")
        return body + bytes(TRAILER_SIZE - 4 - len(body)) + struct.pack(">B", self.minor_version) + \
            MAJOR_VERSION.to_bytes(3, "big")

    @classmethod
    def parse(cls, data: Bytes) -> Trailer:
        """The trailer of a whole file's bytes (ValueError naming what is wrong)."""
        if len(data) < TRAILER_SIZE:
            raise ValueError(f"file of {len(data)} bytes is shorter than the {TRAILER_SIZE}-byte trailer")
        start = len(data) - TRAILER_SIZE
        if bytes(data[start:start + len(TRAILER)]) != TRAILER:
            raise ValueError(f"no trailer magic TRABLK\"$ at byte {start} "
                             f"(found {bytes(data[start:start + len(TRAILER)])!r})")
        minor = data[len(data) - 4]
        major = int.from_bytes(data[len(data) - 3:], "big")
        if major != MAJOR_VERSION:
            raise ValueError(f"HFile major version {major} (minor {minor}); only version {MAJOR_VERSION} is read")
        length, pos = read_protobuf_varint(data, start + len(TRAILER))
        end = pos + length
        if end > len(data) - 4:
            raise ValueError(f"trailer message of {length} bytes runs past the trailer")
        values: dict[str, object] = {"minor_version": minor}
        while pos < end:
            tag, pos = read_protobuf_varint(data, pos)
            number, wire = tag >> 3, tag & 7
            if wire == 0:
                value, pos = read_protobuf_varint(data, pos)
                if number in (9, 10) and value >= 1 << 63:
                    value -= 1 << 64  # int64 -1: "no data block"
            elif wire == 2:
                size, pos = read_protobuf_varint(data, pos)
                value, pos = bytes(data[pos:pos + size]), pos + size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
                continue
            else:
                raise ValueError(f"trailer field {number} has wire type {wire}")
            name = _NAMES.get(number)
            if name is None:
                continue
            if isinstance(value, bytes) != (name in _BYTES_FIELDS):
                raise ValueError(f"trailer field {name} has wire type {wire}")
            values[name] = value.decode("utf-8") if name == "comparator_class_name" else value
        if pos != end:
            raise ValueError("trailer message fields run past its length")
        return cls(**values)

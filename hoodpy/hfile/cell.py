"""Cells (HBase KeyValues) of a data block, and the keys they carry.

A cell: ``int keyLength, int valueLength, key, value`` and, when the file info's ``KEY_VALUE_VERSION`` is 1
(every file Hudi writes), the cell's MVCC timestamp as a Hadoop vlong (one ``00`` byte: Hudi uses none).
The key: ``short rowLength, row, byte familyLength (0), family (none), qualifier (none), long timestamp
(Long.MAX_VALUE), byte type (4 = Put)``, so ``keyLength = rowLength + 12``. Hudi's record key is the row.

Cells sort by the row's unsigned bytes: Hudi compares rows only (family, qualifier, timestamp and type are the
same on every cell it writes), and so does this package. Index keys are either such a full key or, as Hudi
1.0-1.1 wrote them, the bare ``short rowLength, row``; :func:`row_of` reads the row from both.
"""

from __future__ import annotations

import struct

from hoodpy.hfile.encoding import Bytes, read_hadoop_vlong

LATEST_TIMESTAMP = (1 << 63) - 1
PUT = 4
MAX_ROW_LENGTH = 0x7FFF  # the row length is a signed short
KEY_SUFFIX = struct.pack(">bqB", 0, LATEST_TIMESTAMP, PUT)  # family length, timestamp, type
_LENGTHS = struct.Struct(">ii")
_ROW_LENGTH = struct.Struct(">h")


def full_key(row: bytes) -> bytes:
    """The cell key Hudi writes for ``row``."""
    return _ROW_LENGTH.pack(len(row)) + row + KEY_SUFFIX


def bare_key(row: bytes) -> bytes:
    """``short rowLength, row``: Hudi's last key in the file info (and its index keys before apache/hudi#19071)."""
    return _ROW_LENGTH.pack(len(row)) + row


def row_of(key: Bytes) -> bytes:
    """The row of a full or bare key (ValueError when the length prefix runs past the key)."""
    if len(key) < 2:
        raise ValueError(f"key of {len(key)} bytes has no row length")
    (length,) = _ROW_LENGTH.unpack_from(key, 0)
    if length < 0 or 2 + length > len(key):
        raise ValueError(f"key of {len(key)} bytes claims a row of {length} bytes")
    return bytes(key[2:2 + length])


def encode_cell(row: bytes, value: bytes) -> bytes:
    """One cell with a zero MVCC timestamp, as Hudi's HFileDataBlock writes it."""
    return b"".join((_LENGTHS.pack(len(row) + 12, len(value)), _ROW_LENGTH.pack(len(row)), row, KEY_SUFFIX,
                     value, b"\x00"))


CELL_OVERHEAD = 21  # key and value lengths (8), row length (2), KEY_SUFFIX (10), MVCC (1)


def cell_size(row: bytes, value: bytes) -> int:
    return len(row) + len(value) + CELL_OVERHEAD


def parse_cells(payload: Bytes, with_mvcc: bool) -> tuple[list[bytes], list[bytes]]:
    """Rows and values of a data block's cells, in order (ValueError on a cell that runs past the block)."""
    rows: list[bytes] = []
    values: list[bytes] = []
    pos, end = 0, len(payload)
    unpack_lengths, unpack_row_length = _LENGTHS.unpack_from, _ROW_LENGTH.unpack_from
    while pos < end:
        if pos + 10 > end:
            raise ValueError(f"cell at byte {pos} of the block is cut short")
        key_length, value_length = unpack_lengths(payload, pos)
        key_start = pos + 8
        value_start = key_start + key_length
        pos = value_start + value_length
        (row_length,) = unpack_row_length(payload, key_start)
        if key_length < 2 or value_length < 0 or row_length < 0 or row_length + 2 > key_length or pos > end:
            raise ValueError(f"cell at byte {key_start - 8} of the block has inconsistent lengths "
                             f"(key {key_length}, value {value_length}, row {row_length})")
        rows.append(bytes(payload[key_start + 2:key_start + 2 + row_length]))
        values.append(bytes(payload[value_start:pos]))
        if with_mvcc:
            if payload[pos] == 0:  # the only timestamp Hudi writes: skip the vlong decode
                pos += 1
            else:
                _, pos = read_hadoop_vlong(payload, pos)
    return rows, values

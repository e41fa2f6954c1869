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

from hoodpy.hfile.block import InflatingPayload
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


class BlockCells:
    """A data block's cells, located but not copied out: the sequence of their rows (``cells[i]``, bytes,
    sorted), each sliced when asked for, so a scan bisects a block without building every row and value
    (at 8,000 cells per 1 MiB block, building them cost 6x the block's decompression); :meth:`find` looks one
    row up without locating the cells. ValueError on a cell
    that runs past the block (when the block is located) or whose row runs past its key (when read)."""

    def __init__(self, payload: Bytes | InflatingPayload, with_mvcc: bool):
        self._inflating = payload if isinstance(payload, InflatingPayload) else None
        self._payload = None if self._inflating is not None else payload
        self._with_mvcc = with_mvcc
        self._starts: list[int] | None = None

    @property
    def payload(self) -> Bytes:
        """The whole uncompressed payload (inflating what :meth:`find` left)."""
        if self._payload is None:
            self._payload = self._inflating.whole()  # type: ignore[union-attr]
        return self._payload

    @property
    def starts(self) -> list[int]:
        """The cells' offsets, located on first use (a point lookup, :meth:`find`, needs none of them)."""
        if self._starts is None:
            self._starts = _cell_starts(self.payload, self._with_mvcc)
        return self._starts

    def find(self, row: bytes, start: int = 0) -> tuple[bytes | None, int]:
        """(The value of the block's first cell at or past byte ``start`` whose row is ``row``, or None; the
        offset where that cell ends), without locating every cell: a search (in C) for the cell key Hudi writes
        for ``row`` (row length, row, family length 0, timestamp Long.MAX_VALUE, type Put), taken where the 8
        bytes before it are that key's length and a value length that stays inside the block. (Walking 9,000
        cells per 1 MiB block in Python cost about half the block's inflation, in CPU time.) A value would have to hold a whole
        cell's lengths and key to be mistaken for a cell. An inflating payload is inflated only as far as the
        cell found (to its end, for the whole block when the row is absent)."""
        key = full_key(row)
        inflating = self._inflating if self._payload is None else None
        if inflating is None and not isinstance(self.payload, bytes):
            self._payload = bytes(self.payload)  # a memoryview (NONE codec) has no find
        payload = self.payload if inflating is None else inflating.data
        searched = start + 8
        while True:
            pos = payload.find(key, searched)
            while pos >= 0:
                key_length, value_length = _LENGTHS.unpack_from(payload, pos - 8)
                value_end = pos + len(key) + value_length
                if key_length == len(key) and 0 <= value_length:
                    while value_end > len(payload) and inflating is not None and inflating.grow():
                        payload = inflating.data
                    if value_end <= len(payload):
                        return payload[pos + len(key):value_end], value_end
                pos = payload.find(key, pos + 1)
            if inflating is None or not inflating.grow():
                return None, start
            searched = max(start + 8, len(payload) - len(key) + 1)  # a key cut by the prefix's end: again
            payload = inflating.data

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: int) -> bytes:
        start = self.starts[i]
        (key_length,) = _KEY_LENGTH.unpack_from(self.payload, start)
        (row_length,) = _ROW_LENGTH.unpack_from(self.payload, start + 8)
        if row_length < 0 or row_length + 2 > key_length:
            raise ValueError(f"cell at byte {start} of the block has a row of {row_length} bytes in a key of "
                             f"{key_length}")
        return bytes(self.payload[start + 10:start + 10 + row_length])

    def value(self, i: int) -> bytes:
        start = self.starts[i]
        key_length, value_length = _LENGTHS.unpack_from(self.payload, start)
        value_start = start + 8 + key_length
        return bytes(self.payload[value_start:value_start + value_length])


_KEY_LENGTH = struct.Struct(">i")


def _cell_starts(payload: Bytes, with_mvcc: bool) -> list[int]:
    """The offsets of a data block's cells, in order."""
    starts: list[int] = []
    pos, end = 0, len(payload)
    unpack_lengths, append = _LENGTHS.unpack_from, starts.append
    while pos < end:
        if pos + 10 > end:
            raise ValueError(f"cell at byte {pos} of the block is cut short")
        key_length, value_length = unpack_lengths(payload, pos)
        append(pos)
        cell_end = pos + 8 + key_length + value_length
        if key_length < 2 or value_length < 0 or cell_end > end:
            raise ValueError(f"cell at byte {pos} of the block has inconsistent lengths "
                             f"(key {key_length}, value {value_length})")
        pos = cell_end
        if with_mvcc:
            if payload[pos] == 0:  # the only timestamp Hudi writes: skip the vlong decode
                pos += 1
            else:
                _, pos = read_hadoop_vlong(payload, pos)
    return starts

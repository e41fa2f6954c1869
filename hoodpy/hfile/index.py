"""Block index entries: the root data index, the meta index, and HBase's leaf / intermediate index blocks.

Root index block (``IDXROOT2``) payload: per entry ``long offset, int onDiskSize, vlong keyLength, key``
(onDiskSize = the whole block: header, payload, checksums). The entry count is the trailer's
``data_index_count`` (``meta_index_count`` for the meta index); HBase may add 16 bytes of mid-key metadata after
the entries of a multi-level root, which readers skip by counting entries. Data index keys are cell keys (see
:mod:`hoodpy.hfile.cell`; HBase may shorten one to a "fake" key between the previous block's last row and
this block's first row); meta index keys are the meta block's name, raw.

Leaf and intermediate index blocks (``IDXLEAF2`` / ``IDXINTE2``, HBase only, trailer
``num_data_index_levels`` > 1): ``int n``, ``n + 1`` ints of entry offsets relative to the end of that list (the
last is the entries' total size), then per entry ``long offset, int onDiskSize, key`` (key length = next
offset - this offset - 12). A root entry points at an intermediate block when two or more levels remain
below it, at a leaf block when one does; leaf entries point at data blocks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hoodpy.hfile.encoding import Bytes, hadoop_vlong, read_hadoop_vlong

_ENTRY = struct.Struct(">qi")


@dataclass(frozen=True)
class IndexEntry:
    offset: int
    size: int
    key: bytes  # as stored: a cell key (data index) or a name (meta index)


def parse_root_entries(payload: Bytes, count: int) -> list[IndexEntry]:
    """The first ``count`` entries of a root index payload (ValueError when they run past it)."""
    entries = []
    pos = 0
    for _ in range(count):
        if pos + 13 > len(payload):
            raise ValueError(f"root index entry at byte {pos} runs past the block ({len(payload)} bytes)")
        offset, size = _ENTRY.unpack_from(payload, pos)
        length, pos = read_hadoop_vlong(payload, pos + 12)
        if length < 0 or pos + length > len(payload):
            raise ValueError(f"root index key of {length} bytes at byte {pos} runs past the block")
        entries.append(IndexEntry(offset, size, bytes(payload[pos:pos + length])))
        pos += length
    return entries


def parse_non_root_entries(payload: Bytes) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index payload."""
    (count,) = struct.unpack_from(">i", payload, 0)
    base = 4 * (count + 2)
    if count < 0 or base > len(payload):
        raise ValueError(f"non-root index of {count} entries runs past the block ({len(payload)} bytes)")
    relative = struct.unpack_from(f">{count + 1}i", payload, 4)
    if base + relative[-1] > len(payload):
        raise ValueError(f"non-root index of {count} entries runs past the block ({len(payload)} bytes)")
    entries = []
    for i in range(count):
        start, end = base + relative[i], base + relative[i + 1]
        if end < start + 12:
            raise ValueError(f"non-root index entry {i} is {end - start} bytes long")
        offset, size = _ENTRY.unpack_from(payload, start)
        entries.append(IndexEntry(offset, size, bytes(payload[start + 12:end])))
    return entries


def encode_entries(entries: list[IndexEntry]) -> bytes:
    """A root index payload (data or meta index alike: the keys are written as given)."""
    return b"".join(_ENTRY.pack(e.offset, e.size) + hadoop_vlong(len(e.key)) + e.key for e in entries)

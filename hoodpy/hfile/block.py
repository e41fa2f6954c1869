"""HFile blocks: the 33-byte header, the (compressed) payload and the checksum bytes after it.

Header, all integers big-endian:

====  ==========================================================================================
8 B   magic, naming the block type (:data:`DATA`, :data:`ROOT_INDEX`, ...)
int   on-disk size without the header: compressed payload + checksum bytes
int   uncompressed payload size
long  offset of the previous block of the same type (-1: none; Hudi's writer puts -1 on every block
      but the data blocks after the first)
byte  checksum type: 0 NULL (Hudi), 1 CRC32, 2 CRC32C (HBase)
int   bytes per checksum chunk (16384)
int   on-disk size of header + compressed payload (without the checksums)
====  ==========================================================================================

After the payload come 4 bytes per started 16384-byte chunk of header + payload. Hudi writes them as zeros
under checksum type NULL; readers (Hudi's, hudi-rs and this one) do not check them. Compression applies to
every block's payload (data, meta, index, file info), never to the header or the trailer. GZ is a gzip stream
(Java writes the 10-byte header ``1f8b0800 00000000 0000`` and deflate at zlib's default level 6; Python's
zlib gives the same bytes).
"""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import dataclass

from hoodpy.hfile.encoding import Bytes

HEADER_SIZE = 33
BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_NULL = 0
_HEADER = struct.Struct(">8siiqbii")

DATA = b"DATABLK*"
ENCODED_DATA = b"DATABLKE"
LEAF_INDEX = b"IDXLEAF2"
INTERMEDIATE_INDEX = b"IDXINTE2"
ROOT_INDEX = b"IDXROOT2"
META = b"METABLKc"
FILE_INFO = b"FILEINF2"
TRAILER = b"TRABLK\"$"
# HBase's bloom filter blocks and the v1 index block: legal in an HBase file, never read by Hudi.
OTHER_MAGICS = (b"BLMFMET2", b"BLMFBLK2", b"BLMFIDX2", b"IDXBLK)+")
KNOWN_MAGICS = frozenset((DATA, ENCODED_DATA, LEAF_INDEX, INTERMEDIATE_INDEX, ROOT_INDEX, META, FILE_INFO,
                          *OTHER_MAGICS))

# The 10-byte gzip header Java's compressor writes (no name, no mtime, XFL 0, OS 0).
_GZIP_HEADER = bytes.fromhex("1f8b0800000000000000")


class Compression(enum.IntEnum):
    """Trailer compression codec ids (HBase's Compression.Algorithm ordinals)."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6

    @classmethod
    def named(cls, name: str) -> Compression:
        """The codec for a ``hoodie.hfile.compression.algorithm`` value (Hudi accepts GZ/GZIP and NONE, any case)."""
        key = name.strip().upper()
        return cls.GZ if key == "GZIP" else cls[key]


READABLE_CODECS = (Compression.GZ, Compression.NONE)


def compress(payload: bytes, codec: Compression) -> bytes:
    if codec == Compression.NONE:
        return payload
    if codec != Compression.GZ:
        raise ValueError(f"hoodpy writes HFile blocks with GZ or NONE only, not {codec.name}")
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 8)
    body = deflate.compress(payload) + deflate.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def decompress(payload: Bytes, codec: Compression, size: int) -> Bytes:
    """The block's uncompressed payload of ``size`` bytes (ValueError when the bytes do not inflate to it)."""
    if codec == Compression.NONE:
        data = payload
    else:
        try:
            data = zlib.decompress(payload, 16 + zlib.MAX_WBITS)
        except zlib.error as e:
            raise ValueError(f"corrupt gzip payload ({e})") from e
    if len(data) != size:
        raise ValueError(f"payload is {len(data)} bytes, its header says {size}")
    return data


class InflatingPayload:
    """A GZ block's payload inflated on demand, a prefix at a time (:meth:`grow`): a lookup that finds its keys
    early in a block stops inflating there. ``data`` is the prefix inflated so far; :meth:`whole` the payload
    (ValueError, as :func:`decompress`, when the bytes do not inflate to ``size``)."""

    _FIRST = 16 * 1024

    def __init__(self, compressed: Bytes, size: int):
        self.size = size
        self.data = b""
        self._pending: Bytes = compressed
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.complete = False

    def grow(self) -> bool:
        """Inflate as much again as is inflated (16 KiB at first); False when the payload is whole already."""
        if self.complete:
            return False
        try:
            more = self._inflater.decompress(self._pending, max(self._FIRST, len(self.data)))
        except zlib.error as e:
            raise ValueError(f"corrupt gzip payload ({e})") from e
        self._pending = self._inflater.unconsumed_tail
        self.data += more
        if self._inflater.eof or not self._pending and not more:
            self.complete = True
            if not self._inflater.eof:
                raise ValueError("corrupt gzip payload (cut short)")
            if len(self.data) != self.size:
                raise ValueError(f"payload is {len(self.data)} bytes, its header says {self.size}")
        elif len(self.data) > self.size:
            raise ValueError(f"payload is over {self.size} bytes, the size its header says")
        return True

    def whole(self) -> bytes:
        while self.grow():
            pass
        return self.data


def checksum_bytes(on_disk_data_size_with_header: int) -> int:
    """4 bytes per started chunk of header + on-disk payload."""
    return 4 * -(-on_disk_data_size_with_header // BYTES_PER_CHECKSUM)


@dataclass(frozen=True)
class BlockHeader:
    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size(self) -> int:
        """Header, payload and checksums: where the next block starts."""
        return HEADER_SIZE + self.on_disk_size_without_header


def parse_header(data: Bytes, offset: int) -> BlockHeader:
    """The header of the block at ``offset`` (ValueError when it is cut short or its magic is unknown)."""
    if offset < 0 or offset + HEADER_SIZE > len(data):
        raise ValueError(f"block header at byte {offset} runs past the end of the file ({len(data)} bytes)")
    header = BlockHeader(*_HEADER.unpack_from(data, offset))
    if header.magic not in KNOWN_MAGICS:
        raise ValueError(f"no block magic at byte {offset} (found {bytes(header.magic)!r})")
    if header.on_disk_size_without_header < 0 or header.uncompressed_size < 0 or \
            not HEADER_SIZE <= header.on_disk_data_size_with_header <= header.on_disk_size:
        raise ValueError(f"block at byte {offset} has inconsistent sizes {header}")
    if offset + header.on_disk_size > len(data):
        raise ValueError(f"block at byte {offset} ({header.on_disk_size} bytes) runs past the end of the file "
                         f"({len(data)} bytes)")
    return header


def read_block(data: Bytes, offset: int, codec: Compression, expected: bytes, inflating: bool = False,
               ) -> tuple[BlockHeader, Bytes | InflatingPayload]:
    """Header and uncompressed payload of the block of type ``expected`` at ``offset`` (with ``inflating``, a GZ
    payload comes as an :class:`InflatingPayload`, inflated as it is read)."""
    header = parse_header(data, offset)
    if header.magic != expected:
        raise ValueError(f"expected a {expected.decode()} block at byte {offset}, found {header.magic.decode()}")
    start = offset + HEADER_SIZE
    payload = memoryview(data)[start:offset + header.on_disk_data_size_with_header]
    if inflating and codec == Compression.GZ:
        return header, InflatingPayload(payload, header.uncompressed_size)
    return header, decompress(payload, codec, header.uncompressed_size)


def encode_block(magic: bytes, payload: bytes, codec: Compression, prev_block_offset: int = -1) -> bytes:
    """One block as Hudi's HFileBlock.serialize writes it: header, compressed payload, NULL checksums."""
    body = compress(payload, codec)
    with_header = HEADER_SIZE + len(body)
    checksums = checksum_bytes(with_header)
    header = _HEADER.pack(magic, len(body) + checksums, len(payload), prev_block_offset, CHECKSUM_NULL,
                          BYTES_PER_CHECKSUM, with_header)
    return header + body + bytes(checksums)

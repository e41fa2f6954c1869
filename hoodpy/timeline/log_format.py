"""Hudi's log-file block format, as far as the archived timeline needs it: Avro data blocks.

Each block, all integers big-endian (Java's DataOutputStream), as HoodieLogFormatWriter.appendBlocks writes:

====  ======================================================================================
6 B   magic ``#HUDI#``
long  block length after this field: version, type, header, content length, content, footer, tail
int   log format version (1)
int   block type ordinal (HoodieLogBlockType: COMMAND 0, DELETE 1, CORRUPT 2, AVRO_DATA 3, ...)
...   header: int count, then per entry int HeaderMetadataType ordinal (INSTANT_TIME 0,
      TARGET_INSTANT_TIME 1, SCHEMA 2, COMMAND_BLOCK_TYPE 3), int length, UTF-8 bytes
long  content length
...   content (HoodieAvroDataBlock, block version 2): int version, int record count, then per
      record int length and the record's Avro binary encoding under the header's SCHEMA
...   footer: same layout as the header (archival writes none: int 0)
long  bytes of the block written before this field, magic included (the reverse pointer; readers
      check it equals the leading length + 6 - 8)
====  ======================================================================================

Archive files are named ``.commits_.archive.<version>_<writeToken>`` under ``.hoodie/archived``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hoodpy.errors import InvalidInstantError

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
AVRO_DATA_BLOCK = 3
AVRO_DATA_BLOCK_VERSION = 2
INSTANT_TIME, TARGET_INSTANT_TIME, SCHEMA, COMMAND_BLOCK_TYPE = range(4)
ARCHIVE_FILE_PREFIX = ".commits_.archive."
UNKNOWN_WRITE_TOKEN = "1-0-1"
_ARCHIVE_NAME_RE = re.compile(r"^\.commits_\.archive\.(\d+)_(.+)$")


@dataclass(frozen=True)
class LogBlock:
    block_type: int
    header: dict[int, str]
    footer: dict[int, str]
    content: bytes


def _metadata_bytes(metadata: dict[int, str]) -> bytes:
    out = [struct.pack(">i", len(metadata))]
    for key, value in metadata.items():
        data = value.encode("utf-8")
        out.append(struct.pack(">ii", key, len(data)))
        out.append(data)
    return b"".join(out)


def avro_data_block_content(records: Sequence[bytes]) -> bytes:
    """HoodieAvroDataBlock content: version, count, then each encoded record with its length."""
    out = [struct.pack(">ii", AVRO_DATA_BLOCK_VERSION, len(records))]
    for r in records:
        out.append(struct.pack(">i", len(r)))
        out.append(r)
    return b"".join(out)


def encode_block(block_type: int, header: dict[int, str], content: bytes, footer: dict[int, str] | None = None,
                 ) -> bytes:
    header_bytes = _metadata_bytes(header)
    footer_bytes = _metadata_bytes(footer or {})
    length = 4 + 4 + len(header_bytes) + 8 + len(content) + len(footer_bytes) + 8
    body = b"".join([
        MAGIC, struct.pack(">q", length), struct.pack(">ii", LOG_FORMAT_VERSION, block_type), header_bytes,
        struct.pack(">q", len(content)), content, footer_bytes,
    ])
    return body + struct.pack(">q", len(body))  # everything written before it, magic included


def avro_data_block(records: Sequence[bytes], schema: str) -> bytes:
    """One Avro data block holding ``records`` (already Avro-encoded with ``schema``)."""
    return encode_block(AVRO_DATA_BLOCK, {SCHEMA: schema}, avro_data_block_content(records))


class _Reader:
    def __init__(self, data: bytes, source: str):
        self.data, self.pos, self.source = data, 0, source

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise InvalidInstantError(f"Log file {self.source} is truncated at byte {self.pos}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def long(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def metadata(self) -> dict[int, str]:
        return {self.int(): self.take(self.int()).decode("utf-8") for _ in range(self.int())}


def read_blocks(data: bytes, source: str = "log file") -> Iterator[LogBlock]:
    r = _Reader(data, source)
    while r.pos < len(data):
        start = r.pos
        if r.take(len(MAGIC)) != MAGIC:
            raise InvalidInstantError(f"Log file {source} has no block magic at byte {start}")
        r.long()
        version = r.int()
        if version != LOG_FORMAT_VERSION:
            raise InvalidInstantError(f"Log file {source}: unsupported log format version {version}")
        block_type = r.int()
        header = r.metadata()
        content = r.take(r.long())
        footer = r.metadata()
        written = r.pos - start
        if r.long() != written:
            raise InvalidInstantError(f"Log file {source}: corrupt block at byte {start}")
        yield LogBlock(block_type, header, footer, content)


def avro_records(block: LogBlock) -> list[bytes]:
    """The encoded records of an Avro data block."""
    r = _Reader(block.content, "avro data block")
    r.int()  # block version
    return [r.take(r.int()) for _ in range(r.int())]


def archive_file_name(version: int, write_token: str = UNKNOWN_WRITE_TOKEN) -> str:
    return f"{ARCHIVE_FILE_PREFIX}{version}_{write_token}"


def archive_file_version(name: str) -> int | None:
    m = _ARCHIVE_NAME_RE.match(name)
    return int(m.group(1)) if m else None

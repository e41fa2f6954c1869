"""Hudi's log-file block format: the one block parser of the archived timeline and of merge-on-read log files.

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
      check it equals the leading length + 6)
====  ======================================================================================

Archive files are named ``.commits_.archive.<version>_<writeToken>`` under ``.hoodie/archived``.

A block is corrupt, as Java's HoodieLogFileReader.isBlockCorrupted decides, when its length runs past the end
of the file, its trailing reverse pointer is not that length + 6, or the bytes after it are neither another
magic nor the end of the file (a half-written block, usually the tail of a crashed append). Such a block spans
up to the next magic (or the end) and comes out as a :class:`CorruptBlock`: data files skip it as Hudi's
merged reader does; the archive reader refuses it.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hoodpy.errors import InvalidInstantError
from hoodpy.hfile import Compression, write_records

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
# HoodieLogBlockType ordinals (append-only in Java).
COMMAND_BLOCK, DELETE_BLOCK, CORRUPT_BLOCK, AVRO_DATA_BLOCK, HFILE_DATA_BLOCK, PARQUET_DATA_BLOCK, CDC_DATA_BLOCK = \
    range(7)
AVRO_DATA_BLOCK_VERSION = 2
# HeaderMetadataType ordinals.
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
    # Of a table at version 8 or 9 (timeline layout 2): Hudi 1.x's delete record schema, whose ordering values
    # are Avro value wrappers (:mod:`hoodpy.file_group.ordering_wrappers`). The bytes do not tell: the reader says.
    hudi_1x: bool = False

    @property
    def instant_time(self) -> str | None:
        return self.header.get(INSTANT_TIME)


@dataclass(frozen=True)
class CorruptBlock:
    """Bytes ``[offset, offset + length)`` that do not frame a whole block."""

    offset: int
    length: int


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


ROLLBACK_COMMAND_TYPE = "0"  # HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK
ROLLBACK_WRITE_TOKEN = "1-0-1"  # the write token of the log file Java's rollback writes its command block into


def rollback_command_block(instant_time: str, target_instant_time: str) -> bytes:
    """A rollback command block: the blocks of ``target_instant_time`` read before it no longer count. Header
    in Java's order (INSTANT_TIME, COMMAND_BLOCK_TYPE, TARGET_INSTANT_TIME), no content."""
    return encode_block(COMMAND_BLOCK, {INSTANT_TIME: instant_time, COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND_TYPE,
                                        TARGET_INSTANT_TIME: target_instant_time}, b"")


def avro_data_block(records: Sequence[bytes], schema: str) -> bytes:
    """One Avro data block holding ``records`` (already Avro-encoded with ``schema``)."""
    return encode_block(AVRO_DATA_BLOCK, {SCHEMA: schema}, avro_data_block_content(records))


def hfile_data_block(records: Iterable[tuple[str, Mapping[str, Any]]], schema: str, instant_time: str, *,
                     compression: Compression = Compression.GZ, create_time_ms: int | None = None,
                     full_index_keys: bool = True) -> bytes:
    """One HFile data block (HoodieHFileDataBlock) of ``(record key, record)`` pairs: its content a whole HFile
    of the records under ``schema`` (1 MiB blocks, as HFileUtils writes them), its header INSTANT_TIME and
    SCHEMA (Java writes these two in either order from one run to the next: its header map hashes enum
    identities)."""
    content = write_records(records, schema, compression=compression, create_time_ms=create_time_ms,
                            full_index_keys=full_index_keys)
    return encode_block(HFILE_DATA_BLOCK, {INSTANT_TIME: instant_time, SCHEMA: schema}, content)


class _Reader:
    def __init__(self, data: bytes | memoryview, source: str):
        self.data, self.pos, self.source = data, 0, source

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise InvalidInstantError(f"Log file {self.source} is truncated at byte {self.pos}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk if isinstance(chunk, bytes) else bytes(chunk)

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def long(self) -> int:
        return struct.unpack(">q", self.take(8))[0]

    def metadata(self) -> dict[int, str]:
        return {self.int(): self.take(self.int()).decode("utf-8") for _ in range(self.int())}


def _corrupt(data: bytes, start: int, size_end: int, size: int) -> bool:
    """isBlockCorrupted: the block must end inside the file, with the reverse pointer Java writes and a magic
    (or the end of the file) right after it."""
    end = size_end + size
    if size < 8 or end > len(data):
        return True
    if struct.unpack(">q", data[end - 8:end])[0] != end - start - 8:
        return True
    return end != len(data) and data[end:end + len(MAGIC)] != MAGIC


def scan_blocks(data: bytes, source: str = "log file") -> Iterator[LogBlock | CorruptBlock]:
    """The blocks of a log file in order; a stretch that does not frame a whole block is a CorruptBlock.

    A file whose first bytes are not the magic is no log file: InvalidInstantError (Java's
    CorruptedLogFileException)."""
    pos = 0
    while pos < len(data):
        start = pos  # at a magic, except perhaps at the start of the file
        if start == 0 and len(data) >= len(MAGIC) and data[:len(MAGIC)] != MAGIC:
            raise InvalidInstantError(f"Log file {source} has no block magic at byte 0")
        size_end = start + len(MAGIC) + 8
        size = struct.unpack(">q", data[start + len(MAGIC):size_end])[0] if size_end <= len(data) else -1
        block = None
        if not _corrupt(data, start, size_end, size):
            # A view of the block: its content is then copied once (a bytes slice would copy the body too).
            block = _parse_block(memoryview(data)[size_end:size_end + size - 8], source, start)
        if block is None:
            following = data.find(MAGIC, start + len(MAGIC))
            pos = following if following >= 0 else len(data)
            yield CorruptBlock(start, pos - start)
            continue
        pos = size_end + size
        yield block


def _parse_block(body: bytes | memoryview, source: str, start: int) -> LogBlock | None:
    """Version, type, header, content and footer of one framed block; None when they do not fit its frame."""
    version = struct.unpack(">i", body[:4])[0] if len(body) >= 4 else None
    if version is not None and version != LOG_FORMAT_VERSION:  # a whole block of another format: not skippable
        raise InvalidInstantError(f"Log file {source}: unsupported log format version {version} in the block "
                                  f"at byte {start} (hoodpy reads version {LOG_FORMAT_VERSION})")
    r = _Reader(body, "log block")
    try:
        r.int()
        block_type = r.int()
        header = r.metadata()
        content = r.take(r.long())
        footer = r.metadata()
    except (InvalidInstantError, UnicodeDecodeError, struct.error):
        return None
    if r.pos != len(body):
        return None
    return LogBlock(block_type, header, footer, content)


def read_blocks(data: bytes, source: str = "log file") -> Iterator[LogBlock]:
    """The blocks of an archive file; a corrupt block is an error here (the archived timeline must be whole)."""
    for block in scan_blocks(data, source):
        if isinstance(block, CorruptBlock):
            raise InvalidInstantError(f"Log file {source}: corrupt block at byte {block.offset}")
        yield block


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

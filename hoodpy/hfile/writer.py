"""Writing an HFile as Hudi's native writer (hudi-io HFileWriterImpl) lays it out.

``[data block]* [meta block]* | [root data index] [meta index] [file info] | trailer``

* Cells go into a data block until the next cell would take its uncompressed payload past ``block_size`` (a
  larger cell gets a block of its own); Hudi's base files use ``hoodie.hfile.block.size`` (1 MiB), its log
  blocks a fixed 1 MiB.
* One meta block per meta entry (Hudi: the ``bloomFilter`` of base files), named in the meta index.
* The data index is a single root level, as Hudi's writer always writes it (its reader, hudi-rs and HBase read
  a root index of any size; only HBase's writer splits it into leaf / intermediate levels).
* File info: the caller's entries plus HFile's own (last key, average key and value length, creation time,
  KEY_VALUE_VERSION 1, MAX_MEMSTORE_TS_KEY 0), ordered as Java's HashMap iterates them.
* Trailer fields as Hudi sets them (``uncompressed_data_index_size`` = the data blocks' uncompressed bytes).

Two things differ from Hudi 1.0-1.1's writer, following its later fixes (apache/hudi#19071 and #19083) so that
HBase-based readers (Hudi 0.x, table version 6) can seek in the file: data index keys are full cell keys, not
the bare ``short rowLength + row`` (``full_index_keys=False`` writes those, byte for byte as Hudi 1.1 does), and
a data block's header points at the previous data block (1.1 wrote the block's own offset).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable

from hoodpy.errors import InvalidRecordError
from hoodpy.hfile import block, file_info
from hoodpy.hfile.block import Compression
from hoodpy.hfile.cell import _LENGTHS, _ROW_LENGTH, CELL_OVERHEAD, KEY_SUFFIX, MAX_ROW_LENGTH, bare_key, full_key
from hoodpy.hfile.index import IndexEntry, encode_entries
from hoodpy.hfile.trailer import HUDI_COMPARATOR, Trailer

DEFAULT_BLOCK_SIZE = 1024 * 1024  # hoodie.hfile.block.size; HFileUtils' log-block HFiles use the same


class HFileWriter:
    """Builds an HFile in memory from entries given in ascending key order.

    Example::

        writer = HFileWriter(compression=Compression.GZ)
        writer.append_file_info("schema", schema_json.encode())
        for key, value in sorted_entries:
            writer.append(key, value)
        data = writer.finish()

    Keys (``str``, UTF-8, or ``bytes``) must be strictly ascending by their bytes: an out-of-order or repeated
    key raises :class:`~hoodpy.errors.InvalidRecordError`, as Hudi's HoodieAvroHFileWriter refuses duplicates.
    """

    def __init__(self, *, block_size: int = DEFAULT_BLOCK_SIZE, compression: Compression = Compression.GZ,
                 create_time_ms: int | None = None, full_index_keys: bool = True):
        if block_size <= 0:
            raise ValueError(f"block_size must be positive, got {block_size}")
        if compression not in block.READABLE_CODECS:
            raise ValueError(f"hoodpy writes HFiles with GZ or NONE compression, not {compression.name}")
        self.block_size = block_size
        self.compression = Compression(compression)
        self.create_time_ms = int(time.time() * 1000) if create_time_ms is None else create_time_ms
        self.full_index_keys = full_index_keys
        self._chunks: list[bytes] = []
        self._offset = 0
        self._index: list[IndexEntry] = []
        self._block_cells: list[bytes] = []
        self._block_first_row = b""
        self._block_bytes = 0
        self._last_row: bytes | None = None
        self._last_block_offset = -1
        self._entries = self._row_bytes = self._value_bytes = self._data_bytes = 0
        self._file_info: dict[str, bytes] = {file_info.MAX_MEMSTORE_TS_KEY: struct.pack(">q", 0)}
        self._meta_blocks: dict[str, bytes] = {}
        self._finished = False

    def append(self, key: str | bytes, value: bytes) -> None:
        self.append_all(((key, value),))

    def append_all(self, entries: Iterable[tuple[str | bytes, bytes]]) -> None:
        """:meth:`append` of each ``(key, value)`` in turn, in one loop (the record index's base files hold
        hundreds of thousands of cells)."""
        self._check_open()
        block_size, parts = self.block_size, self._block_cells
        pack_lengths, pack_row_length = _LENGTHS.pack, _ROW_LENGTH.pack
        last = self._last_row
        entries_added = row_bytes = value_bytes = 0
        try:
            for key, value in entries:
                row = key.encode("utf-8") if isinstance(key, str) else bytes(key)
                row_length, value_length = len(row), len(value)
                if row_length > MAX_ROW_LENGTH:
                    raise InvalidRecordError(f"HFile key of {row_length} bytes is longer than {MAX_ROW_LENGTH} bytes",
                                             examples=[row[:40]])
                if last is not None and row <= last:
                    raise InvalidRecordError(
                        "HFile keys must be appended in ascending order without duplicates: "
                        f"{row[:80]!r} after {last[:80]!r}")
                size = row_length + value_length + CELL_OVERHEAD
                if parts and self._block_bytes + size > block_size:
                    self._flush_data_block()
                    parts = self._block_cells
                if not parts:
                    self._block_first_row = row
                # encode_cell's bytes, joined once per block
                parts += (pack_lengths(row_length + 12, value_length), pack_row_length(row_length), row, KEY_SUFFIX,
                          value, b"\x00")
                self._block_bytes += size
                last = row
                entries_added += 1
                row_bytes += row_length
                value_bytes += value_length
        finally:  # the cells appended before a refused key stay counted
            self._last_row = last
            self._entries += entries_added
            self._row_bytes += row_bytes
            self._value_bytes += value_bytes
            self._data_bytes += row_bytes + value_bytes + CELL_OVERHEAD * entries_added

    def append_file_info(self, name: str, value: bytes) -> None:
        """A file info entry (a later value of the same name replaces the earlier one)."""
        self._check_open()
        self._file_info[name] = bytes(value)

    def append_meta_block(self, name: str, value: bytes) -> None:
        """A meta block holding ``value`` (Hudi's base files: ``bloomFilter``, the bloom filter's text)."""
        self._check_open()
        self._meta_blocks[name] = bytes(value)

    def finish(self) -> bytes:
        """The whole file."""
        self._check_open()
        self._finished = True
        self._flush_data_block()
        meta_index = []
        for name in sorted(self._meta_blocks, key=lambda n: n.encode("utf-8")):
            offset = self._write(block.encode_block(block.META, self._meta_blocks[name], self.compression))
            meta_index.append(IndexEntry(offset, self._offset - offset, name.encode("utf-8")))
        load_on_open = self._write(block.encode_block(block.ROOT_INDEX, encode_entries(self._index),
                                                      self.compression))
        self._write(block.encode_block(block.ROOT_INDEX, encode_entries(meta_index), self.compression))
        info = self._finish_file_info()
        file_info_offset = self._write(block.encode_block(
            block.FILE_INFO, file_info.encode({n: info[n] for n in file_info.java_hash_map_order(list(info))}),
            self.compression))
        self._write(Trailer(
            file_info_offset=file_info_offset,
            load_on_open_data_offset=load_on_open,
            uncompressed_data_index_size=self._data_bytes,
            data_index_count=len(self._index),
            meta_index_count=len(meta_index),
            entry_count=self._entries,
            num_data_index_levels=1,
            first_data_block_offset=self._index[0].offset if self._index else -1,
            last_data_block_offset=max(self._last_block_offset, 0),
            comparator_class_name=HUDI_COMPARATOR,
            compression_codec=int(self.compression),
        ).encode())
        data = b"".join(self._chunks)
        self._chunks = [data]
        return data

    def _finish_file_info(self) -> dict[str, bytes]:
        """The caller's entries plus HFile's own, inserted in the order Hudi's finishFileInfo adds them."""
        info = self._file_info
        info[file_info.LAST_KEY] = bare_key(self._last_row) if self._last_row is not None else b""
        info[file_info.AVG_KEY_LEN] = struct.pack(">i", self._row_bytes // self._entries if self._entries else 0)
        info[file_info.CREATE_TIME_TS] = struct.pack(">q", self.create_time_ms)
        info[file_info.AVG_VALUE_LEN] = struct.pack(">i", self._value_bytes // self._entries if self._entries else 0)
        info.setdefault(file_info.KEY_VALUE_VERSION, struct.pack(">i", file_info.KEY_VALUE_VERSION_WITH_MVCC))
        return info

    def _flush_data_block(self) -> None:
        if not self._block_cells:
            return
        first = self._block_first_row
        encoded = block.encode_block(block.DATA, b"".join(self._block_cells), self.compression,
                                     self._last_block_offset)
        offset = self._write(encoded)
        self._index.append(IndexEntry(offset, len(encoded), full_key(first) if self.full_index_keys
                                      else bare_key(first)))
        self._last_block_offset = offset
        self._block_cells, self._block_bytes = [], 0

    def _write(self, data: bytes) -> int:
        offset = self._offset
        self._chunks.append(data)
        self._offset += len(data)
        return offset

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("HFileWriter.finish() was already called")

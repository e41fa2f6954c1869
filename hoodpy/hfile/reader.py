"""Reading an HFile: point lookups by key, lookups by key prefix, and a scan of every entry in key order.

Opening reads the trailer, then the load-on-open section it points at (root data index, meta index, file
info; the root's leaf / intermediate levels when HBase wrote more than one), as Hudi's HFileReaderImpl does.
Data blocks are read and decompressed when a lookup or scan reaches them; the most recently used decoded
blocks (up to 16 MiB of them) are kept, so repeated lookups in a block decode it once.

A reader holds the file's bytes, or (:meth:`HFileReader.open`) a random-access file it reads ranges of: the
trailer, the load-on-open section, the leaf / intermediate index blocks, then only the data blocks a lookup
reaches (:meth:`HFileReader.get_many` reads the blocks its keys fall in, runs of adjacent blocks in one read),
so that a few keys looked up in a large file (a record_index shard) cost a few blocks, locally or on S3.

A lookup of key K starts in the block before the first index entry whose key is >= K (an earlier block may
end with K when HBase split equal keys across blocks, and an HBase "fake" index key may be smaller than its
block's real first row) and searches each block's bytes for K's cell (:meth:`BlockCells.find`), going on to the
next block while that block's index key is <= K.
"""

from __future__ import annotations

import contextlib
import struct
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Protocol

from hoodpy.errors import HFileFormatError
from hoodpy.hfile import block, file_info
from hoodpy.hfile.block import READABLE_CODECS, Compression
from hoodpy.hfile.cell import BlockCells, row_of
from hoodpy.hfile.encoding import Bytes
from hoodpy.hfile.index import IndexEntry, parse_non_root_entries, parse_root_entries
from hoodpy.hfile.trailer import TRAILER_SIZE, Trailer

_CACHE_BYTES = 16 * 1024 * 1024  # uncompressed data-block bytes kept decoded (16 of Hudi's 1 MiB blocks)
_ON_DISK_SIZE = struct.Struct(">i")  # a block header's onDiskSizeWithoutHeader, after the 8-byte magic


class RandomAccessFile(Protocol):
    """What :meth:`HFileReader.open` reads: pyarrow's ``NativeFile`` (``fs.open_input_file``) has it."""

    def size(self) -> int: ...

    def read_at(self, nbytes: int, offset: int) -> bytes: ...


class HFileReader:
    """An HFile held in memory (bytes, or a memoryview / mmap of a file).

    Example::

        reader = HFileReader(storage.read_bytes(path), source=path)
        reader.get("__all_partitions__")        # the value's bytes, or None
        dict(reader.scan("region="))            # every entry whose key starts with the prefix
        reader.file_info["schema"]              # file info entries (bytes)

    Keys are the cells' rows, given and returned as ``str`` (UTF-8); values are ``bytes``. Every problem with
    the bytes raises :class:`~hoodpy.errors.HFileFormatError` naming ``source``.
    """

    def __init__(self, data: Bytes | None, source: str = "<bytes>", *, file: RandomAccessFile | None = None):
        self._data = memoryview(data).cast("B") if data is not None and not isinstance(data, bytes) else data
        self._file = file
        self.source = source
        self.bytes_read = 0  # bytes read from ``file`` (0 for a reader of bytes in memory)
        self._raw: dict[int, Bytes] = {}  # data blocks read ahead by get_many, not decoded yet
        self._tail_offset = 0
        if data is None:
            if file is None:
                raise ValueError("HFileReader needs the file's bytes or a random-access file")
            with self._format_errors("trailer"):
                size = file.size()
                # The trailer, then the load-on-open section before it (root index, meta index, file info).
                self._tail = self._read(max(size - TRAILER_SIZE, 0), min(size, TRAILER_SIZE))
                trailer = Trailer.parse(self._tail)
                offset = trailer.load_on_open_data_offset or 0
                if 0 <= offset < size - TRAILER_SIZE:
                    self._tail = self._read(offset, size - TRAILER_SIZE - offset) + self._tail
                    self._tail_offset = offset
                else:
                    self._tail_offset = size - TRAILER_SIZE
            self._size = size
        else:
            self._size = len(self._data)
        with self._format_errors("trailer"):
            self.trailer = Trailer.parse(self._data if data is not None else self._tail)
        try:
            self.codec = self.trailer.codec
        except ValueError:
            raise HFileFormatError(source, f"unknown compression codec id {self.trailer.compression_codec}") \
                from None
        if self.codec not in READABLE_CODECS:
            raise HFileFormatError(source, f"compression codec {self.codec.name} is not supported (hoodpy reads "
                                           f"{' and '.join(c.name for c in READABLE_CODECS)})")
        self._blocks = self._load_on_open()
        self._first_rows = [self._index_row(e) for e in self._blocks]
        self._cache: OrderedDict[int, BlockCells] = OrderedDict()
        self._cache_sizes: dict[int, int] = {}
        self._cached_bytes = 0

    @classmethod
    def open(cls, file: RandomAccessFile, source: str = "<file>") -> HFileReader:
        """A reader of ``file`` that reads only the ranges it needs (see the module docstring)."""
        return cls(None, source, file=file)

    # ---- metadata ---------------------------------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count or 0

    def __len__(self) -> int:
        return self.entry_count

    @property
    def data_block_index(self) -> list[IndexEntry]:
        """The data blocks in key order (the leaf level when the index has several)."""
        return list(self._blocks)

    @property
    def meta_block_names(self) -> list[str]:
        return list(self._meta_index)

    def meta_block(self, name: str) -> bytes | None:
        """The uncompressed payload of the meta block ``name`` (None when the file has none of that name)."""
        entry = self._meta_index.get(name)
        if entry is None:
            return None
        with self._format_errors(f"meta block {name!r} at byte {entry.offset}"):
            return bytes(self._block(entry.offset, entry.size, block.META)[1])

    @property
    def schema(self) -> str | None:
        """The Avro schema (JSON) Hudi keeps in the file info of the HFiles it writes, if any."""
        value = self.file_info.get(file_info.SCHEMA)
        return None if value is None else value.decode("utf-8")

    @property
    def last_key(self) -> str | None:
        """The last cell's row, from the file info (None when the file has no cells)."""
        value = self.file_info.get(file_info.LAST_KEY)
        if not value:
            return None
        with self._format_errors("file info hfile.LASTKEY"):
            return row_of(value).decode("utf-8")

    # ---- lookups ----------------------------------------------------------------------------------------

    def get(self, key: str | bytes) -> bytes | None:
        """The value of the first cell whose row is ``key``, or None."""
        return self._get(_row(key), 0, 0)[0]

    def _get(self, row: bytes, after_block: int, after: int) -> tuple[bytes | None, int, int]:
        """(value of the first cell whose row is ``row`` at or past byte ``after`` of block ``after_block``, or
        None; the block and the offset where it ended, for the next, larger row to be searched from)."""
        b = max(bisect_left(self._first_rows, row) - 1, 0)
        start = after if b <= after_block else 0
        b = max(b, after_block)
        while b < len(self._blocks):
            cells = self._cells(b)
            with self._format_errors(f"data block at byte {self._blocks[b].offset}"):
                value, end = cells.find(row, start)
            if value is not None:
                return value, b, end
            b, start = b + 1, 0
            if b < len(self._blocks) and self._first_rows[b] > row:
                break  # K lies after this block's last row and before the next one's (fake) first key
        return None, after_block, after

    def get_many(self, keys: Iterable[str | bytes]) -> dict[str, bytes]:
        """The values of those ``keys`` that are present, looked up in key order, each searched from where the
        one before it was found (cells are sorted: a block is searched once, however many keys it holds); a
        reader of a file first reads the data blocks the keys fall in (adjacent ones in one read)."""
        found = {}
        rows = sorted({_row(k) for k in keys})
        if self._file is not None:
            self._read_ahead(sorted({max(bisect_left(self._first_rows, row) - 1, 0) for row in rows}))
        block_at, at = 0, 0
        for row in rows:
            value, block_at, at = self._get(row, block_at, at)
            if value is not None:
                found[row.decode("utf-8")] = value
        return found

    def scan(self, prefix: str | bytes = b"") -> Iterator[tuple[str, bytes]]:
        """(key, value) of every cell whose row starts with ``prefix``, in key order (all cells by default)."""
        start = _row(prefix)
        first = max(bisect_left(self._first_rows, start) - 1, 0) if start else 0
        for b in range(first, len(self._blocks)):
            cells = self._cells(b)
            with self._format_errors(f"data block at byte {self._blocks[b].offset}"):
                for i in range(bisect_left(cells, start) if start else 0, len(cells)):
                    row = cells[i]
                    if not row.startswith(start):
                        return  # rows are sorted: past the prefix's range
                    yield row.decode("utf-8"), cells.value(i)

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        return self.scan()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (str, bytes)) and self.get(key) is not None

    # ---- internals --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _format_errors(self, where: str) -> Iterator[None]:
        try:
            yield
        except (ValueError, IndexError, struct.error, UnicodeDecodeError) as e:
            raise HFileFormatError(self.source, f"{where}: {e}") from e

    def _read(self, offset: int, length: int) -> bytes:
        data = self._file.read_at(length, offset)  # type: ignore[union-attr]
        if len(data) != length:
            raise ValueError(f"read {len(data)} of the {length} bytes at byte {offset} (the file is cut short)")
        self.bytes_read += length
        return data

    def _block(self, offset: int, size: int, magic: bytes, inflating: bool = False,
               ) -> tuple[block.BlockHeader, Bytes | block.InflatingPayload]:
        """Header and payload of the block at ``offset`` (``size``: its on-disk size as its index entry
        gives it; a reader of a file reads the header first when the entry's size is short)."""
        if self._data is not None:
            data, at = self._data, offset
        elif offset >= self._tail_offset:  # the load-on-open section: read when the reader opened
            data, at = self._tail, offset - self._tail_offset
        else:
            data, at = self._raw.pop(offset, None), 0
            if data is None:
                data = self._read(offset, min(max(size, block.HEADER_SIZE), self._tail_offset - offset))
            whole = block.HEADER_SIZE + _ON_DISK_SIZE.unpack_from(data, 8)[0] if len(data) >= 12 else len(data)
            if len(data) < whole <= self._tail_offset - offset:
                data = self._read(offset, whole)
        if magic == block.DATA and bytes(data[at:at + len(block.ENCODED_DATA)]) == block.ENCODED_DATA:
            raise ValueError("encoded data blocks (DATABLKE) are not supported; Hudi never writes them")
        return block.read_block(data, at, self.codec, magic, inflating)

    def _read_ahead(self, blocks: list[int]) -> None:
        """Read the (not yet decoded) data blocks ``blocks`` (sorted indexes), each run of adjacent ones in one
        read, for :meth:`_block` to take."""
        todo = [b for b in blocks if b < len(self._blocks) and b not in self._cache]
        i = 0
        while i < len(todo):
            j = i
            while j + 1 < len(todo) and todo[j + 1] == todo[j] + 1 and \
                    self._blocks[todo[j]].offset + self._blocks[todo[j]].size == self._blocks[todo[j + 1]].offset:
                j += 1
            first, last = self._blocks[todo[i]], self._blocks[todo[j]]
            with self._format_errors(f"data blocks at bytes {first.offset}..{last.offset + last.size}"):
                data = memoryview(self._read(first.offset, last.offset + last.size - first.offset))
            for b in todo[i:j + 1]:
                entry = self._blocks[b]
                self._raw[entry.offset] = data[entry.offset - first.offset:entry.offset - first.offset + entry.size]
            i = j + 1

    def _load_on_open(self) -> list[IndexEntry]:
        t = self.trailer
        offset = t.load_on_open_data_offset or 0
        data_end = self._size - TRAILER_SIZE
        if not 0 <= offset < data_end:
            raise HFileFormatError(self.source, f"load-on-open offset {offset} lies outside the file's blocks "
                                                f"(0..{data_end})")
        with self._format_errors(f"root data index at byte {offset}"):
            header, payload = self._block(offset, 0, block.ROOT_INDEX)
            entries = parse_root_entries(payload, t.data_index_count or 0)
        offset += header.on_disk_size
        for level in range(t.index_levels - 1, 0, -1):
            magic = block.INTERMEDIATE_INDEX if level > 1 else block.LEAF_INDEX
            below: list[IndexEntry] = []
            for e in entries:
                with self._format_errors(f"{magic.decode()} index block at byte {e.offset}"):
                    below.extend(parse_non_root_entries(self._block(e.offset, e.size, magic)[1]))
            entries = below
        with self._format_errors(f"meta index at byte {offset}"):
            header, payload = self._block(offset, 0, block.ROOT_INDEX)
            self._meta_index = {e.key.decode("utf-8"): e for e in parse_root_entries(payload, t.meta_index_count or 0)}
        offset += header.on_disk_size
        with self._format_errors(f"file info at byte {offset}"):
            self.file_info = file_info.parse(self._block(offset, 0, block.FILE_INFO)[1])
            version = file_info.int_value(self.file_info.get(file_info.KEY_VALUE_VERSION))
            max_mvcc = file_info.int_value(self.file_info.get(file_info.MAX_MEMSTORE_TS_KEY))
        # Hudi's readers expect the MVCC byte on every cell; HBase writes KEY_VALUE_VERSION 0 when there is none.
        self._with_mvcc = version != 0
        if self._with_mvcc and max_mvcc:
            raise HFileFormatError(self.source, f"cells carry MVCC timestamps (MAX_MEMSTORE_TS_KEY {max_mvcc}), "
                                                f"which Hudi never writes")
        return entries

    def _index_row(self, entry: IndexEntry) -> bytes:
        with self._format_errors(f"data index key of the block at byte {entry.offset}"):
            return row_of(entry.key)

    def _cells(self, b: int) -> BlockCells:
        cells = self._cache.get(b)
        if cells is not None:
            self._cache.move_to_end(b)
            return cells
        entry = self._blocks[b]
        with self._format_errors(f"data block at byte {entry.offset}"):
            header, payload = self._block(entry.offset, entry.size, block.DATA, inflating=True)
            cells = BlockCells(payload, self._with_mvcc)
        self._cache[b] = cells
        self._cache_sizes[b] = header.uncompressed_size
        self._cached_bytes += header.uncompressed_size
        while len(self._cache) > 1 and self._cached_bytes > _CACHE_BYTES:
            evicted, _ = self._cache.popitem(last=False)
            self._cached_bytes -= self._cache_sizes.pop(evicted)
        return cells


def _row(key: str | bytes) -> bytes:
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


__all__ = ["Compression", "HFileReader"]

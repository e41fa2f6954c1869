"""Reading an HFile: point lookups by key, lookups by key prefix, and a scan of every entry in key order.

Opening reads the trailer, then the load-on-open section it points at (root data index, meta index, file
info; the root's leaf / intermediate levels when HBase wrote more than one), as Hudi's HFileReaderImpl does.
Data blocks are read and decompressed when a lookup or scan reaches them; the most recently used decoded
blocks (up to 16 MiB of them) are kept, so repeated lookups in a block decode it once.

A lookup of key K starts in the block before the first index entry whose key is >= K (an earlier block may
end with K when HBase split equal keys across blocks, and an HBase "fake" index key may be smaller than its
block's real first row) and reads forward until a row >= K.
"""

from __future__ import annotations

import contextlib
import struct
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from hoodpy.errors import HFileFormatError
from hoodpy.hfile import block, file_info
from hoodpy.hfile.block import READABLE_CODECS, Compression
from hoodpy.hfile.cell import parse_cells, row_of
from hoodpy.hfile.encoding import Bytes
from hoodpy.hfile.index import IndexEntry, parse_non_root_entries, parse_root_entries
from hoodpy.hfile.trailer import Trailer

_CACHE_BYTES = 16 * 1024 * 1024  # uncompressed data-block bytes kept decoded (16 of Hudi's 1 MiB blocks)


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

    def __init__(self, data: Bytes, source: str = "<bytes>"):
        self._data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.source = source
        with self._format_errors("trailer"):
            self.trailer = Trailer.parse(self._data)
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
        self._cache: OrderedDict[int, tuple[list[bytes], list[bytes]]] = OrderedDict()
        self._cache_sizes: dict[int, int] = {}
        self._cached_bytes = 0

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
            return bytes(block.read_block(self._data, entry.offset, self.codec, block.META)[1])

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
        row = _row(key)
        b = max(bisect_left(self._first_rows, row) - 1, 0)
        while b < len(self._blocks):
            rows, values = self._cells(b)
            i = bisect_left(rows, row)
            if i < len(rows):
                return values[i] if rows[i] == row else None
            b += 1
            if b < len(self._blocks) and self._first_rows[b] > row:
                return None  # K lies after this block's last row and before the next one's (fake) first key
        return None

    def get_many(self, keys: Iterable[str | bytes]) -> dict[str, bytes]:
        """The values of those ``keys`` that are present, looked up in key order."""
        found = {}
        for row in sorted({_row(k) for k in keys}):
            value = self.get(row)
            if value is not None:
                found[row.decode("utf-8")] = value
        return found

    def scan(self, prefix: str | bytes = b"") -> Iterator[tuple[str, bytes]]:
        """(key, value) of every cell whose row starts with ``prefix``, in key order (all cells by default)."""
        start = _row(prefix)
        first = max(bisect_left(self._first_rows, start) - 1, 0) if start else 0
        for b in range(first, len(self._blocks)):
            rows, values = self._cells(b)
            for i in range(bisect_left(rows, start) if start else 0, len(rows)):
                row = rows[i]
                if not row.startswith(start):
                    return  # rows are sorted: past the prefix's range
                yield row.decode("utf-8"), values[i]

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

    def _load_on_open(self) -> list[IndexEntry]:
        t = self.trailer
        offset = t.load_on_open_data_offset or 0
        data_end = len(self._data) - 4096
        if not 0 <= offset < data_end:
            raise HFileFormatError(self.source, f"load-on-open offset {offset} lies outside the file's blocks "
                                                f"(0..{data_end})")
        with self._format_errors(f"root data index at byte {offset}"):
            header, payload = block.read_block(self._data, offset, self.codec, block.ROOT_INDEX)
            entries = parse_root_entries(payload, t.data_index_count or 0)
        offset += header.on_disk_size
        for level in range(t.index_levels - 1, 0, -1):
            magic = block.INTERMEDIATE_INDEX if level > 1 else block.LEAF_INDEX
            below: list[IndexEntry] = []
            for e in entries:
                with self._format_errors(f"{magic.decode()} index block at byte {e.offset}"):
                    below.extend(parse_non_root_entries(block.read_block(self._data, e.offset, self.codec, magic)[1]))
            entries = below
        with self._format_errors(f"meta index at byte {offset}"):
            header, payload = block.read_block(self._data, offset, self.codec, block.ROOT_INDEX)
            self._meta_index = {e.key.decode("utf-8"): e for e in parse_root_entries(payload, t.meta_index_count or 0)}
        offset += header.on_disk_size
        with self._format_errors(f"file info at byte {offset}"):
            self.file_info = file_info.parse(block.read_block(self._data, offset, self.codec, block.FILE_INFO)[1])
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

    def _cells(self, b: int) -> tuple[list[bytes], list[bytes]]:
        cells = self._cache.get(b)
        if cells is not None:
            self._cache.move_to_end(b)
            return cells
        entry = self._blocks[b]
        with self._format_errors(f"data block at byte {entry.offset}"):
            header = block.parse_header(self._data, entry.offset)
            if header.magic == block.ENCODED_DATA:
                raise ValueError("encoded data blocks (DATABLKE) are not supported; Hudi never writes them")
            _, payload = block.read_block(self._data, entry.offset, self.codec, block.DATA)
            cells = parse_cells(payload, self._with_mvcc)
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

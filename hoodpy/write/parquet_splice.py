"""A parquet file written as a sequence of row groups, each copied byte for byte from a source file or encoded.

A copy-on-write merge rewrites a whole base file when a batch touches a few of its row groups; the row groups
it does not touch keep their rows, values and meta fields (but for the file name). :class:`SplicedParquetWriter`
copies such a group's column chunks from the old file (no decode, no encode; offsets shifted), with chosen
columns replaced by freshly encoded chunks (the new file name), and encodes the other groups with pyarrow into
a buffer whose chunks and row-group metadata it takes the same way. One footer: the schema, created_by and
column orders of pyarrow's write, the row groups, the caller's key-value metadata.

Copied chunks lose their page indexes and bloom filters (their offsets point into the old file; the bytes are
not copied): readers then read every page, as they do for pyarrow's own files. The footer is edited with
:mod:`~hoodpy.write.thrift_compact`, which keeps every field it does not know.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.write import thrift_compact as tc
from hoodpy.write.thrift_compact import BINARY, I16, I64, LIST, STRUCT, Struct

MAGIC = b"PAR1"

# Field ids of parquet.thrift.
_FMD_SCHEMA, _FMD_NUM_ROWS, _FMD_ROW_GROUPS, _FMD_KV, _FMD_ENCRYPTION = 2, 3, 4, 5, 8
_RG_COLUMNS, _RG_TOTAL_BYTES, _RG_NUM_ROWS, _RG_FILE_OFFSET, _RG_COMPRESSED, _RG_ORDINAL = 1, 2, 3, 5, 6, 7
_CC_FILE_PATH, _CC_FILE_OFFSET, _CC_META = 1, 2, 3
_CC_PAGE_INDEX = (4, 5, 6, 7)  # offset_index offset/length, column_index offset/length
_CC_CRYPTO = (8, 9)
_CMD_PATH, _CMD_UNCOMPRESSED, _CMD_COMPRESSED, _CMD_DATA_PAGE, _CMD_INDEX_PAGE, _CMD_DICT_PAGE = 3, 6, 7, 9, 10, 11
_CMD_BLOOM = (14, 15)  # bloom_filter_offset, bloom_filter_length
_SE_REPETITION, _SE_NAME, _SE_CHILDREN = 3, 4, 5


def read_footer(file) -> Struct:
    """The FileMetaData of an open parquet file (a pyarrow RandomAccessFile)."""
    size = file.size()
    tail = file.read_at(8, size - 8)
    if size < 12 or tail[4:] != MAGIC:
        raise ValueError("not a parquet file with a plain footer (encrypted or truncated)")
    length = struct.unpack("<i", tail[:4])[0]
    return tc.decode(file.read_at(length, size - 8 - length))


def row_group_rows(footer: Struct) -> list[int]:
    """Rows per row group of a file."""
    return [g.get(_RG_NUM_ROWS) for g in footer.items(_FMD_ROW_GROUPS)]


def row_group_bytes(footer: Struct) -> list[int]:
    """Uncompressed bytes per row group of a file."""
    return [g.get(_RG_TOTAL_BYTES) for g in footer.items(_FMD_ROW_GROUPS)]


def _chunk_range(chunk: Struct) -> tuple[int, int]:
    """(start, length) of a column chunk's pages in its file."""
    meta = chunk.get(_CC_META)
    starts = [meta.get(f) for f in (_CMD_DICT_PAGE, _CMD_INDEX_PAGE, _CMD_DATA_PAGE) if meta.get(f)]
    return min(starts), meta.get(_CMD_COMPRESSED)


def _moved(chunk: Struct, delta: int) -> Struct:
    """``chunk``'s metadata for its pages moved by ``delta`` bytes; page indexes and bloom filters dropped."""
    chunk = chunk.copy()
    meta = chunk.get(_CC_META)
    for f in (_CMD_DICT_PAGE, _CMD_INDEX_PAGE, _CMD_DATA_PAGE):
        if meta.get(f):
            meta.set(f, I64, meta.get(f) + delta)
    meta.drop(*_CMD_BLOOM)
    chunk.drop(*_CC_PAGE_INDEX)
    if chunk.get(_CC_FILE_OFFSET):  # deprecated; parquet-mr sets it to the chunk's start, pyarrow to 0
        chunk.set(_CC_FILE_OFFSET, I64, chunk.get(_CC_FILE_OFFSET) + delta)
    return chunk


def schema_elements(footer: Struct) -> list[bytes]:
    """A footer's schema as comparable bytes per element, the root's name and repetition left out (pyarrow
    names it "schema" and marks it required, parquet-mr names it after the Avro record: neither is read)."""
    elements = footer.items(_FMD_SCHEMA)
    root = elements[0].copy()
    root.drop(_SE_NAME, _SE_REPETITION)
    return [tc.encode(root)] + [tc.encode(e) for e in elements[1:]]


def spliceable(footer: Struct) -> bool:
    """Whether a source file's row groups can be copied: no encryption, every chunk in the file itself."""
    if footer.get(_FMD_ENCRYPTION) is not None:
        return False
    return all(c.get(_CC_FILE_PATH) is None and c.get(_CC_META) is not None
               and all(c.get(f) is None for f in _CC_CRYPTO)
               for rg in footer.items(_FMD_ROW_GROUPS) for c in rg.items(_RG_COLUMNS))


class EncodedFile:
    """Row groups pyarrow encoded into a buffer: their bytes and footer, to be taken into a spliced file."""

    def __init__(self, data: pa.Buffer):
        self.data = data
        self.footer = read_footer(pa.BufferReader(data))

    @classmethod
    def of(cls, table: pa.Table, writer_options: Callable[[pa.Table], dict], row_group_size: int) -> EncodedFile:
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, table.schema, **writer_options(table)) as writer:
            writer.write_table(table, row_group_size=row_group_size)
        return cls(sink.getvalue())

    def row_groups(self) -> list[Struct]:
        return self.footer.items(_FMD_ROW_GROUPS)


class SplicedParquetWriter:
    """One parquet file written to ``sink`` row group by row group: :meth:`copy` takes a group of a source file,
    :meth:`append` the groups of an :class:`EncodedFile`. ``template``: the footer of a pyarrow write of the
    file's schema (its schema, version, created_by and column orders become the file's)."""

    def __init__(self, sink, template: Struct):
        self._sink = sink
        self._template = template
        self._schema = schema_elements(template)
        self._groups: list[Struct] = []
        self._pos = 0
        self._write(MAGIC)
        self.copied_groups = 0

    def _write(self, data) -> None:
        self._sink.write(data)
        self._pos += len(data)

    def _group(self, source: Struct, columns: list[Struct]) -> None:
        group = source.copy()
        group.set(_RG_COLUMNS, LIST, (STRUCT, columns))
        group.set(_RG_TOTAL_BYTES, I64, sum(c.get(_CC_META).get(_CMD_UNCOMPRESSED) for c in columns))
        group.set(_RG_COMPRESSED, I64, sum(c.get(_CC_META).get(_CMD_COMPRESSED) for c in columns))
        group.set(_RG_FILE_OFFSET, I64, min(_chunk_range(c)[0] for c in columns))
        group.set(_RG_ORDINAL, I16, len(self._groups))
        self._groups.append(group)

    def copy(self, file, footer: Struct, index: int, replaced: Mapping[int, EncodedFile] | None = None) -> None:
        """Row group ``index`` of the open source ``file`` (its ``footer``), its chunks copied byte for byte but
        for the columns in ``replaced``: those take the first chunk of the given encoded one-column file."""
        replaced = replaced or {}
        source = footer.items(_FMD_ROW_GROUPS)[index]
        columns: list[Struct] = []
        run: list[tuple[Struct, int, int]] = []  # source chunks adjacent in the file: read and written at once

        def flush() -> None:
            if not run:
                return
            start = run[0][1]
            end = run[-1][1] + run[-1][2]
            at = self._pos
            self._write(file.read_at(end - start, start))
            columns.extend(_moved(c, at - start) for c, _, _ in run)
            run.clear()

        for j, chunk in enumerate(source.items(_RG_COLUMNS)):
            if j in replaced:
                flush()
                encoded = replaced[j]
                if schema_elements(encoded.footer)[1:] != [self._leaf(chunk)]:
                    raise ValueError("a replacement chunk of another parquet type than the column's")
                fresh = encoded.row_groups()[0].items(_RG_COLUMNS)[0]
                start, length = _chunk_range(fresh)
                at = self._pos
                self._write(encoded.data.slice(start, length))
                columns.append(_moved(fresh, at - start))
                continue
            start, length = _chunk_range(chunk)
            if run and run[-1][1] + run[-1][2] != start:
                flush()
            run.append((chunk, start, length))
        flush()
        self._group(source, columns)
        self.copied_groups += 1

    def _leaf(self, chunk: Struct) -> bytes:
        """The schema element of a top-level column's chunk (replaced columns are top-level)."""
        path = chunk.get(_CC_META).items(_CMD_PATH)
        for element in self._template.items(_FMD_SCHEMA)[1:]:
            if len(path) == 1 and element.get(_SE_NAME) == path[0] and element.get(_SE_CHILDREN) is None:
                return tc.encode(element)
        raise ValueError(f"no top-level column {path} in the file's schema")

    def append(self, *parts: EncodedFile) -> None:
        """Every row group of the encoded ``parts``, their bytes as pyarrow wrote them. Several parts: the same rows'
        columns split in file order (encoded side by side), each group of the file taking its chunks from each
        part's group in turn; a column's chunk is encoded alone, so the bytes are those of one encoding."""
        if len(parts) == 1:
            if schema_elements(parts[0].footer) != self._schema:  # its pages would not decode under the file's schema
                raise ValueError("encoded row groups of another parquet schema than the file's")
        elif [e for p in parts for e in schema_elements(p.footer)[1:]] != self._schema[1:]:
            raise ValueError("encoded column parts that do not make up the file's parquet schema in order")
        groups = [p.row_groups() for p in parts]
        if len({len(g) for g in groups}) != 1:
            raise ValueError("encoded column parts of different row groups")
        for same in zip(*groups):
            if len({g.get(_RG_NUM_ROWS) for g in same}) != 1:
                raise ValueError("encoded column parts of different row groups")
            columns: list[Struct] = []
            for part, group in zip(parts, same):
                chunks = group.items(_RG_COLUMNS)
                ranges = [_chunk_range(c) for c in chunks]
                start = min(s for s, _ in ranges)
                end = max(s + n for s, n in ranges)
                at = self._pos
                self._write(part.data.slice(start, end - start))
                columns.extend(_moved(c, at - start) for c in chunks)
            self._group(same[0], columns)

    @property
    def num_rows(self) -> int:
        return sum(g.get(_RG_NUM_ROWS) for g in self._groups)

    def close(self, key_value: Mapping[bytes, bytes]) -> None:
        """Write the footer (``key_value``: its key-value metadata) and the trailing magic."""
        footer = self._template.copy()
        footer.set(_FMD_NUM_ROWS, I64, self.num_rows)
        footer.set(_FMD_ROW_GROUPS, LIST, (STRUCT, self._groups))
        if key_value:
            footer.set(_FMD_KV, LIST, (STRUCT, [Struct({1: (BINARY, k), 2: (BINARY, v)})
                                                for k, v in key_value.items()]))
        else:
            footer.drop(_FMD_KV)
        data = tc.encode(footer)
        self._write(data)
        self._write(struct.pack("<i", len(data)) + MAGIC)


def template_footer(schema: pa.Schema, writer_options: dict) -> Struct:
    """The footer pyarrow writes for ``schema`` with ``writer_options`` and no rows."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, **writer_options):
        pass
    footer = read_footer(pa.BufferReader(sink.getvalue()))
    footer.drop(_FMD_KV)
    return footer


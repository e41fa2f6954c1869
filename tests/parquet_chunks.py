"""The raw bytes and row-group bounds of a parquet file's column chunks, and which row groups a test decodes: what a
spliced merge or compaction copies (tests of hoodpy.write.parquet_splice)."""

from __future__ import annotations

import pyarrow.parquet as pq


def chunk_bytes(path: str, group: int) -> dict[str, bytes]:
    """Column path -> the bytes of its chunk in row group ``group`` of the file at ``path``."""
    meta = pq.ParquetFile(path).metadata.row_group(group)
    with open(path, "rb") as f:
        data = f.read()
    out = {}
    for j in range(meta.num_columns):
        c = meta.column(j)
        start = min(o for o in (c.dictionary_page_offset, c.data_page_offset) if o)
        out[c.path_in_schema] = data[start:start + c.total_compressed_size]
    return out


def group_bounds(path: str) -> list[tuple[int, int]]:
    """(first row, end row) of each row group of the file at ``path``."""
    meta = pq.ParquetFile(path).metadata
    out, first = [], 0
    for i in range(meta.num_row_groups):
        out.append((first, first + meta.row_group(i).num_rows))
        first += meta.row_group(i).num_rows
    return out


def spy_group_reads(monkeypatch) -> list[int]:
    """The indices of the row groups read through ``pq.ParquetFile.read_row_group`` from now on (SplitRead reads
    each group it merges so), in order."""
    reads = []
    original = pq.ParquetFile.read_row_group

    def spy(self, i, *args, **kwargs):
        reads.append(i)
        return original(self, i, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", spy)
    return reads

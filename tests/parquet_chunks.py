"""The raw bytes of a parquet file's column chunks: what a spliced merge copies (tests of hoodpy.write.parquet_splice)."""

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

"""hoodie.parquet.compression.codec: zstd by default, every Hudi codec name accepted, gzip at Java's level."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.meta_fields import META_COLUMNS, RECORD_KEY
from hoodpy.write.base_file import BaseFileOptions, encode_parquet, footer_metadata

KEY = StorageConfig.PARQUET_COMPRESSION_CODEC.key


def _rows(n: int = 2000) -> pa.Table:
    keys = pa.array([f"k{i:06d}" for i in range(n)])
    meta = {c: pa.nulls(n, pa.string()) for c in META_COLUMNS}
    meta[RECORD_KEY] = keys
    return pa.table({**meta, "v": pa.array([f"value {i % 37} of a text" for i in range(n)])})


def _encode(options: BaseFileOptions, table: pa.Table) -> bytes:
    sink = io.BytesIO()
    encode_parquet(sink, table, options, footer_metadata(table.column(RECORD_KEY).combine_chunks(),
                                                          BaseFileOptions(bloom_num_entries=100)))
    return sink.getvalue()


def _codecs(data: bytes) -> set[str]:
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    return {meta.row_group(g).column(c).compression for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)}


def test_default_codec_is_zstd():
    options = BaseFileOptions.from_config(HoodieConfig())
    assert options.compression == "zstd"
    assert _codecs(_encode(options, _rows())) == {"ZSTD"}


@pytest.mark.parametrize(("name", "footer"), [
    ("gzip", "GZIP"), ("GZIP", "GZIP"), ("snappy", "SNAPPY"), ("Zstd", "ZSTD"), ("lz4", "LZ4"),
    ("lz4_raw", "LZ4"), ("brotli", "BROTLI"), ("uncompressed", "UNCOMPRESSED"), ("none", "UNCOMPRESSED"),
])
def test_every_hudi_codec_name_is_written(name, footer):
    options = BaseFileOptions.from_config(HoodieConfig({KEY: name}))
    data = _encode(options, _rows())
    assert _codecs(data) == {footer}
    assert pq.read_table(io.BytesIO(data)).equals(_rows().replace_schema_metadata(None))


def test_gzip_is_written_at_java_default_level_6():
    table = _rows(20000)
    ours = _encode(BaseFileOptions(compression="gzip"), table)
    for level, expect_equal in ((6, True), (9, False), (1, False)):
        sink = io.BytesIO()
        pq.write_table(table.replace_schema_metadata(None), sink, compression="gzip", compression_level=level,
                       store_schema=False)
        # Same codec and level: the compressed column chunks are the same bytes.
        theirs = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata.row_group(0)
        mine = pq.ParquetFile(io.BytesIO(ours)).metadata.row_group(0)
        v = table.schema.get_field_index("v")
        same = mine.column(v).total_compressed_size == theirs.column(v).total_compressed_size
        assert same == expect_equal, level


@pytest.mark.parametrize("name", ["gzipp", "zip", ""])
def test_unknown_codec_is_rejected_with_the_accepted_names(name):
    with pytest.raises(InvalidConfigError) as e:
        BaseFileOptions.from_config(HoodieConfig({KEY: name}))
    assert KEY in str(e.value) and repr(name) in str(e.value)
    assert "zstd, snappy, gzip" in str(e.value)


def test_lzo_names_the_missing_writer():
    with pytest.raises(InvalidConfigError, match="LZO"):
        BaseFileOptions.from_config(HoodieConfig({KEY: "LZO"}))

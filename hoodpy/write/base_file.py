"""Writing one base file: meta columns first, Hudi's footer (bloom filter, min/max record key).

Runs in executors; pure pyarrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.config import HoodieConfig
from hoodpy.config.index import IndexConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.index.bloom_filter import (
    BLOOM_TYPE_DYNAMIC_V0,
    FOOTER_BLOOM_FILTER_KEY,
    FOOTER_BLOOM_TYPE_KEY,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
)
from hoodpy.keygen import KeyGenerator, virtual_keys
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage


@dataclass(frozen=True)
class BaseFileOptions:
    """How base files are written; plain values so the options ship to executors."""

    compression: str = "gzip"
    block_size: int = 125829120
    bloom_num_entries: int = 60000
    bloom_fpp: float = 1e-9
    bloom_max_entries: int = 100000
    # The key generator of a table with virtual keys (hoodie.populate.meta.fields=false): its files keep
    # the meta columns null but for the file name, and their footers no bloom filter or key range, as
    # Java Hudi writes them; readers compute keys with it. None: keys are stored.
    virtual_keys: KeyGenerator | None = None

    @classmethod
    def from_config(cls, config: HoodieConfig) -> BaseFileOptions:
        return cls(
            compression=config.get(StorageConfig.PARQUET_COMPRESSION_CODEC),
            block_size=config.get(StorageConfig.PARQUET_BLOCK_SIZE),
            bloom_num_entries=config.get(IndexConfig.BLOOM_NUM_ENTRIES),
            bloom_fpp=config.get(IndexConfig.BLOOM_FPP),
            bloom_max_entries=config.get(IndexConfig.BLOOM_MAX_ENTRIES),
            virtual_keys=virtual_keys(config),
        )


def footer_metadata(keys: pa.Array, options: BaseFileOptions, bloom: BloomFilter | None = None) -> dict[bytes, bytes]:
    """Hudi's footer entries for the record keys of a file, in file order; ``bloom`` already holds them."""
    if bloom is None:
        bloom = BloomFilter.create(options.bloom_num_entries, options.bloom_fpp, options.bloom_max_entries)
        bloom.add_all(keys)
    meta = {
        FOOTER_BLOOM_FILTER_KEY.encode(): bloom.serialize().encode(),
        FOOTER_BLOOM_TYPE_KEY.encode(): BLOOM_TYPE_DYNAMIC_V0.encode(),
    }
    if len(keys):
        bounds = pc.min_max(keys)
        meta[FOOTER_MIN_RECORD_KEY.encode()] = bounds["min"].as_py().encode()
        meta[FOOTER_MAX_RECORD_KEY.encode()] = bounds["max"].as_py().encode()
    return meta


def resumed_bloom(footer: Mapping[bytes, bytes], keys_in_file: int, options: BaseFileOptions) -> BloomFilter | None:
    """The bloom filter of an existing base file's ``keys_in_file`` keys, ready to take more keys (see
    :meth:`BloomFilter.resume`); None when its footer holds no filter sized as ``options`` size new ones."""
    text = footer.get(FOOTER_BLOOM_FILTER_KEY.encode())
    if text is None or footer.get(FOOTER_BLOOM_TYPE_KEY.encode()) != BLOOM_TYPE_DYNAMIC_V0.encode():
        return None
    return BloomFilter.resume(text, keys_in_file, options.bloom_num_entries, options.bloom_fpp,
                              options.bloom_max_entries)


def write_base_file(storage: Storage, rel_path: str, table: pa.Table, options: BaseFileOptions,
                    bloom: BloomFilter | None = None) -> int:
    """Write ``table`` (meta columns first) to ``rel_path``; returns the file size in bytes. ``bloom``, when
    given, already holds the table's record keys in order."""
    assert tuple(table.schema.names[: len(META_COLUMNS)]) == META_COLUMNS, table.schema.names[:5]
    if options.virtual_keys is not None:
        footer: dict[bytes, bytes] = {}
        for name in (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH):
            table = table.set_column(table.schema.get_field_index(name), name, pa.nulls(table.num_rows, pa.string()))
    else:
        footer = footer_metadata(table.column(RECORD_KEY).combine_chunks(), options, bloom)
    table = table.replace_schema_metadata(None)
    full = storage.full_path(rel_path)
    storage.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
    rows_per_group = _rows_per_row_group(table, options.block_size)
    with storage.fs.open_output_stream(full) as sink:
        with pq.ParquetWriter(sink, table.schema, compression=options.compression, store_schema=False,
                              use_dictionary=dictionary_columns(table)) as writer:
            writer.write_table(table, row_group_size=rows_per_group)
            # With store_schema=False pyarrow drops the schema's metadata: add the footer entries explicitly.
            if footer:
                writer.add_key_value_metadata(footer)
    return storage.fs.get_file_info(full).size


_DICTIONARY_SAMPLE_ROWS = 4096
_DICTIONARY_MAX_DISTINCT = 0.5


def dictionary_columns(table: pa.Table) -> list[str]:
    """Columns worth dictionary encoding: those with repeating values in a sample of their rows.

    Dictionary encoding a column of distinct values (sequence numbers, record keys, comments) builds a
    dictionary until the page limit, then falls back to plain: wasted work (~40% of a base file's write
    time for TPC-H lineitem) and a larger file.
    """
    sample = table.slice(0, _DICTIONARY_SAMPLE_ROWS)
    if sample.num_rows == 0:
        return table.column_names
    out = []
    for name, column in zip(sample.column_names, sample.columns, strict=True):
        if pa.types.is_nested(column.type) or \
                pc.count_distinct(column).as_py() <= _DICTIONARY_MAX_DISTINCT * sample.num_rows:
            out.append(name)
    return out


def _rows_per_row_group(table: pa.Table, block_size: int) -> int:
    # Arrow's in-memory size overstates encoded size; it still keeps row groups near the block size.
    if table.num_rows == 0:
        return 1
    per_row = max(1, table.nbytes // table.num_rows)
    return max(1, block_size // per_row)

"""Writing one base file: meta columns first, Hudi's footer (bloom filter, min/max record key).

Runs in executors; pure pyarrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.arrow_rows import null_columns
from hoodpy.config import HoodieConfig
from hoodpy.config.index import IndexConfig
from hoodpy.config.storage import StorageConfig
from hoodpy.file_group.markers import base_file_marker, confirm_marked
from hoodpy.index.bloom_filter import (
    BLOOM_TYPE_DYNAMIC_V0,
    FOOTER_BLOOM_FILTER_KEY,
    FOOTER_BLOOM_TYPE_KEY,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    BloomFilter,
)
from hoodpy.keygen import KeyGenerator, virtual_keys
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.parquet_splice import EncodedFile, SplicedParquetWriter, read_footer, row_group_bytes, \
    row_group_rows, schema_elements, spliceable, template_footer


# pyarrow's (codec, level) per Hudi codec name. Levels are Java's: Hadoop's gzip runs zlib at its default level
# 6 (pyarrow's default, 9, writes 6x slower for 1% smaller files); parquet-mr's zstd level is 3 (pyarrow: 1).
# pyarrow writes "lz4" as parquet's LZ4_RAW, which parquet-mr reads from 1.13 (Spark 3.5) on.
_PYARROW_CODECS = {
    "zstd": ("zstd", 3), "gzip": ("gzip", 6), "snappy": ("snappy", None), "lz4": ("lz4", None),
    "lz4_raw": ("lz4", None), "brotli": ("brotli", None), "uncompressed": ("none", None),
}


@dataclass(frozen=True)
class BaseFileOptions:
    """How base files are written; plain values so the options ship to executors."""

    compression: str = "zstd"  # a Hudi codec name, as hoodie.parquet.compression.codec parses it
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


def footer_metadata(keys: pa.Array | pa.ChunkedArray, options: BaseFileOptions,
                    bloom: BloomFilter | None = None) -> dict[bytes, bytes]:
    """Hudi's footer entries for the record keys of a file, in file order; ``bloom`` already holds them."""
    if bloom is None:
        bloom = new_bloom(options)
        bloom.add_all(keys)
    bounds = pc.min_max(keys) if len(keys) else None
    return footer_entries(bloom, *((bounds["min"].as_py(), bounds["max"].as_py()) if bounds else (None, None)))


def new_bloom(options: BaseFileOptions) -> BloomFilter:
    return BloomFilter.create(options.bloom_num_entries, options.bloom_fpp, options.bloom_max_entries)


def footer_entries(bloom: BloomFilter, min_key: str | None, max_key: str | None) -> dict[bytes, bytes]:
    """Hudi's footer entries: the bloom filter of a file's keys and (for a file with rows) its key range."""
    meta = {
        FOOTER_BLOOM_FILTER_KEY.encode(): bloom.serialize().encode(),
        FOOTER_BLOOM_TYPE_KEY.encode(): BLOOM_TYPE_DYNAMIC_V0.encode(),
    }
    if min_key is not None:
        meta[FOOTER_MIN_RECORD_KEY.encode()] = min_key.encode()
        meta[FOOTER_MAX_RECORD_KEY.encode()] = max_key.encode()
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
        table = _without_keys(table)
    else:
        footer = footer_metadata(table.column(RECORD_KEY), options, bloom)  # chunked: no copy of the keys
    full = _create_parent(storage, rel_path)
    with storage.fs.open_output_stream(full) as sink:
        encode_parquet(sink, table, options, footer)
    return _closed_size(storage, rel_path)


def _without_keys(table: pa.Table) -> pa.Table:
    """A virtual-keys table's rows as Java Hudi writes them: meta columns null but for the file name."""
    return null_columns(table, (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH))


def _create_parent(storage: Storage, rel_path: str) -> str:
    """The full path of a new base file, marked (:mod:`~hoodpy.file_group.markers`) and its folder made."""
    marker = base_file_marker(rel_path)
    if marker is not None:
        storage.write_bytes(marker, b"")
    full = storage.full_path(rel_path)
    storage.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
    return full


def _closed_size(storage: Storage, rel_path: str) -> int:
    """The size of the base file just closed at ``rel_path``; the file is deleted, and the task fails, when its
    write was aborted or rolled back meanwhile (its marker is gone: no commit will name the file)."""
    confirm_marked(storage, base_file_marker(rel_path), [rel_path])
    return storage.fs.get_file_info(storage.full_path(rel_path)).size


def encode_parquet(sink, table: pa.Table, options: BaseFileOptions, footer: dict[bytes, bytes]) -> None:
    """``table`` as a base file's parquet bytes (codec, dictionaries, row groups) with ``footer`` entries."""
    table = table.replace_schema_metadata(None)
    with _parquet_writer(sink, table, options) as writer:
        writer.write_table(table, row_group_size=_rows_per_row_group(table, options.block_size))
        # With store_schema=False pyarrow drops the schema's metadata: add the footer entries explicitly.
        if footer:  # none with virtual keys, as Java writes them
            writer.add_key_value_metadata(footer)


def _parquet_writer(sink, first_rows: pa.Table, options: BaseFileOptions) -> pq.ParquetWriter:
    """A base file's parquet writer: the table's codec, dictionaries for the columns ``first_rows`` (a file's
    first rows, metadata-free schema) show repeating."""
    return pq.ParquetWriter(sink, first_rows.schema, **_writer_options(options, dictionary_columns(first_rows)))


def _writer_options(options: BaseFileOptions, dictionary: list[str] | bool) -> dict:
    codec, level = _PYARROW_CODECS[options.compression]
    return dict(compression=codec, compression_level=level, store_schema=False, use_dictionary=dictionary)


class BaseFileWriter:
    """One base file written row group by row group as its rows arrive (meta columns first, in file order).

    Only the rows of the row group being filled stay in memory, and what the footer needs: the bloom filter
    (keys go in as they arrive, in file order) and the min and max key, added at :meth:`close`. The footer,
    dictionaries and rows are those :func:`write_base_file` writes for the same rows; row groups hold
    ``block_size`` bytes of Arrow rows each, as there. ``hash_keys=False``: the caller hands :meth:`close` a
    bloom filter already holding the file's keys (a merge continues the old file's) and none is built here.
    ``min_fill``: a row group is written once that share of ``block_size`` is pending (a merge hands over the
    old file's row groups, a little smaller or larger than the block size after deletes and updates: each is
    encoded as it comes rather than waiting for the next to fill the group up).
    ``constants``: columns the caller knows hold one value on every row of the file (a bulk_insert's commit time,
    partition path, file name), written as one-entry dictionary arrays: the encoder then writes a run of zeros
    per page instead of hashing millions of equal strings into the dictionary. The parquet schema, values,
    encodings and statistics are those the string column gives.
    """

    def __init__(self, storage: Storage, rel_path: str, options: BaseFileOptions, hash_keys: bool = True,
                 min_fill: float = 1.0, constants: Mapping[str, str] | None = None):
        self._min_fill = min_fill
        # Virtual keys null the meta columns but for the file name: those are no longer the caller's values.
        self._constants = {c: v for c, v in (constants or {}).items()
                           if options.virtual_keys is None or c == FILE_NAME}
        self._constant_bytes = sum(len(v.encode()) for v in self._constants.values())  # per row, as strings
        self._storage = storage
        self._rel_path = rel_path
        self._full = _create_parent(storage, rel_path)
        self._options = options
        self._sink = storage.fs.open_output_stream(self._full)
        self._writer: pq.ParquetWriter | None = None
        self._pending: list[pa.Table] = []  # rows not yet in a row group
        self._pending_rows = 0
        self._pending_bytes = 0
        self._keyed = options.virtual_keys is None
        self._bloom = new_bloom(options) if self._keyed and hash_keys else None
        self._min: str | None = None
        self._max: str | None = None
        self.num_rows = 0

    def write(self, rows: pa.Table) -> None:
        """Append ``rows``; a row group is written each time ``block_size`` bytes of rows are pending."""
        assert tuple(rows.schema.names[: len(META_COLUMNS)]) == META_COLUMNS, rows.schema.names[:5]
        if not rows.num_rows:
            return
        if not self._keyed:
            rows = _without_keys(rows)
        else:
            keys = rows.column(RECORD_KEY).combine_chunks()
            if self._bloom is not None:
                self._bloom.add_all(keys)
            bounds = pc.min_max(keys)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            self._min = low if self._min is None else min(self._min, low)
            self._max = high if self._max is None else max(self._max, high)
        # Summed as rows arrive: the size of all pending rows, taken anew per write, cost ~10% of a task. Taken
        # before the constant columns shrink to dictionaries, so row groups hold the rows they would as strings.
        self._pending_bytes += rows.nbytes
        self._pending.append(_with_constants(rows, self._constants).replace_schema_metadata(None))
        self._pending_rows += rows.num_rows
        self.num_rows += rows.num_rows
        self._write_row_groups(final=False)

    def _write_row_groups(self, final: bool) -> None:
        while self._pending_rows:
            group = _rows_per_group(self._pending_bytes, self._pending_rows, self._options.block_size)
            # Dictionaries are chosen from a file's first rows: the writer opens once there are enough.
            if not final and (self._pending_rows < group * self._min_fill or (
                    self._writer is None and self._pending_rows < _DICTIONARY_SAMPLE_ROWS)):
                return
            pending = pa.concat_tables(self._pending)
            if self._writer is None:
                self._writer = _parquet_writer(self._sink, pending, self._options)
            take = min(group, pending.num_rows)
            self._writer.write_table(pending.slice(0, take), row_group_size=take)
            rest = pending.slice(take) if take < pending.num_rows else None
            self._pending = [rest] if rest is not None else []
            self._pending_rows -= take
            # The rest's bytes as write() counts them: its constant columns' string bytes, not their indices'.
            self._pending_bytes = rest.nbytes + rest.num_rows * self._constant_bytes if rest is not None else 0

    def close(self, bloom: BloomFilter | None = None) -> int:
        """Write the pending rows and Hudi's footer (with ``bloom``, when given, as its filter: it must hold the
        written keys); returns the file size in bytes."""
        if not self.num_rows:
            raise ValueError("a base file needs at least one row")
        self._write_row_groups(final=True)
        if self._keyed:  # no footer entries with virtual keys, as Java writes them
            bloom = bloom if bloom is not None else self._bloom
            if bloom is None:
                raise ValueError("hash_keys=False: close needs the file's bloom filter")
            self._writer.add_key_value_metadata(footer_entries(bloom, self._min, self._max))
        self._writer.close()
        self._sink.close()
        return _closed_size(self._storage, self._rel_path)

    def discard(self) -> None:
        """Drop the unfinished file (a failed task)."""
        if self._writer is not None:
            try:  # closed now, not by the garbage collector once the sink is gone
                self._writer.close()
            except Exception:  # noqa: BLE001 - the file goes anyway; the task's own error is the one to report
                pass
        self._sink.close()
        self._storage.fs.delete_file(self._full)


def _with_constants(rows: pa.Table, constants: Mapping[str, str]) -> pa.Table:
    """``rows`` with each column of ``constants`` (name: the value every row holds) as a one-entry dictionary
    array of that value."""
    for name, value in constants.items():
        i = rows.schema.get_field_index(name)
        if i >= 0:
            rows = rows.set_column(i, name, one_value(value, rows.num_rows))
    return rows


def one_value(value: str, n: int) -> pa.DictionaryArray:
    """``value`` on ``n`` rows as a dictionary array: one dictionary entry, ``n`` zero indices."""
    zeros = _ZEROS[0]
    if len(zeros) < n:
        zeros = _ZEROS[0] = pa.array(np.zeros(max(n, 2 * len(zeros)), dtype=np.int32))
    return pa.DictionaryArray.from_arrays(zeros.slice(0, n), pa.array([value], pa.string()), safe=False)


# Zero indices shared by every one-entry dictionary array (immutable; sliced per use).
_ZEROS = [pa.array(np.zeros(0, dtype=np.int32))]


class SplicedBaseFile:
    """A merged base file whose untouched row groups are copied from the old one, chunk bytes as they are but for
    the file name column (every row gets the new file's name), and whose other rows are encoded as
    :class:`BaseFileWriter` encodes them (see :mod:`~hoodpy.write.parquet_splice`). :meth:`put` takes, in file
    order, either the index of an old row group to copy, rows to encode (a merged group becomes one row group;
    inserts are cut into ``block_size`` groups), or (index, columns, sample): old group ``index`` copied but for
    the ``columns`` given (its merged rows of them), which are encoded (``sample``: rows of the group, to choose
    dictionary columns by when none were chosen yet). Keys are not read here: the caller hands :meth:`close` the
    footer entries. Open with :meth:`of`, which says whether the old file can be copied from. ``executor``: where
    a group's columns are encoded side by side (pyarrow's writer encodes one column at a time); None: in turn.
    """

    def __init__(self, storage: Storage, rel_path: str, options: BaseFileOptions, schema: pa.Schema, source,
                 footer, template, executor: Executor | None = None):
        self._storage, self._options, self._schema = storage, options, schema
        self._source, self._footer = source, footer
        self._file_name = schema.get_field_index(FILE_NAME)
        self._name = rel_path.rsplit("/", 1)[-1]
        self._rel_path, self._template = rel_path, template
        self._full = self._sink = None  # created by the first put: of() may find the merge does not splice
        self._writer: SplicedParquetWriter | None = None
        self._dictionary: list[str] | None = None  # chosen from the first rows encoded, as BaseFileWriter does
        self._executor = executor

    @classmethod
    def of(cls, storage: Storage, rel_path: str, options: BaseFileOptions, schema: pa.Schema,
           old_path: str, executor: Executor | None = None) -> SplicedBaseFile | None:
        """The spliced writer of a merge of ``old_path`` into ``rel_path``; None when the old file's row groups
        cannot be copied: its parquet schema is not the one a write of ``schema`` has (schema evolution, a file
        another writer annotated otherwise), or it is encrypted or refers to other files. Virtual keys: the
        caller's to exclude (the stored meta columns differ)."""
        assert options.virtual_keys is None
        template = template_footer(schema.remove_metadata(), _writer_options(options, True))
        source = storage.fs.open_input_file(storage.full_path(old_path))
        try:
            footer = read_footer(source)
            if not spliceable(footer) or schema_elements(footer) != schema_elements(template):
                source.close()
                return None
        except BaseException:
            source.close()
            raise
        return cls(storage, rel_path, options, schema, source, footer, template, executor)

    @property
    def group_rows(self) -> list[int]:
        """Rows per row group of the old file."""
        return row_group_rows(self._footer)

    @property
    def group_bytes(self) -> list[int]:
        """Uncompressed bytes per row group of the old file."""
        return row_group_bytes(self._footer)

    @property
    def copied_groups(self) -> int:
        return self._writer.copied_groups if self._writer is not None else 0

    def put(self, item: int | pa.Table | tuple[int, pa.Table, pa.Table]) -> None:
        if self._writer is None:
            self._full = _create_parent(self._storage, self._rel_path)
            self._sink = self._storage.fs.open_output_stream(self._full)
            self._writer = SplicedParquetWriter(self._sink, self._template)
        if isinstance(item, int):
            self._copy(item)
            return
        if isinstance(item, tuple):  # (old group, its merged rows of the columns to encode, a sample of its rows)
            index, columns, sample = item
            if self._dictionary is None:
                self._dictionary = dictionary_columns(sample)
            self._copy(index, columns)
            return
        rows = item.replace_schema_metadata(None)
        if self._dictionary is None:
            self._dictionary = dictionary_columns(rows)
        group = _rows_per_group(rows.nbytes, rows.num_rows, self._options.block_size)
        # A merged old group stays one group (a little larger or smaller than the block size after the merge).
        size = rows.num_rows if rows.num_rows <= group * 1.25 else group
        halves = _column_halves(rows) if self._executor is not None else [rows]
        self._writer.append(*self._encoded([(part, self._part_dictionary(part)) for part in halves], size))

    def _part_dictionary(self, part: pa.Table) -> list[str]:
        return [c for c in part.column_names if c in self._dictionary]

    def _encoded(self, parts: list[tuple[pa.Table, list[str] | bool]], rows: int) -> list[EncodedFile]:
        """Each (table, dictionary columns) encoded in ``rows``-row groups, side by side in the executor (the
        first in this thread) when there is one."""
        def encode(part: tuple[pa.Table, list[str] | bool]) -> EncodedFile:
            return EncodedFile.of(part[0], lambda _: _writer_options(self._options, part[1]), rows)

        if self._executor is None or len(parts) == 1:
            return [encode(p) for p in parts]
        later = [self._executor.submit(encode, p) for p in parts[1:]]
        return [encode(parts[0])] + [f.result() for f in later]

    def _copy(self, index: int, columns: pa.Table | None = None) -> None:
        """Old row group ``index`` copied, its file name column encoded anew, and the top-level ``columns``
        (rows of the group) encoded in place of theirs."""
        n = self.group_rows[index]
        if not n:  # an empty group of the old file (pyarrow cannot encode a 0-row chunk): no rows to keep
            return
        # The new name on every row: a one-entry dictionary, so the chunk is encoded without n strings.
        names = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([self._name]))
        parts: dict[int, tuple[pa.Table, list[str] | bool]] = {self._file_name: (pa.table({FILE_NAME: names}), True)}
        if columns is not None:
            if columns.num_rows != n:
                raise ValueError(f"{columns.num_rows} rows for a copied row group of {n}")
            leaves = _leaf_indices(self._schema)
            for name in columns.column_names:
                if name == FILE_NAME:
                    continue
                one = columns.select([name]).replace_schema_metadata(None)
                parts[leaves[name]] = (one, [name] if name in self._dictionary else False)
        replaced = dict(zip(parts, self._encoded(list(parts.values()), n), strict=True))
        self._writer.copy(self._source, self._footer, index, replaced)

    def close(self, footer: dict[bytes, bytes]) -> int:
        """Write the footer with ``footer`` entries (Hudi's bloom filter and key range); the file size."""
        if self._writer is None or not self._writer.num_rows:
            raise ValueError("a base file needs at least one row")
        self._writer.close(footer)
        self._sink.close()
        self._source.close()
        return _closed_size(self._storage, self._rel_path)

    def discard(self) -> None:
        """Drop the unfinished file (a failed task), or close the old file when nothing was written."""
        self._source.close()
        if self._sink is not None:
            self._sink.close()
            self._storage.fs.delete_file(self._full)


def _column_halves(rows: pa.Table) -> list[pa.Table]:
    """``rows``' columns in two runs (in order) of about half the bytes each, to encode side by side; one run for
    a table of one column."""
    sizes = np.cumsum([c.nbytes for c in rows.columns])
    if rows.num_columns < 2 or not sizes[-1]:
        return [rows]
    cut = min(max(int(np.searchsorted(sizes, sizes[-1] / 2)) + 1, 1), rows.num_columns - 1)
    names = rows.column_names
    return [rows.select(names[:cut]), rows.select(names[cut:])]


def _leaf_count(t: pa.DataType) -> int:
    """Parquet leaf columns of an Arrow type."""
    if pa.types.is_struct(t):
        return sum(_leaf_count(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaf_count(t.value_type)
    return 1


def _leaf_indices(schema: pa.Schema) -> dict[str, int]:
    """Per top-level column, the index of its (first) column chunk in a row group."""
    out, at = {}, 0
    for f in schema:
        out[f.name] = at
        at += _leaf_count(f.type)
    return out


_DICTIONARY_SAMPLE_ROWS = 4096
_DICTIONARY_MAX_DISTINCT = 0.5
# An ascending number column with more distinct values than this share of the sample is written plain.
_SORTED_MIN_DISTINCT = 1 / 16


def dictionary_columns(table: pa.Table) -> list[str]:
    """Columns worth dictionary encoding: those with repeating values in a sample of their rows, but for
    ascending numbers with many values.

    Dictionary encoding a column of distinct values (sequence numbers, record keys, comments) builds a
    dictionary until the page limit, then falls back to plain: wasted work (~40% of a base file's write
    time for TPC-H lineitem) and a larger file. An ascending number column (ids, order keys, event times) with
    repeats is no better served: its plain values compress to little (runs of equal and near values), its
    dictionary of every value is large and slower to build (TPC-H's l_orderkey: 3x the encoding CPU, 4x the
    bytes).
    """
    sample = table.slice(0, _DICTIONARY_SAMPLE_ROWS)
    if sample.num_rows == 0:
        return table.column_names
    out = []
    for name, column in zip(sample.column_names, sample.columns, strict=True):
        if pa.types.is_nested(column.type) or pa.types.is_dictionary(column.type):
            out.append(name)
            continue
        distinct = pc.count_distinct(column).as_py()
        if distinct <= _DICTIONARY_MAX_DISTINCT * sample.num_rows and not (
                distinct > _SORTED_MIN_DISTINCT * sample.num_rows and _ascending_numbers(column)):
            out.append(name)
    return out


def _ascending_numbers(column: pa.ChunkedArray) -> bool:
    """Whether ``column`` holds integers, dates or timestamps in non-decreasing order (nulls aside)."""
    t = column.type
    if not (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)) or len(column) < 2:
        return False
    values = column.combine_chunks()
    return bool(pc.all(pc.greater_equal(values.slice(1), values.slice(0, len(values) - 1))).as_py())


def _rows_per_row_group(table: pa.Table, block_size: int) -> int:
    # Arrow's in-memory size overstates encoded size; it still keeps row groups near the block size.
    return _rows_per_group(table.nbytes, table.num_rows, block_size) if table.num_rows else 1


def _rows_per_group(nbytes: int, num_rows: int, block_size: int) -> int:
    return max(1, block_size // max(1, nbytes // num_rows))

"""File slices into a Spark DataFrame: base rows through the base-file scan (Spark's own parquet reader
where it reaches the storage), except those of keys a slice's log files name, which are merged with the log
records in Spark tasks (:mod:`hoodpy.read.slice_merge`; a big slice in several parts,
:mod:`hoodpy.read.slice_parts`), and the two unioned. Only the keys the logs name pay for merging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.config import ordering_fields
from hoodpy.file_group.file_group import FileSlice
from hoodpy.file_group.log_file import effective_blocks
from hoodpy.keygen import KeyGenerator
from hoodpy.keygen.stored import with_record_keys
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read.file_scan import (MAX_SCAN_TASKS, key_positions, read_base_file, read_base_positions,
                                   read_base_rows, read_parquet_files, spark_cores)
from hoodpy.read.slice_parts import block_keys, merge_slice_part
from hoodpy.storage import Storage
from hoodpy.timeline.log_format import LogBlock
from hoodpy.timeline.timeline import CommittedInstants

# The bytes a merge part reads (its logs; with virtual keys its base too) worth a task of their own: a Spark
# scan split's. A merge part reads its slice's logs whole (every part reads every key, to agree on owners), so
# a part of fewer bytes costs more than it gains beside the base files' scan tasks running in the same stage.
PART_BYTES = 128 << 20
# Above this many log bytes, the keys the logs name are not forced into a broadcast: a log's bytes bound its
# keys' (a key is stored with its record), and a forced broadcast of millions of keys would fill the driver.
# Spark then plans the anti-join itself (a shuffle, or a broadcast where its own threshold allows).
BROADCAST_LOG_BYTES = 256 << 20


def slice_name(file_slice: FileSlice) -> str:
    """The name a slice's rows carry in ``file_name_column``: its base file's, else its first log file's."""
    first = file_slice.base_file or file_slice.log_files[0]
    return first.file_name


def read_file_slices(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], schema: StructType,
                     committed: CommittedInstants, ordering_field: str | None,
                     written: Mapping[str, StructType] | None = None, *,
                     file_name_column: str | None = None, virtual: KeyGenerator | None = None,
                     logged_keys_only: frozenset[str] = frozenset()) -> DataFrame:
    """The rows of ``slices`` with ``schema``: log blocks count when their instant is in ``committed``;
    ``written`` as read_parquet_files takes it (merged slices cast every column to ``schema`` anyway);
    ``file_name_column`` adds a string column holding each row's :func:`slice_name`.

    A slice with logs is read in two halves: the base rows of keys no log names through the base-file scan
    (Spark's reader: vectorized, only the columns the query uses), less the rows of keys its logs name (a
    broadcast anti-join on row positions, :func:`_untouched_rows`); the keys the logs name merged in Python tasks, a big
    slice in several.
    With virtual keys (``virtual``: the table's key generator) the files hold no keys to anti-join on, so
    whole slices with logs are merged in the Python tasks, their keys computed from the key fields.
    ``logged_keys_only``: base file paths of slices read only for the keys their logs name (an incremental
    read whose window starts after the base file: its other rows are all outside the window)."""
    plain = [s.base_file.path for s in slices if not s.log_files and s.base_file is not None]
    with_logs = [s for s in slices if s.log_files]
    if not with_logs:
        return read_parquet_files(spark, storage, plain, schema, written=written, file_name_column=file_name_column)
    merged = [(s.base_file.path if s.base_file is not None else None, [lf.path for lf in s.log_files],
               slice_name(s), part, parts)
              for s, parts in zip(with_logs, slice_parts(with_logs, spark_cores(spark), whole_base=virtual is not None))
              for part in range(parts)]
    tasks = min(len(merged), MAX_SCAN_TASKS)
    merge = _merge_slices(storage.base_uri, merged, tasks, to_arrow_schema(schema), committed, ordering_field,
                          file_name_column, virtual)
    out_schema = StructType([*schema.fields, *([StructField(file_name_column, StringType(), False)]
                                               if file_name_column else [])])
    parts = [spark.range(0, tasks, 1, tasks).mapInArrow(merge, out_schema)]
    based = [s for s in with_logs if s.base_file is not None and virtual is None
             and s.base_file.path not in logged_keys_only]
    if based:
        parts.append(_untouched_rows(spark, storage, based, schema, committed, written, file_name_column))
    if plain:
        parts.append(read_parquet_files(spark, storage, plain, schema, written=written,
                                        file_name_column=file_name_column))
    # The merge parts first: a union's tasks start in order, and a merge task (a Python worker's) is the
    # stage's longest; started last, it ran alone on one core while the other idled.
    return reduce(DataFrame.unionByName, parts)


_FILE = "_hoodpy_base_file"  # the anti-join's columns: a row's base file name, its position (or file and position)
_ROW = "_hoodpy_base_position"


def _untouched_rows(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], schema: StructType,
                    committed: CommittedInstants, written: Mapping[str, StructType] | None,
                    file_name_column: str | None) -> DataFrame:
    """The base rows of ``slices`` (each with a base file) whose keys their logs do not name: Spark's scan
    less a broadcast anti-join on the rows' positions. The Python tasks find the positions of the keys the
    logs name; Spark's side then reads no key column (``_metadata.row_index`` costs no read) and hashes longs
    rather than every row's key string. Up to KEYED_SCANS base files are scanned one by one, file i's rows
    keyed ``i << 40 | position`` (one long: Spark's long-keyed hash join); more are scanned at once and keyed
    by (file name, position)."""
    one_long = len(slices) <= KEYED_SCANS
    items = [(s.base_file.path, s.base_file.file_name, i if one_long else None, [lf.path for lf in s.log_files])
             for i, s in enumerate(slices)]
    tasks = min(len(items), MAX_SCAN_TASKS)
    keys = [_ROW] if one_long else [_FILE, _ROW]
    named = spark.range(0, tasks, 1, tasks).mapInArrow(
        _named_positions(storage.base_uri, items, tasks, committed),
        f"{_ROW} long" if one_long else f"{_FILE} string, {_ROW} long")
    if one_long:
        rows = [_keyed(read_parquet_files(spark, storage, [s.base_file.path], schema, written=written,
                                          row_index_column=_ROW), i, s.base_file.file_name, file_name_column)
                for i, s in enumerate(slices)]
        rows = reduce(DataFrame.unionByName, rows)
    else:
        rows = read_parquet_files(spark, storage, [s.base_file.path for s in slices], schema, written=written,
                                  file_name_column=_FILE, row_index_column=_ROW)
    if sum(lf.size or 0 for s in slices for lf in s.log_files) <= BROADCAST_LOG_BYTES:
        named = F.broadcast(named)
    rows = rows.join(named, keys, "left_anti").drop(_ROW)
    if one_long:
        return rows
    if file_name_column:
        return rows.withColumnRenamed(_FILE, file_name_column)
    return rows.drop(_FILE)


KEYED_SCANS = 16  # base files with logs scanned one by one (a plan of that many scans), keyed by one long
_FILE_SHIFT = 40  # file i's row keys: i << 40 | position (a parquet file of 2^40 rows is far off)


def _keyed(rows: DataFrame, index: int, name: str, file_name_column: str | None) -> DataFrame:
    """One base file's scan keyed for the anti-join (see :func:`_untouched_rows`), with its name when asked."""
    if index:
        rows = rows.withColumn(_ROW, F.col(_ROW) + F.lit(index << _FILE_SHIFT))
    return rows.withColumn(file_name_column, F.lit(name)) if file_name_column else rows


def _named_positions(base_uri: str, items: list[tuple[str, str, int | None, list[str]]], tasks: int,
                     committed: CommittedInstants):
    """The task function: for each base row whose key the committed log blocks of its slice name, its key
    for the anti-join: ``index << 40 | position`` for a file scanned alone (``index`` not None), else (base
    file name, position)."""

    def positions(batches):
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for base_rel, base_name, index, log_rels in items[task::tasks]:
                    logs = effective_blocks(((storage.full_path(rel), storage.read_bytes(rel)) for rel in log_rels),
                                            committed)
                    # The keys as the blocks hold them: a key named twice is found once all the same (no
                    # distinct set to build first).
                    keys = pa.chunked_array(block_keys(logs.blocks), pa.string()).combine_chunks()
                    found = key_positions(storage, base_rel, RECORD_KEY, keys)
                    if index is not None:
                        yield pa.RecordBatch.from_arrays([pa.array(found + (index << _FILE_SHIFT), pa.int64())],
                                                         names=[_ROW])
                    else:
                        yield pa.RecordBatch.from_arrays([pa.array([base_name] * len(found), pa.string()),
                                                          pa.array(found, pa.int64())], names=[_FILE, _ROW])

    return positions


def slice_parts(slices: Sequence[FileSlice], cores: int, *, whole_base: bool = False) -> list[int]:
    """How many parts (Spark tasks) merge each slice: up to enough for ``cores`` tasks in all, one per
    PART_BYTES (begun) of its log files, and of its base file when the merge reads it whole (``whole_base``:
    virtual keys; otherwise a part reads only the base rows of keys the logs name)."""
    wanted = -(-cores // len(slices)) if slices else 1
    return [max(1, min(wanted, -(-sum(f.size or 0 for f in (s.base_file if whole_base else None, *s.log_files)
                                      if f is not None) // PART_BYTES)))
            for s in slices]


def _merge_slices(base_uri: str, slices: list[tuple[str | None, list[str], str, int, int]], tasks: int,
                  schema: pa.Schema, committed: CommittedInstants, ordering_field: str | None,
                  file_name_column: str | None, virtual: KeyGenerator | None):
    """The task function: task i merges every ``tasks``-th slice part starting at i (with virtual keys, all
    of each slice's rows: see :func:`read_file_slices`)."""
    keyed = schema if virtual is None or RECORD_KEY in schema.names else \
        pa.schema([pa.field(RECORD_KEY, pa.string()), *schema])  # the computed keys to merge by

    def merge(batches):
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for base_rel, log_rels, name, part, parts in slices[task::tasks]:
                    rows = slice_rows(storage, base_rel, log_rels, keyed, committed, ordering_field, part, parts,
                                      named_only=virtual is None, virtual=virtual).select(schema.names)
                    if file_name_column:
                        rows = rows.append_column(file_name_column, pa.array([name] * rows.num_rows, pa.string()))
                    yield from rows.to_batches()

    return merge


def slice_rows(storage: Storage, base_rel: str | None, log_rels: Sequence[str], schema: pa.Schema,
               committed: CommittedInstants, ordering_field: str | None, part: int = 0, parts: int = 1, *,
               named_only: bool = False, virtual: KeyGenerator | None = None) -> pa.Table:
    """One file slice's rows with ``schema`` (pyarrow only): its base file (None: a slice of logs only) merged
    with the blocks of its log files that ``committed`` counts; with ``parts``, only part ``part``'s keys
    (:mod:`hoodpy.read.slice_parts`); ``named_only``: only the rows of keys the logs name. ``virtual``: the key
    generator of a table with virtual keys (``schema`` must then hold ``_hoodie_record_key``, which the merged
    rows carry computed)."""
    if not log_rels:
        return read_base_file(storage, base_rel, schema) if base_rel is not None else schema.empty_table()
    logs = effective_blocks(((storage.full_path(rel), storage.read_bytes(rel)) for rel in log_rels), committed)
    if base_rel is None:
        base = None
    elif named_only and virtual is None:  # the base rows of keys the logs name, from the row groups holding them
        return _merge_named(storage, base_rel, logs.blocks, schema, ordering_field, part, parts)
    else:  # the whole base (virtual keys: no stored key column to select rows by)
        base = with_record_keys(read_base_file(storage, base_rel, schema), virtual)
    return merge_slice_part(base, logs.blocks, schema, ordering_field, part, parts, named_only=named_only,
                            virtual=virtual)


_BASE_ROW = "_hoodpy_base_row"  # a merged row's position in the base file (null: a log record won)


def _merge_named(storage: Storage, base_rel: str, blocks: Sequence[LogBlock], schema: pa.Schema,
                 ordering_field: str | None, part: int, parts: int) -> pa.Table:
    """Part ``part`` of ``parts`` of the merged rows of the keys the logs name. The base rows of those keys
    are first read with only their key and ordering columns (all the merge compares): usually a log version
    wins, and only the keys whose base version wins need the base file's other columns, read then by
    position. (A base file of one row group, the default up to 120 MB, would otherwise be decoded whole.)
    Commit-time ordering compares nothing: the merge is of the logs alone."""
    fields = ordering_fields(ordering_field)
    if not fields:  # commit time: a log version (or delete) always wins over the base's, which is not read
        return merge_slice_part(None, blocks, schema, None, part, parts, named_only=True)
    compared = dict.fromkeys([RECORD_KEY, *(f for f in fields if f in schema.names)])
    wide = schema.append(pa.field(_BASE_ROW, pa.int64()))
    keys_of = block_keys(blocks)  # decoded once: the base rows to read, and which keys this part owns
    base = read_base_rows(storage, base_rel, pa.schema([schema.field(n) for n in compared]), RECORD_KEY,
                          pa.chunked_array(keys_of, pa.string()).combine_chunks(), position_column=_BASE_ROW)
    merged = merge_slice_part(base, blocks, wide, ordering_field, part, parts, named_only=True, keys_of=keys_of)
    from_base = merged.column(_BASE_ROW).is_valid()
    logs_won = merged.filter(pc.invert(from_base)).drop_columns([_BASE_ROW])
    if not pc.any(from_base).as_py():
        return logs_won
    positions = merged.filter(from_base).column(_BASE_ROW).to_numpy()
    return pa.concat_tables([logs_won, read_base_positions(storage, base_rel, schema, positions)])

"""File slices into a Spark DataFrame: slices without log files through the base-file scan (Spark's own
parquet reader where it reaches the storage), slices with log files merged in Spark tasks, one slice at a
time (:mod:`hoodpy.read.slice_merge`), and the two unioned. Only the slices with logs pay for merging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.file_group.file_group import FileSlice
from hoodpy.file_group.log_file import effective_blocks
from hoodpy.read.file_scan import MAX_SCAN_TASKS, read_base_file, read_parquet_files
from hoodpy.read.slice_merge import merge_slice
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import CommittedInstants


def slice_name(file_slice: FileSlice) -> str:
    """The name a slice's rows carry in ``file_name_column``: its base file's, else its first log file's."""
    first = file_slice.base_file or file_slice.log_files[0]
    return first.file_name


def read_file_slices(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], schema: StructType,
                     committed: CommittedInstants, ordering_field: str | None,
                     written: Mapping[str, StructType] | None = None, *,
                     file_name_column: str | None = None) -> DataFrame:
    """The rows of ``slices`` with ``schema``: log blocks count when their instant is in ``committed``;
    ``written`` as read_parquet_files takes it (merged slices cast every column to ``schema`` anyway);
    ``file_name_column`` adds a string column holding each row's :func:`slice_name`."""
    plain = [s.base_file.path for s in slices if not s.log_files and s.base_file is not None]
    merged = [(s.base_file.path if s.base_file is not None else None, [lf.path for lf in s.log_files],
               slice_name(s)) for s in slices if s.log_files]
    if not merged:
        return read_parquet_files(spark, storage, plain, schema, written=written, file_name_column=file_name_column)
    tasks = min(len(merged), MAX_SCAN_TASKS)
    merge = _merge_slices(storage.base_uri, merged, tasks, to_arrow_schema(schema), committed, ordering_field,
                          file_name_column)
    out_schema = StructType([*schema.fields, *([StructField(file_name_column, StringType(), False)]
                                               if file_name_column else [])])
    df = spark.range(0, tasks, 1, tasks).mapInArrow(merge, out_schema)
    if not plain:
        return df
    return read_parquet_files(spark, storage, plain, schema, written=written,
                              file_name_column=file_name_column).unionByName(df)


def _merge_slices(base_uri: str, slices: list[tuple[str | None, list[str], str]], tasks: int, schema: pa.Schema,
                  committed: CommittedInstants, ordering_field: str | None, file_name_column: str | None):
    """The task function: task i merges every ``tasks``-th slice starting at i."""

    def merge(batches):
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for base_rel, log_rels, name in slices[task::tasks]:
                    rows = slice_rows(storage, base_rel, log_rels, schema, committed, ordering_field)
                    if file_name_column:
                        rows = rows.append_column(file_name_column, pa.array([name] * rows.num_rows, pa.string()))
                    yield from rows.to_batches()

    return merge


def slice_rows(storage: Storage, base_rel: str | None, log_rels: Sequence[str], schema: pa.Schema,
               committed: CommittedInstants, ordering_field: str | None) -> pa.Table:
    """One file slice's rows with ``schema`` (pyarrow only): its base file (None: a slice of logs only) merged
    with the blocks of its log files that ``committed`` counts."""
    base = read_base_file(storage, base_rel, schema) if base_rel is not None else None
    if not log_rels:
        return base if base is not None else schema.empty_table()
    logs = effective_blocks(((storage.full_path(rel), storage.read_bytes(rel)) for rel in log_rels), committed)
    return merge_slice(base, logs.blocks, schema, ordering_field)

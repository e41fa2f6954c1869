"""Base files into a Spark DataFrame: Spark's own parquet reader where Spark can reach the storage, else
pyarrow inside Spark tasks.

The pyspark wheel ships Hadoop's HDFS and local file systems but no object-store connectors (no
hadoop-aws for ``s3a://``, no GCS or ABFS connector), and hoodpy adds no jars. So for a table on an object
store hoodpy asks Spark once per session and scheme whether it can list one of the table's files; if not,
each Spark task reads its share of the files with pyarrow (the same file system the writer used, with the
options its base URI carries) and the rows flow on as Arrow batches. Either way the result is an ordinary
DataFrame: filters, joins and writes downstream are Spark's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from functools import reduce

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import LongType, StringType, StructField, StructType

from hoodpy.arrow_rows import align
from hoodpy.storage import Storage

# (session id, scheme) -> whether spark.read.parquet reaches that scheme.
_spark_reach: dict[tuple[str, str], bool] = {}
MAX_SCAN_TASKS = 64


def _session_key(spark: SparkSession) -> str:
    try:
        return str(spark.sparkContext.applicationId)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext; its session id is as good
        return str(getattr(spark, "session_id", id(spark)))


def spark_cores(spark: SparkSession) -> int:
    """The session's default parallelism: the cores its tasks share."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: the machine's cores
        return os.cpu_count() or 1


def spark_reads_natively(spark: SparkSession, storage: Storage, probe_rel: str) -> bool:
    """Whether Spark's parquet reader can open files of this storage (always for local and HDFS)."""
    if storage.is_local or storage.scheme in ("hdfs", "viewfs"):
        return True
    key = (_session_key(spark), storage.scheme)
    if key not in _spark_reach:
        try:
            _ = spark.read.parquet(storage.uri(probe_rel)).schema  # resolves the path: needs the connector
            _spark_reach[key] = True
        except Exception:  # noqa: BLE001 - no FileSystem for the scheme, or no access with Spark's conf
            _spark_reach[key] = False
    return _spark_reach[key]


def read_parquet_files(spark: SparkSession, storage: Storage, rel_paths: Sequence[str], schema: StructType,
                       *, file_name_column: str | None = None, row_index_column: str | None = None,
                       written: Mapping[str, StructType] | None = None) -> DataFrame:
    """The rows of the given base files (paths relative to the table) with ``schema``.

    ``file_name_column`` adds a string column holding each row's file name (Spark's
    ``_metadata.file_name``); ``row_index_column`` a long column holding each row's position in its file
    (Spark's ``_metadata.row_index``, which costs no column read). ``written``: by path, the schema files were written with where it differs
    from ``schema`` by type promotions (hoodpy.read.written_types); Spark reads those with it, then casts.
    """
    paths = list(rel_paths)
    if written and any(p in written for p in paths) and spark_reads_natively(spark, storage, paths[0]):
        groups: dict[str, tuple[StructType, list[str]]] = {}
        for p in paths:
            file_schema = written.get(p, schema)
            groups.setdefault(file_schema.json(), (file_schema, []))[1].append(p)
        extra = [c for c in (file_name_column, row_index_column) if c]
        parts = [read_parquet_files(spark, storage, group, file_schema, file_name_column=file_name_column,
                                    row_index_column=row_index_column)
                 .select(*[F.col(f.name).cast(f.dataType) for f in schema.fields], *extra)
                 for file_schema, group in groups.values()]
        return reduce(DataFrame.unionByName, parts)
    out_schema = StructType(list(schema.fields) + ([StructField(file_name_column, StringType(), False)]
                                                   if file_name_column else [])
                            + ([StructField(row_index_column, LongType(), False)] if row_index_column else []))
    if not paths:
        return spark.createDataFrame([], out_schema)
    if spark_reads_natively(spark, storage, paths[0]):
        df = spark.read.schema(schema).parquet(*[storage.uri(p) for p in paths])
        if file_name_column:
            df = df.select("*", F.col("_metadata.file_name").alias(file_name_column))
        if row_index_column:
            df = df.select("*", F.col("_metadata.row_index").alias(row_index_column))
        return df
    tasks = min(len(paths), MAX_SCAN_TASKS)
    return spark.range(0, tasks, 1, tasks).mapInArrow(
        _scan_files(storage.base_uri, paths, tasks, to_arrow_schema(schema), file_name_column, row_index_column),
        out_schema)


def _scan_files(base_uri: str, paths: list[str], tasks: int, arrow_schema: pa.Schema,
                file_name_column: str | None, row_index_column: str | None = None):
    """The task function: task i reads every ``tasks``-th file starting at i (base_uri carries options)."""

    def scan(batches):
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for rel in paths[task::tasks]:
                    table = read_base_file(storage, rel, arrow_schema)
                    if file_name_column:
                        name = rel.rsplit("/", 1)[-1]
                        table = table.append_column(pa.field(file_name_column, pa.string(), False),
                                                    pa.array([name] * table.num_rows, pa.string()))
                    if row_index_column:
                        table = table.append_column(pa.field(row_index_column, pa.int64(), False),
                                                    pa.array(np.arange(table.num_rows, dtype=np.int64)))
                    yield from table.to_batches()

    return scan


def read_base_file(storage: Storage, rel: str, arrow_schema: pa.Schema) -> pa.Table:
    """One base file's rows with pyarrow, conformed to ``arrow_schema`` (columns it lacks are null)."""
    with storage.fs.open_input_file(storage.full_path(rel)) as f:
        pf = pq.ParquetFile(f)
        columns = [n for n in arrow_schema.names if n in pf.schema_arrow.names]
        return align(pf.read(columns=columns), arrow_schema)


def read_base_rows(storage: Storage, rel: str, arrow_schema: pa.Schema, key_column: str, keys: pa.Array, *,
                   position_column: str | None = None) -> pa.Table:
    """The rows of one base file whose ``key_column`` is one of ``keys``, conformed to ``arrow_schema``: the key
    column is read first, of only the row groups whose key statistics admit one of ``keys``
    (:func:`key_row_groups`), then the other columns of only the row groups holding such a row (a
    merge-on-read read's logs usually name a small share of a base file's keys). ``position_column`` adds an
    int64 column holding each row's position in the file (for :func:`read_base_positions`)."""
    with storage.fs.open_input_file(storage.full_path(rel)) as f:
        pf = pq.ParquetFile(f)
        columns = [n for n in arrow_schema.names if n in pf.schema_arrow.names]
        empty = arrow_schema.empty_table()
        if position_column:
            empty = empty.append_column(position_column, pa.array([], pa.int64()))
        if key_column not in pf.schema_arrow.names:  # virtual keys: no stored key names any row
            return empty
        candidates = key_row_groups(pf, key_column, keys)
        if not candidates:
            return empty
        bounds = _row_group_bounds(pf)
        key_values = pf.read_row_groups(candidates, columns=[key_column])
        read_hits = _group_hits(key_values.column(0), keys, candidates, bounds)
        hits = [(g, hit) for g, hit in read_hits if hit.any()]
        if not hits:
            return empty
        mask = np.concatenate([hit for _, hit in hits])
        if columns == [key_column]:  # the key alone (no ordering field in the file): already read
            rows = key_values.filter(pa.array(np.concatenate([hit for _, hit in read_hits])))
        else:
            rows = pf.read_row_groups([g for g, _ in hits], columns=columns).filter(pa.array(mask))
        rows = align(rows, arrow_schema)
        if position_column:
            positions = np.concatenate([np.flatnonzero(hit) + bounds[g] for g, hit in hits])
            rows = rows.append_column(position_column, pa.array(positions, pa.int64()))
        return rows


def key_positions(storage: Storage, rel: str, key_column: str, keys: pa.Array) -> np.ndarray:
    """The positions (in the file's row order) of one base file's rows whose ``key_column`` is one of
    ``keys``; none when the file has no such column (virtual keys). Reads only the key column, of only the
    row groups whose key statistics admit one of ``keys``."""
    with storage.fs.open_input_file(storage.full_path(rel)) as f:
        pf = pq.ParquetFile(f)
        if key_column not in pf.schema_arrow.names:
            return np.zeros(0, np.int64)
        candidates = key_row_groups(pf, key_column, keys)
        if not candidates:
            return np.zeros(0, np.int64)
        bounds = _row_group_bounds(pf)
        hits = _group_hits(pf.read_row_groups(candidates, columns=[key_column]).column(0), keys, candidates, bounds)
        return np.concatenate([np.flatnonzero(hit) + bounds[g] for g, hit in hits]).astype(np.int64)


def key_row_groups(pf: pq.ParquetFile, key_column: str, keys: pa.Array) -> list[int]:
    """The row groups of the file that may hold one of ``keys``: those whose ``key_column`` statistics admit
    one (min <= key <= max; a writer that truncates them keeps them bounds), and those without statistics.
    Where a file's rows keep a key range together (sorted by key, or loaded in an order that follows it),
    logs naming a key range leave the other groups unread; otherwise every group is read, as before."""
    if len(keys) == 0:
        return []
    leaf = next((i for i in range(pf.metadata.num_columns) if pf.metadata.schema.column(i).path == key_column),
                None)
    groups = []
    for g in range(pf.num_row_groups):
        stats = pf.metadata.row_group(g).column(leaf).statistics if leaf is not None else None
        lo, hi = (stats.min, stats.max) if stats is not None and stats.has_min_max else (None, None)
        if not (isinstance(lo, str) and isinstance(hi, str)) or \
                pc.any(pc.and_(pc.greater_equal(keys, lo), pc.less_equal(keys, hi))).as_py():
            groups.append(g)
    return groups


def _group_hits(key_values: pa.ChunkedArray, keys: pa.Array, groups: list[int],
                bounds: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Per row group of ``groups`` (``key_values``: their keys, read in order): the group, and per row of it
    whether its key is one of ``keys``."""
    hit = np.asarray(pc.is_in(key_values, value_set=keys), dtype=bool)
    starts = np.concatenate([[0], np.cumsum(np.diff(bounds)[groups])])
    return [(g, hit[starts[i]:starts[i + 1]]) for i, g in enumerate(groups)]


def read_base_positions(storage: Storage, rel: str, arrow_schema: pa.Schema, positions: np.ndarray) -> pa.Table:
    """The rows at ``positions`` (in the file's row order) of one base file, conformed to ``arrow_schema``,
    reading only the row groups holding them."""
    with storage.fs.open_input_file(storage.full_path(rel)) as f:
        pf = pq.ParquetFile(f)
        columns = [n for n in arrow_schema.names if n in pf.schema_arrow.names]
        positions = np.sort(np.asarray(positions, dtype=np.int64))
        bounds = _row_group_bounds(pf)
        group_of = np.searchsorted(bounds, positions, side="right") - 1
        groups = np.unique(group_of).tolist()
        if not groups:
            return arrow_schema.empty_table()
        starts = np.concatenate([[0], np.cumsum(np.diff(bounds)[groups])])  # each group's first row, as read
        local = positions - bounds[group_of] + starts[np.searchsorted(groups, group_of)]
        return align(pf.read_row_groups(groups, columns=columns).take(pa.array(local, pa.int64())), arrow_schema)


def _row_group_bounds(pf: pq.ParquetFile) -> np.ndarray:
    """Row ``bounds[i]`` is row group i's first row of the file; ``bounds[-1]`` the file's row count."""
    return np.cumsum([0] + [pf.metadata.row_group(i).num_rows for i in range(pf.num_row_groups)])

"""Incremental writes of a dbt model's batch into its hoodpy table, one engine write (commit) per strategy.

The batch is the model's temporary view. Meta columns are dropped, the model's delete flag becomes Hudi's
``_hoodie_is_deleted``, and the batch is aligned to the table's columns (typed nulls for the columns a batch
leaves out; on_schema_change has already decided which new columns the table takes). Alignment, merge's
partial update and the deletes that select rows by a condition (delete+insert, microbatch windows, as
``DELETE FROM`` statements) are the SQL layer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema import IS_DELETED_COLUMN
from sql_ext.catalog import quote_identifier
from sql_ext.session import table_for_name
from sql_ext.dml import align_by_name, data_fields, partial_update
from hoodpy.write.operation import WriteOperation

from dbt.adapters.hoodpy.model_config import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class WriteSummary:
    """What one incremental run did, for dbt's run results."""

    operations: list[str]
    instant_times: list[str]
    rows_written: int = 0
    rows_deleted: int = 0

    @property
    def message(self) -> str:
        if not self.instant_times:
            return "OK (nothing to write)"
        return (f"{'+'.join(self.operations)} {', '.join(self.instant_times)}: {self.rows_written} written, "
                f"{self.rows_deleted} deleted")


def batch_frame(spark: SparkSession, source: str, spec: TableSpec) -> DataFrame:
    """The model's rows without meta columns; the delete flag (if any) as ``_hoodie_is_deleted``."""
    from pyspark.sql import functions as F

    df = spark.table(source)
    df = df.drop(*[c for c in df.columns if c in META_COLUMNS])
    spec.check_columns(df.columns)
    if spec.delete_column:
        column = next(c for c in df.columns if c.lower() == spec.delete_column.lower())
        flag = F.coalesce(F.col(quote_identifier(column)).cast("boolean"), F.lit(False))
        df = df.withColumn(IS_DELETED_COLUMN, flag).drop(column)
    return df


def _delete_where(spark: SparkSession, target: str, condition: str) -> int:
    """Delete the target's rows matching ``condition`` through the SQL layer; returns how many."""
    before = spark.sql(f"SELECT count(*) AS n FROM {target} AS DBT_INTERNAL_DEST WHERE {condition}").collect()[0]["n"]
    if before:
        spark.sql(f"DELETE FROM {target} AS DBT_INTERNAL_DEST WHERE {condition}")
    return int(before)


def write_batch(spark: SparkSession, target: str, source: str, strategy: str, spec: TableSpec, *,
                columns: Sequence[str] | None = None, update_columns: Sequence[str] | None = None, predicates: Sequence[str] = (),
                window: tuple[str, str, str] | None = None,
                checkpoint: dict[str, str] | None = None, commit_empty: bool = False) -> WriteSummary:
    """Write the batch in view ``source`` into hoodpy table ``target`` by ``strategy``.

    Args:
        columns: the columns the table takes from the batch (dbt's dest_columns after on_schema_change);
            others are dropped. None: all.
        update_columns: for merge, the columns a matched row takes from the batch (None: all).
        predicates: dbt's incremental_predicates, SQL conditions on ``DBT_INTERNAL_DEST`` rows.
        window: microbatch (event_time column, start, end): the table's rows in [start, end) are replaced.
        checkpoint: write options stored in the commit's extraMetadata (the upstream instants the batch
            consumed, :mod:`dbt.adapters.hoodpy.changes`); they go to the last commit only.
        commit_empty: commit even an empty batch (a consumed window moved: it must never be read again).
    """
    table = table_for_name(spark, target, options=spec.options)
    df = batch_frame(spark, source, spec)
    if columns is not None:
        wanted = {c.lower() for c in columns} | {IS_DELETED_COLUMN.lower()}
        df = df.select(*[quote_identifier(c) for c in df.columns if c.lower() in wanted])
    # Not cast: a wider type or a new column reaches the write, which evolves the table by them.
    df = align_by_name(df, data_fields(table), cast=False, keep_extra=True)
    summary = WriteSummary([], [])
    keys = ", ".join(quote_identifier(k) for k in spec.record_key)
    conditions = [f"({p})" for p in predicates]
    if strategy == "delete+insert":
        conditions.insert(0, f"({keys}) IN (SELECT {keys} FROM {source})")
    elif strategy == "microbatch" and window is not None:
        column, start, end = window
        conditions.insert(0, f"{quote_identifier(column)} >= TIMESTAMP '{start}' AND "
                          f"{quote_identifier(column)} < TIMESTAMP '{end}'")
    if strategy in ("delete+insert", "microbatch") and conditions:
        deleted = _delete_where(spark, target, " AND ".join(conditions))
        if deleted:
            last = table.timeline.last_completed_commit()
            summary.operations.append("delete")
            summary.instant_times.append(last.timestamp if last else "")
            summary.rows_deleted += deleted
    if strategy in ("upsert", "merge") or (strategy == "microbatch" and spec.record_key):
        operation = WriteOperation.UPSERT
        if strategy == "merge" and update_columns is not None:
            df = partial_update(spark, df, table.read().drop(*META_COLUMNS), spec.record_key, update_columns)
    elif strategy == "insert_overwrite":
        operation = WriteOperation.INSERT_OVERWRITE if table.keygen.partition_fields \
            else WriteOperation.INSERT_OVERWRITE_TABLE
    else:
        operation = WriteOperation.INSERT
    if operation is not WriteOperation.INSERT_OVERWRITE_TABLE and not commit_empty and df.isEmpty():
        return summary
    result = table.write(df, operation, options={**spec.options, **(checkpoint or {})})
    summary.operations.append(operation.value)
    summary.instant_times.append(result.instant_time)
    summary.rows_written += result.num_writes - result.num_deletes
    summary.rows_deleted += result.num_deletes
    return summary

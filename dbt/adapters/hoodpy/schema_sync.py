"""on_schema_change for hoodpy tables: dropped columns and changed column types.

Hudi's schema evolution never drops a column (a batch without it writes nulls), so dbt's "remove the columns
the model no longer selects" needs a new table: the current rows without those columns are bulk-inserted
into ``<name>__dbt_sync`` (same keys, partitioning and options), then the old table is dropped with its files
and the new one renamed. Until the drop, the old table is intact, so a failure leaves it as it was.

A column whose type changed in the model (``append_new_columns`` and ``sync_all_columns``) follows Hudi's
type promotion: int -> bigint -> float -> double and decimal widening are taken by the next write itself
(the table's schema widens, older files are read promoted); numbers and dates -> string rebuild the table
as above with the column cast, since parquet files cannot be read as strings; anything else (a narrower
type, string -> number, a record key or partition column) fails before anything is written, naming the
model and the column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hoodpy.errors import SchemaEvolutionError
from hoodpy.config.table import TableConfig
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema import promotes
from sql_ext.catalog import (
    BASE_PATH_PROPERTY, SparkCatalog, create_options_sql, hoodpy_table_properties, quote_identifier, sql_table_type,
)
from sql_ext.session import table_for_name
from hoodpy.table import HoodieTable
from sql_ext.dml import data_fields

from dbt.adapters.hoodpy.model_config import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType

# Hudi's promotions to string, which hoodpy performs by rebuilding the table.
_TO_STRING = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "date", "timestamp"})


def _type_name(t: DataType) -> str:
    return t.simpleString()


def _widens(old: DataType, new: DataType) -> bool:
    """Whether the next write takes ``new`` itself: the engine's promotion rules, on the Arrow types it evolves."""
    from pyspark.sql.pandas.types import to_arrow_type

    try:
        return promotes(to_arrow_type(old), to_arrow_type(new))
    except TypeError:  # no Arrow form, so no Hudi column of that type either
        return False


def _to_string(old: DataType, new: DataType) -> bool:
    from pyspark.sql.types import DecimalType

    return _type_name(new) == "string" and (_type_name(old) in _TO_STRING or isinstance(old, DecimalType))


def plan_type_changes(table_fields: Mapping[str, DataType], batch_fields: Mapping[str, DataType],
                      fixed: Mapping[str, str]) -> list[str]:
    """The columns to rebuild as strings for the model's new column types; raises
    :class:`SchemaEvolutionError` naming every column whose change Hudi does not allow.

    ``table_fields`` / ``batch_fields`` map lower-cased column names to types (the table's, the model's);
    ``fixed`` maps record key and partition columns (lower-cased) to their role.
    """
    rebuild, problems = [], []
    for name, new in batch_fields.items():
        old = table_fields.get(name)
        if old is None or old == new:
            continue
        change = f"column '{name}' cannot change type from {_type_name(old)} (table) to {_type_name(new)} (model)"
        if name in fixed:
            problems.append(f"{fixed[name]} {change}")
        elif _to_string(old, new):
            rebuild.append(name)
        elif not _widens(old, new):
            problems.append(f"{change}: Hudi only widens a column (int -> bigint -> float -> double, decimal "
                            "widening, numbers and dates -> string); cast it in the model, or --full-refresh")
    if problems:
        raise SchemaEvolutionError(problems)
    return rebuild


def check_type_changes(spark: SparkSession, name: str, batch: str, identifier: str, spec: TableSpec,
                       ) -> list[str]:
    """Apply Hudi's type promotion to the model's changed column types (see the module doc); returns the
    columns the table was rebuilt for (as strings). Raises before anything is written."""
    table = table_for_name(spark, name)
    table_fields = {f.name.lower(): f.dataType for f in data_fields(table)}
    batch_fields = {f.name.lower(): f.dataType for f in spark.table(batch).schema.fields
                    if f.name not in META_COLUMNS}
    fixed = {c.lower(): "partition" for c in table.keygen.partition_fields}
    fixed.update({c.lower(): "record key" for c in table.keygen.record_key_fields})
    rebuild = plan_type_changes(table_fields, batch_fields, fixed)
    if rebuild:
        _rebuild(spark, table, name, identifier, spec, casts={c: "string" for c in rebuild})
    return rebuild


def sync_catalog_types(spark: SparkSession, name: str) -> None:
    """Give the catalog entry the table's column types after a write widened some (Spark cannot ALTER a
    column's type, so the entry is registered again: it only points at the table)."""
    from sql_ext.session import layer_of

    layer = layer_of(spark)
    catalog = layer.catalog if layer is not None else SparkCatalog(spark, spark.sql)
    entry = catalog.require(name)
    table = entry.open(spark)
    data = data_fields(table)
    listed = {c.name.lower(): c.dataType for c in spark.catalog.listColumns(entry.name.sql())}
    if all(listed.get(f.name.lower()) == f.dataType.simpleString() for f in data):
        return
    from pyspark.sql.types import StructType

    properties = {k: v for k, v in entry.properties.items()
                  if k != BASE_PATH_PROPERTY and k != "comment" and not k.startswith(("transient_", "spark.sql."))}
    comment = spark.catalog.getTable(entry.name.sql()).description
    catalog.unregister(entry.name)
    catalog.register(entry.name, table, StructType(data), properties, comment=comment)


def rebuild_without(spark: SparkSession, name: str, identifier: str, columns: list[str], spec: TableSpec) -> None:
    _rebuild(spark, table_for_name(spark, name), name, identifier, spec, drop=columns)


def _rebuild(spark: SparkSession, table: HoodieTable, name: str, identifier: str, spec: TableSpec, *,
             drop: Sequence[str] = (), casts: Mapping[str, str] | None = None) -> None:
    drop = {c.lower() for c in drop}
    casts = {c.lower(): t for c, t in (casts or {}).items()}
    keep = [f.name for f in data_fields(table) if f.name.lower() not in drop]
    schema, _, _ = name.rpartition(".")
    staging = f"{schema}.{identifier}__dbt_sync" if schema else f"{identifier}__dbt_sync"
    precombine = table.properties.get(TableConfig.PRECOMBINE_FIELD.key)
    props = hoodpy_table_properties(table.keygen.record_key_fields,
                                    precombine if precombine and precombine.lower() not in drop else None,
                                    spec.options, sql_table_type(table.properties))
    spark.sql(f"DROP TABLE IF EXISTS {staging} PURGE")
    spark.sql(f"CREATE TABLE {staging} {create_options_sql(table.keygen.partition_fields, props)} AS "
              f"SELECT {', '.join(_select(c, casts) for c in keep)} FROM {name}")
    spark.sql(f"DROP TABLE {name} PURGE")
    spark.sql(f"ALTER TABLE {staging} RENAME TO {name}")


def _select(column: str, casts: Mapping[str, str]) -> str:
    quoted = quote_identifier(column)
    cast = casts.get(column.lower())
    return f"CAST({quoted} AS {cast}) AS {quoted}" if cast else quoted

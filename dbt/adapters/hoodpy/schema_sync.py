"""on_schema_change=sync_all_columns for hoodpy tables: drop columns by rebuilding the table.

Hudi's schema evolution never drops a column (a batch without it writes nulls), so dbt's "remove the columns
the model no longer selects" needs a new table: the current rows without those columns are bulk-inserted
into ``<name>__dbt_sync`` (same keys, partitioning and options), then the old table is dropped with its files
and the new one renamed. Until the drop, the old table is intact, so a failure leaves it as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sql_ext.schema import META_COLUMNS
from sql_ext.sql.catalog import quote_identifier
from sql_ext.table import HoodieTable

from dbt.adapters.hoodpy.model_config import TableSpec
from dbt.adapters.hoodpy.services import sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def rebuild_without(spark: SparkSession, name: str, identifier: str, columns: list[str], spec: TableSpec) -> None:
    table = HoodieTable.for_name(spark, name)
    drop = {c.lower() for c in columns}
    keep = [f.name for f in table.spark_schema().fields if f.name not in META_COLUMNS and f.name.lower() not in drop]
    schema, _, _ = name.rpartition(".")
    staging = f"{schema}.{identifier}__dbt_sync" if schema else f"{identifier}__dbt_sync"
    props = {"primaryKey": ",".join(table.keygen.record_key_fields), "type": "cow", **spec.options}
    precombine = table.properties.get("hoodie.table.precombine.field")
    if precombine and precombine.lower() not in drop:
        props["preCombineField"] = precombine
    parts = [p for p in table.keygen.partition_fields]
    partition_sql = f" PARTITIONED BY ({', '.join(quote_identifier(p) for p in parts)})" if parts else ""
    props_sql = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in props.items())
    spark.sql(f"DROP TABLE IF EXISTS {staging} PURGE")
    spark.sql(f"CREATE TABLE {staging} USING hoodpy{partition_sql} TBLPROPERTIES ({props_sql}) AS "
              f"SELECT {', '.join(quote_identifier(c) for c in keep)} FROM {name}")
    spark.sql(f"DROP TABLE {name} PURGE")
    spark.sql(f"ALTER TABLE {staging} RENAME TO {name}")

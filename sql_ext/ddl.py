"""DDL of hoodpy tables: ``CREATE TABLE ... USING hoodpy`` (also ``USING hudi``), CTAS, ``DROP TABLE``,
``TRUNCATE TABLE``.

``CREATE TABLE [IF NOT EXISTS] db.t (cols) USING hoodpy [PARTITIONED BY (cols)] [LOCATION '...']
[COMMENT '...'] [OPTIONS (...)] [TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'cow',
hoodie.* = ...)] [AS SELECT ...]``:

* ``primaryKey`` names the record key columns; without it the table's record keys are generated (as Hudi
  0.14+ Spark SQL creates a table without a primary key: inserts get keys ``<instant>_<task>_<row>``, UPDATE
  and DELETE locate rows by their stored ``_hoodie_record_key``). ``type`` is ``cow`` (the default) or ``mor``
  (merge-on-read, as ``hoodie.table.type = 'MERGE_ON_READ'``). OPTIONS and TBLPROPERTIES are merged.
* Partition columns go to the end of the schema (as Spark and Hudi order a partitioned table's columns),
  and partitions are hive-style (``city=sf``) unless ``hoodie.datasource.write.hive_style_partitioning``
  says otherwise, as in Hudi's Spark SQL.
* Without LOCATION the table lives at ``<database location>/<table>``. A LOCATION that already holds a Hudi
  table is adopted (its schema and keys; a given ``primaryKey`` must match).
* CTAS writes the query's rows with ``bulk_insert`` (``hoodie.datasource.write.operation`` overrides); if the
  write fails, the new table is dropped again.
* ``DROP TABLE`` removes the catalog entry; ``PURGE`` also deletes the table's files. ``TRUNCATE TABLE``
  replaces every file group with nothing (an ``insert_overwrite_table`` replacecommit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.types import StructField, StructType
from sqlglot import exp

from hoodpy.config import HoodieConfig, parse_bool, parse_csv
from hoodpy.config.sql import TableOptions
from hoodpy.config.table import COPY_ON_WRITE, MERGE_ON_READ, TableConfig
from hoodpy.config.write import WriteConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.index.bucket import BucketSpec
from hoodpy.meta_fields import META_COLUMNS
from sql_ext.call import NotALiteral, constant
from sql_ext.catalog import (
    PRECOMBINE_PROPERTY,
    PRIMARY_KEY_PROPERTY,
    TYPE_PROPERTY,
    CatalogTable,
    normalize_location,
    hoodpy_table_properties,
    sql_table_type,
)
from sql_ext.dialect import DIALECT
from hoodpy.errors import CatalogTableExistsError, InvalidStatementError, UnsupportedStatementError
from hoodpy.storage import Storage
from hoodpy.write.operation import WriteOperation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.session import SqlLayer

_CANONICAL_OPTION = {"primarykey": PRIMARY_KEY_PROPERTY, "precombinefield": PRECOMBINE_PROPERTY,
                     "type": TYPE_PROPERTY}
_TABLE_TYPES = {"cow": COPY_ON_WRITE, "copy_on_write": COPY_ON_WRITE, "mor": MERGE_ON_READ,
                "merge_on_read": MERGE_ON_READ}


def empty_result(spark) -> DataFrame:
    """What Spark returns for a DDL / DML statement: a DataFrame with no columns and no rows."""
    return spark.createDataFrame([], StructType([]))


def provider(tree: exp.Create) -> str | None:
    props = tree.args.get("properties")
    for p in (props.expressions if props else []):
        if isinstance(p, exp.FileFormatProperty):
            return p.this.name.lower() if p.this is not None else None
    return None


def _property_key(node: exp.Expr) -> str:
    """A property key as written: ``'a.b'``, ``a``, or an unquoted dotted key ``hoodie.a.b`` (which sqlglot
    parses as Dot nodes over a Column; ``name`` would keep its last segment only)."""
    if isinstance(node, exp.Literal):
        return node.this
    if isinstance(node, exp.Dot):
        return f"{_property_key(node.this)}.{_property_key(node.expression)}"
    if isinstance(node, exp.Column):  # the leading segments of a long dotted key (catalog.db.table.column)
        return ".".join(part.name for part in node.parts)
    return node.name


def _property_value(node: exp.Expr) -> str:
    if isinstance(node, (exp.Var, exp.Identifier, exp.Column)):
        return node.name
    value = _constant(node, "a table property value")
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _constant(node: exp.Expr, what: str):
    try:
        return constant(node)
    except NotALiteral as e:
        raise InvalidStatementError(f"{what} must be a literal, got {e}") from None


def table_options(tree: exp.Create) -> tuple[dict[str, str], str | None, str | None, list[exp.Expr]]:
    """(OPTIONS + TBLPROPERTIES, LOCATION, COMMENT, PARTITIONED BY items) of a CREATE statement."""
    options: dict[str, str] = {}
    location = comment = None
    partitioned: list[exp.Expr] = []
    props = tree.args.get("properties")
    for p in (props.expressions if props else []):
        if isinstance(p, exp.LocationProperty):
            location = str(_constant(p.this, "LOCATION"))
        elif isinstance(p, exp.SchemaCommentProperty):
            comment = str(_constant(p.this, "COMMENT"))
        elif isinstance(p, exp.PartitionedByProperty):
            schema = p.this
            partitioned = list(schema.expressions) if isinstance(schema, (exp.Schema, exp.Tuple)) else [schema]
        elif isinstance(p, exp.OptionsProperty):
            for o in p.expressions:
                options[_property_key(o.this)] = _property_value(o.args["value"])
        elif type(p) is exp.Property:
            options[_property_key(p.this)] = _property_value(p.args["value"])
        elif isinstance(p, (exp.FileFormatProperty, exp.TemporaryProperty)):
            continue
        else:
            raise UnsupportedStatementError(tree.sql(dialect=DIALECT),
                                            f"CREATE TABLE ... USING hoodpy does not support {p.sql(dialect=DIALECT)}")
    return {_CANONICAL_OPTION.get(k.lower(), k): v for k, v in options.items()}, location, comment, partitioned


def parse_schema(spark, column_defs: list[exp.ColumnDef]) -> StructType:
    """Column definitions -> StructType, parsed by Spark itself (no JVM internals)."""
    if not column_defs:
        return StructType([])
    ddl = ", ".join(f"{c.this.sql(dialect=DIALECT, identify=True)} {c.args['kind'].sql(dialect=DIALECT)}"
                    for c in column_defs)
    return spark.createDataFrame([], ddl).schema


def _data_fields(schema: StructType) -> list[StructField]:
    return [f for f in schema.fields if f.name not in META_COLUMNS]


def create_table(layer: SqlLayer, tree: exp.Create, text: str) -> DataFrame:
    from hoodpy.table import HoodieTable

    spark = layer.spark
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    name = layer.catalog.qualify(target)
    if name is None:
        raise InvalidStatementError(f"CREATE TABLE ... USING hoodpy needs a catalog table name, got "
                                    f"{target.sql(dialect=DIALECT)}")
    if tree.args.get("replace"):
        raise UnsupportedStatementError(text, "CREATE OR REPLACE TABLE ... USING hoodpy is not supported yet; "
                                        "DROP TABLE first")
    if layer.catalog.exists(name):
        if tree.args.get("exists"):
            return empty_result(spark)
        raise CatalogTableExistsError(str(name))

    options, location, comment, partitioned = table_options(tree)
    config = HoodieConfig.of(options)
    # Hudi's Spark SQL names of the table type; None: not given (hoodie.table.type, if set, decides).
    table_type = _TABLE_TYPES[config.get(TableOptions.TYPE)] if config.is_set(TableOptions.TYPE) else None

    query = tree.expression
    columns = [c for c in (tree.this.expressions if isinstance(tree.this, exp.Schema) else [])
               if isinstance(c, exp.ColumnDef)]
    partition_defs = [p for p in partitioned if isinstance(p, exp.ColumnDef)]
    partition_names = [p.name for p in partitioned]
    source = None
    if query is not None:
        if columns:
            raise InvalidStatementError("CREATE TABLE ... AS SELECT takes its columns from the query; "
                                        "do not list them")
        source = layer.read_sql(query)
        source = source.drop(*[c for c in source.columns if c in META_COLUMNS])
        schema = source.schema
    else:
        schema = parse_schema(spark, columns + partition_defs)
    by_name = {f.name.lower(): f for f in schema.fields if f.name not in META_COLUMNS}
    unknown = [p for p in partition_names if p.lower() not in by_name]
    if unknown:
        raise InvalidStatementError(f"PARTITIONED BY column(s) {', '.join(unknown)} are not columns of {name}")
    parts = [by_name[p.lower()].name for p in partition_names]
    data_schema = StructType([f for f in _data_fields(schema) if f.name not in parts]
                             + [by_name[p.lower()] for p in partition_names])
    if not partition_names:
        parts = list(config.get(TableConfig.PARTITION_FIELDS))

    base_path = normalize_location(location) if location else \
        f"{layer.catalog.database_location(name.database).rstrip('/')}/{name.table}"
    keys = list(parse_csv(config.raw(TableOptions.PRIMARY_KEY) or ""))
    precombine = config.get(TableOptions.PRECOMBINE_FIELD)
    created = False
    if HoodieTable.exists(base_path):
        table = HoodieTable.for_path(spark, base_path)
        if keys and tuple(keys) != tuple(table.keygen.record_key_fields):
            raise InvalidConfigError(PRIMARY_KEY_PROPERTY, ",".join(keys),
                                     f"the table at {base_path} has record key "
                                     f"{','.join(table.keygen.record_key_fields)}")
        if table_type is not None and table_type != table.properties.get(TableConfig.TYPE.key):
            raise InvalidConfigError(TYPE_PROPERTY, options.get(TYPE_PROPERTY),
                                     f"the table at {base_path} is {table.properties.get(TableConfig.TYPE.key)}")
        keys = list(table.keygen.record_key_fields)
        precombine = table.config.get(TableConfig.PRECOMBINE_FIELD)
        existing = StructType(_data_fields(table.spark_schema()))
        if existing.fields:
            data_schema = existing
    else:
        if not data_schema.fields:
            raise InvalidStatementError(f"CREATE TABLE {name} USING hoodpy needs column definitions or AS SELECT "
                                        f"(no Hudi table exists at {base_path} to take them from)")
        # Without primaryKey: a table whose record keys are generated (as Hudi 0.14+ Spark SQL creates one).
        # A bad bucket index layout in TBLPROPERTIES fails here, not at the first write.
        BucketSpec.for_new_table(options, keys)
        hive_style = options.get(TableConfig.HIVE_STYLE_PARTITIONING.key)
        table = HoodieTable.create(
            spark, base_path, table_name=name.table, record_key_fields=keys, partition_fields=parts,
            precombine_field=precombine,
            hive_style_partitioning=parse_bool(hive_style) if hive_style is not None else True,
            database_name=name.database, key_generator_class=config.get(TableConfig.KEY_GENERATOR_CLASS),
            schema=data_schema if data_schema.fields else None,
            table_properties={k: v for k, v in options.items() if k.startswith("hoodie.")},
            table_type=table_type,
        )
        created = True

    properties = hoodpy_table_properties(keys, precombine, {
        k: v for k, v in options.items() if k not in (PRIMARY_KEY_PROPERTY, PRECOMBINE_PROPERTY, TYPE_PROPERTY)},
        sql_table_type(table.properties))
    try:
        entry = layer.catalog.register(name, table, data_schema, properties, comment=comment)
    except Exception:
        if created:
            Storage(table.base_path).delete_dir("")
        raise
    if source is not None:
        try:
            config = HoodieConfig.of(session_options(spark), entry.write_options())
            operation = WriteOperation(config.get(WriteConfig.OPERATION)) if config.is_set(WriteConfig.OPERATION) \
                else WriteOperation.BULK_INSERT
            write(layer, entry, source, operation)
        except Exception:
            layer.catalog.unregister(name)
            if created:
                Storage(table.base_path).delete_dir("")
            raise
    return empty_result(spark)


def drop_table(layer: SqlLayer, entry: CatalogTable, *, purge: bool) -> DataFrame:
    layer.catalog.unregister(entry.name)
    if purge:
        Storage(entry.base_path).delete_dir("")
    return empty_result(layer.spark)


def truncate_table(layer: SqlLayer, entry: CatalogTable, tree: exp.TruncateTable) -> DataFrame:
    if any(isinstance(t, exp.Table) and t.args.get("partition") is not None for t in tree.expressions) \
            or tree.args.get("partition"):
        raise UnsupportedStatementError(tree.sql(dialect=DIALECT), "TRUNCATE TABLE ... PARTITION on a hoodpy "
                                        "table is not supported yet; use DELETE FROM ... WHERE")
    table = entry.open(layer.spark)
    if table.timeline.last_completed_commit() is not None:
        empty = layer.spark.createDataFrame([], StructType(_data_fields(table.spark_schema())))
        write(layer, entry, empty, WriteOperation.INSERT_OVERWRITE_TABLE)
    return empty_result(layer.spark)


# -- writes shared with dml ----------------------------------------------------------------------------
def session_options(spark) -> dict[str, str]:
    """``hoodie.*`` keys set in the session (``SET hoodie.x = y``)."""
    try:
        confs = spark.conf.getAll
        confs = confs() if callable(confs) else confs
    except Exception:  # noqa: BLE001 -- older or remote sessions without getAll
        return {}
    return {k: v for k, v in dict(confs).items() if k.startswith("hoodie.")}


def write(layer: SqlLayer, entry: CatalogTable, df: DataFrame, operation: WriteOperation,
          extra_options: dict[str, str] | None = None):
    """One engine write for a SQL statement; keeps the catalog schema in step with the table's."""
    options = {**session_options(layer.spark), **entry.write_options(), **(extra_options or {})}
    table = entry.open(layer.spark, options)
    before = {f.name for f in _data_fields(table.spark_schema())}
    # Options a caller holds for this table's writes (SqlLayer.write_options) go to the write itself: the
    # commit stores those under the commit-metadata prefix.
    result = table.write(df, operation, options=layer.extra_write_options(entry.name))
    after = StructType(_data_fields(table.spark_schema()))
    if any(f.name not in before for f in after.fields):
        layer.catalog.sync_schema(entry, after)
    return result

"""``ALTER TABLE`` on hoodpy tables.

* ``SET TBLPROPERTIES (k = v, ...)``: stored in the catalog entry; ``hoodie.*`` keys there are options of
  every later SQL write (as at CREATE). Values of keys hoodpy declares are checked first. ``UNSET
  TBLPROPERTIES`` likewise. ``hoodie.base.path``, ``primaryKey``, ``preCombineField`` and ``type`` describe
  the table's files and cannot be set or unset.
* ``ADD COLUMNS (c type [COMMENT '...'], ...)`` (or ``ADD COLUMN``): schema evolution. New columns are
  nullable and go after the existing ones; the change is committed to the table (a commit without
  records whose metadata carries the evolved schema, as Hudi's ALTER TABLE records an ``ALTER_SCHEMA``
  commit), so reads, time travel to later instants and hudi-rs see the column, null in older rows.
* ``RENAME TO db.new``: renames the catalog entry (the files stay where they are) and updates
  ``hoodie.table.name`` in ``hoodie.properties``, as Hudi does.
* ``DROP [IF EXISTS] PARTITION (f = v, ...)[, PARTITION (...)]``: Hudi's delete_partition, one replacecommit
  replacing every file group of the partitions (the files stay until cleaned). Each spec names every partition
  field; without IF EXISTS a partition the table lacks is an error.

Anything else (DROP / RENAME / ALTER COLUMN, column positions, SET LOCATION, ADD PARTITION, SERDE) raises
:class:`~hoodpy.errors.UnsupportedStatementError`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache
from typing import TYPE_CHECKING

from pyspark.sql.types import StructField, StructType
from sqlglot import exp

from hoodpy.config import ConfigKey, declared_keys
from hoodpy.config.properties import load_table_properties, save_table_properties, table_checksum
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError, InvalidStatementError, UnsupportedStatementError
from hoodpy.meta_fields import META_COLUMNS
from sql_ext.catalog import (
    BASE_PATH_PROPERTY,
    PRECOMBINE_PROPERTY,
    PRIMARY_KEY_PROPERTY,
    TYPE_PROPERTY,
    CatalogTable,
)
from sql_ext.ddl import _property_key, _property_value, empty_result, parse_schema, write
from sql_ext.dialect import DIALECT
from hoodpy.write.operation import WriteOperation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sql_ext.session import SqlLayer

FIXED_PROPERTIES = {k.lower(): k for k in (BASE_PATH_PROPERTY, PRIMARY_KEY_PROPERTY, PRECOMBINE_PROPERTY, TYPE_PROPERTY)}
SUPPORTED = "SET TBLPROPERTIES, UNSET TBLPROPERTIES, ADD COLUMNS, RENAME TO and DROP PARTITION"
_UNSET = re.compile(r"\bUNSET\s+TBLPROPERTIES\b(?:\s+IF\s+EXISTS)?\s*\((?P<keys>.*)\)\s*;?\s*$",
                    re.IGNORECASE | re.DOTALL)


@cache
def known_keys() -> dict[str, ConfigKey]:
    """Every ``hoodie.*`` key hoodpy declares (by key and alias), across ``hoodpy.config`` modules."""
    import hoodpy.config as config_package

    out: dict[str, ConfigKey] = {}
    for module_info in pkgutil.iter_modules(config_package.__path__):
        module = importlib.import_module(f"{config_package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                for key in declared_keys(value):
                    out.update({name: key for name in key.names()})
    return out


def _check_values(properties: dict[str, str]) -> None:
    for name, value in properties.items():
        key = known_keys().get(name)
        if key is not None:
            try:
                key.parse(value)
            except (TypeError, ValueError) as e:
                raise InvalidConfigError(name, value, str(e)) from e


def _refuse_fixed(names, entry: CatalogTable, text: str, verb: str) -> None:
    fixed = [FIXED_PROPERTIES[n.lower()] for n in names if n.lower() in FIXED_PROPERTIES]
    if fixed:
        raise UnsupportedStatementError(
            text, f"cannot {verb} {', '.join(fixed)} of hoodpy table {entry.name}: they describe the table's "
            "files (record key, ordering field, location) and are fixed when the table is created")


def alter_table(layer: SqlLayer, tree: exp.Alter, entry: CatalogTable, text: str) -> DataFrame:
    actions = tree.args.get("actions") or []
    if len(actions) != 1:
        raise UnsupportedStatementError(text, f"ALTER TABLE on hoodpy table {entry.name} supports {SUPPORTED}")
    action = actions[0]
    if isinstance(action, exp.AlterSet) and set(action.args) <= {"expressions"} and action.expressions \
            and all(isinstance(p, exp.Properties) for p in action.expressions):
        return set_properties(layer, action, entry, text)
    if isinstance(action, exp.Schema) or (isinstance(action, exp.ColumnDef) and not action.args.get("position")):
        defs = list(action.expressions) if isinstance(action, exp.Schema) else [action]
        if all(isinstance(d, exp.ColumnDef) for d in defs):
            return add_columns(layer, defs, entry, text)
    if isinstance(action, exp.AlterRename):
        return rename(layer, action, entry, text)
    if isinstance(action, exp.DropPartition):
        return drop_partitions(layer, action, entry, text)
    what = "ADD COLUMN with column positions (FIRST / AFTER)" if isinstance(action, exp.ColumnDef) \
        else action.sql(dialect=DIALECT).split("(")[0].strip()
    raise UnsupportedStatementError(text, f"ALTER TABLE ... {what} is not supported on hoodpy table {entry.name} "
                                    f"(supported: {SUPPORTED})")


def set_properties(layer: SqlLayer, action: exp.AlterSet, entry: CatalogTable, text: str) -> DataFrame:
    properties = {_property_key(p.this): _property_value(p.args["value"])
                  for props in action.expressions for p in props.expressions}
    _refuse_fixed(properties, entry, text, "set")
    _check_values(properties)
    layer.passthrough_sql(text)
    layer.catalog.invalidate(entry.name)
    return empty_result(layer.spark)


def unset_properties(layer: SqlLayer, entry: CatalogTable, text: str) -> DataFrame | None:
    """``UNSET TBLPROPERTIES`` (sqlglot does not parse it): None when ``text`` is not that statement."""
    match = _UNSET.search(text)
    if match is None:
        return None
    names = [k.strip().strip("'\"`") for k in match.group("keys").split(",")]
    _refuse_fixed(names, entry, text, "unset")
    layer.passthrough_sql(text)
    layer.catalog.invalidate(entry.name)
    return empty_result(layer.spark)


def add_columns(layer: SqlLayer, defs: list[exp.ColumnDef], entry: CatalogTable, text: str) -> DataFrame:
    for d in defs:
        if any(isinstance(c.args.get("kind"), exp.NotNullColumnConstraint)
               and not c.args["kind"].args.get("allow_null") for c in d.args.get("constraints") or []):
            raise InvalidStatementError(f"ALTER TABLE {entry.name} ADD COLUMNS: column {d.name!r} cannot be NOT "
                                        "NULL (existing rows have no value for it)")
    table = entry.open(layer.spark)
    current = [f for f in table.spark_schema().fields if f.name not in META_COLUMNS]
    added = parse_schema(layer.spark, defs).fields
    present = {f.name.lower() for f in current} | {c.lower() for c in META_COLUMNS}
    seen: set[str] = set()
    for f in added:
        if f.name.lower() in present or f.name.lower() in seen:
            raise InvalidStatementError(f"ALTER TABLE {entry.name} ADD COLUMNS: column {f.name!r} already exists")
        seen.add(f.name.lower())
    schema = StructType(current + [StructField(f.name, f.dataType, True) for f in added])
    # An upsert of no records commits the evolved schema (and write() syncs the catalog columns).
    write(layer, entry, layer.spark.createDataFrame([], schema), WriteOperation.UPSERT)
    return empty_result(layer.spark)


def rename(layer: SqlLayer, action: exp.AlterRename, entry: CatalogTable, text: str) -> DataFrame:
    target = layer.catalog.qualify(action.this)
    if target is None:
        raise InvalidStatementError(f"ALTER TABLE {entry.name} RENAME TO needs a catalog table name, got "
                                    f"{action.this.sql(dialect=DIALECT)}")
    layer.passthrough_sql(text)
    layer.catalog.invalidate()
    table = entry.open(layer.spark)
    props = load_table_properties(table.storage) or dict(table.properties)
    props[TableConfig.NAME.key] = target.table
    database = props.get(TableConfig.DATABASE_NAME.key, target.database)
    props[TableConfig.CHECKSUM.key] = str(table_checksum(database, target.table))
    save_table_properties(table.storage, props)
    return empty_result(layer.spark)


def drop_partitions(layer: SqlLayer, action: exp.DropPartition, entry: CatalogTable, text: str) -> DataFrame:
    """``DROP [IF EXISTS] PARTITION (...)``: the partition paths the specs name, deleted in one replacecommit."""
    from hoodpy.config.write import WriteConfig
    from hoodpy.keygen import SIMPLE

    table = entry.open(layer.spark)
    keygen = table.keygen
    if not keygen.is_partitioned or any(t != SIMPLE for t in keygen.partition_types):
        why = "is not partitioned" if not keygen.is_partitioned else "has partition paths made of dates"
        raise UnsupportedStatementError(text, f"DROP PARTITION needs a table partitioned by column values; "
                                        f"{entry.name} {why}")
    paths = []
    for spec in action.expressions:
        values = {}
        for eq in spec.expressions:
            if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                raise InvalidStatementError(f"DROP PARTITION expects field = value pairs, got {eq.sql(dialect=DIALECT)}")
            value = eq.expression
            values[eq.this.name.lower()] = None if isinstance(value, exp.Null) else value.name
        fields = {f.lower(): f for f in keygen.partition_fields}
        if set(values) != set(fields):
            raise InvalidStatementError(
                f"DROP PARTITION on {entry.name} must name each partition field ({', '.join(fields.values())}), "
                f"got {', '.join(values) or 'none'}")
        paths.append("/".join(keygen.partition_segment(fields[f.lower()], values[f.lower()])
                              for f in keygen.partition_fields))
    if action.args.get("exists"):
        present = set(table.file_system_view().partitions())
        paths = [p for p in paths if p in present]
        if not paths:
            return empty_result(layer.spark)
    write(layer, entry, layer.spark.createDataFrame([], "x int"), WriteOperation.DELETE_PARTITION,
          {WriteConfig.PARTITIONS_TO_DELETE.key: ",".join(paths)})
    return empty_result(layer.spark)

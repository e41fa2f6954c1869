"""``df.write.format("hoodpy").options(...).mode(m).save(path)``: Hudi's datasource write, run on the driver
through :meth:`hoodpy.table.HoodieTable.write` (index lookup and merge stay distributed, every write is one
atomic commit).

Options are Hudi's: ``hoodie.table.name``, ``hoodie.datasource.write.recordkey.field``, ``.partitionpath.field``
(or ``partitionBy(...)``), ``.precombine.field``, ``.operation`` (upsert by default; insert, bulk_insert,
delete, insert_overwrite, insert_overwrite_table, delete_partition with
``hoodie.datasource.write.partitions.to.delete``), ``.table.type``, ``.keygenerator.class``,
``.hive_style_partitioning`` and every other ``hoodie.*`` key hoodpy honours (docs/options.md); keys under the
commit metadata prefix (default ``_``) land in the commit's extraMetadata.

Save modes, as Hudi's datasource treats them:

* ``append``: runs the operation; creates the table first when the path holds none.
* ``overwrite``: the table ends up holding exactly the batch. Where the table exists with the definition the
  options give (keys, partitioning, key generator, type, name) and the batch has its schema, that is one
  ``insert_overwrite_table`` replacecommit: atomic, and earlier versions stay readable by time travel until
  cleaned (Hudi deletes the folder first, a known gap it tracks as HUDI-6286). Otherwise the table is
  recreated: the new one is written in a staging folder beside it and swapped in once its commit completed,
  so a failed job leaves the old table as it was.
* ``errorifexists`` (Spark's default): fails when a table exists, else creates it. ``ignore``: does nothing
  when a table exists, else creates it.
* ``delete`` and ``delete_partition`` run in ``append`` mode only, on an existing table (as in Hudi).

Without ``hoodie.datasource.write.recordkey.field`` (and on a table created without one) record keys are
generated, as Hudi 0.14+ does: a write naming no operation whose batch has no ``_hoodie_record_key`` is a
bulk_insert; upserts and deletes take the keys from ``_hoodie_record_key`` (rows read from the table).

Refused with an error naming the problem, before anything is written: an unknown operation, a new table
without ``hoodie.table.name``, options that contradict an existing table's definition (Hudi's
"config conflict"), a batch without the key or partition columns, a path holding files that are not a Hudi
table. ``hoodie.datasource.write.table.type=MERGE_ON_READ`` creates a merge-on-read table (writes become
deltacommits). If the table did not exist and the write fails, the folder is removed again.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.pandas.types import to_arrow_schema

from hoodpy.config import HoodieConfig, ordering_fields, parse_bool, parse_csv
from hoodpy.config.keygen import KeyGeneratorConfig
from hoodpy.config.table import COPY_ON_WRITE, TableConfig, check_writable
from hoodpy.config.write import WriteConfig
from hoodpy.errors import (
    InvalidConfigError,
    MissingConfigError,
    PathHoldsOtherDataError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from hoodpy.keygen import KeyGenerator, split_partition_types
from hoodpy.meta_fields import META_COLUMNS, RECORD_KEY
from hoodpy.schema import normalize_arrow_schema
from hoodpy.storage import Storage, open_storage
from hoodpy.write.records import require_columns
from sql_ext.datasource.options import hoodpy_options

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hoodpy.table import HoodieTable
    from hoodpy.write.writer import CommitResult

APPEND, OVERWRITE, IGNORE, ERROR_IF_EXISTS = "append", "overwrite", "ignore", "errorifexists"
# Options that define a table (compared with an existing table's by definition_conflicts).
_DEFINING = (TableConfig.NAME, TableConfig.RECORD_KEY_FIELDS, TableConfig.PARTITION_FIELDS, TableConfig.PRECOMBINE_FIELD,
             TableConfig.KEY_GENERATOR_CLASS, KeyGeneratorConfig.TYPE, TableConfig.HIVE_STYLE_PARTITIONING,
             TableConfig.TYPE)
_MODES = {APPEND: APPEND, OVERWRITE: OVERWRITE, IGNORE: IGNORE, ERROR_IF_EXISTS: ERROR_IF_EXISTS,
          "error": ERROR_IF_EXISTS, "default": ERROR_IF_EXISTS}
DELETE_PARTITION = "delete_partition"
_PROPERTIES = ".hoodie/hoodie.properties"


def save_mode(mode: str | None) -> str:
    """Spark's save mode name as one of append, overwrite, ignore, errorifexists (None: Spark's default)."""
    if mode is None:
        return ERROR_IF_EXISTS
    normal = _MODES.get(str(mode).strip().lower())
    if normal is None:
        raise InvalidConfigError("mode", mode, "expected append, overwrite, ignore or errorifexists")
    return normal


@dataclass(frozen=True)
class WriteRequest:
    """One DataFrame write: the table path, the save mode, the options (respelled) and partitionBy columns."""

    path: str
    mode: str
    options: dict[str, str]
    partition_by: tuple[str, ...] = ()

    @classmethod
    def of(cls, path: str, mode: str | None, options: Mapping[str, object],
           partition_by: Sequence[str] = ()) -> WriteRequest:
        opts = hoodpy_options(options)
        parts = tuple(partition_by)
        given = opts.get(TableConfig.PARTITION_FIELDS.aliases[0]) or opts.get(TableConfig.PARTITION_FIELDS.key)
        if parts and given is not None and split_partition_types(parse_csv(given))[0] != parts:
            raise InvalidConfigError(TableConfig.PARTITION_FIELDS.aliases[0], given,
                                     f"partitionBy({', '.join(parts)}) names other columns")
        if parts and given is None:  # Hudi takes partitionBy columns as the partition path fields
            opts[TableConfig.PARTITION_FIELDS.aliases[0]] = ",".join(parts)
        write_operation(HoodieConfig.of(opts))  # an unknown operation fails before anything is looked at
        return cls(path, save_mode(mode), opts, parts)

    @property
    def config(self) -> HoodieConfig:
        return HoodieConfig.of(self.options)

    @property
    def operation(self) -> str:
        return write_operation(self.config)

    @property
    def hoodie_options(self) -> dict[str, str]:
        return {k: v for k, v in self.options.items() if k.startswith("hoodie.")}


def write_operation(config: HoodieConfig) -> str:
    """The write operation the options name (upsert by default); an unknown one fails, naming the key."""
    return config.get(WriteConfig.OPERATION)


def deduced_operation(request: WriteRequest, df: DataFrame, keys_configured: bool) -> str:
    """The operation, as Hudi's datasource deduces it: without a record key (generated keys), no operation
    named and no ``_hoodie_record_key`` column in the batch, a write is a bulk_insert (Spark's parquet
    behaviour); otherwise the named operation, upsert by default."""
    if not keys_configured and not request.config.is_set(WriteConfig.OPERATION) and RECORD_KEY not in df.columns:
        return "bulk_insert"
    return request.operation


def save(df: DataFrame, request: WriteRequest) -> CommitResult | None:
    """Write ``df`` as ``request`` says; returns the commit (None when ``ignore`` found a table)."""
    from hoodpy.table import HoodieTable

    spark = df.sparkSession
    storage = open_storage(spark, request.path, request.options)
    exists = storage.exists(_PROPERTIES)
    if not exists:
        _require_no_other_data(storage)
    table = HoodieTable.for_path(spark, storage.base_uri, options=_opening_options(request)) if exists else None
    keys_configured = request.config.is_set(TableConfig.RECORD_KEY_FIELDS) or (
        table is not None and not table.keygen.auto_keys)
    operation = deduced_operation(request, df, keys_configured)
    if operation in ("delete", DELETE_PARTITION):
        if request.mode != APPEND:
            raise InvalidConfigError("mode", request.mode, f"the {operation} operation runs in append mode only")
        if table is None:
            raise TableNotFoundError(storage.base_uri, f"there is no table to {operation.replace('_', ' ')} from")
    if table is None:
        return _create_and_write(df, request, storage, operation)
    if request.mode == IGNORE:
        return None
    if request.mode == ERROR_IF_EXISTS:
        raise TableAlreadyExistsError(storage.base_uri)
    if request.mode == APPEND:
        require_definition(table, request.config)
        return table.write(df, operation, options=request.options)
    if not definition_conflicts(table, request.config) and _data_schema(df) == table.arrow_schema():
        # The table ends up holding the batch: one replacecommit, atomic. An upsert combines duplicate keys
        # of the batch, as writing it into a new table would.
        options = dict(request.options)
        if operation == "upsert" and not table.keygen.auto_keys:
            options.setdefault(WriteConfig.COMBINE_BEFORE_INSERT.key, "true")
        return table.write(df, "insert_overwrite_table", options=options)
    return _recreate(df, request, storage, operation)


def _opening_options(request: WriteRequest) -> dict[str, str]:
    """The options an existing table is opened with. Overwrite may redefine the table (it is then recreated),
    so there the options that define one are left for :func:`definition_conflicts` to compare, not refused on
    opening as a write that changes the table's keys would be."""
    if request.mode != OVERWRITE:
        return request.hoodie_options
    defining = {name for key in _DEFINING for name in key.names()}
    return {k: v for k, v in request.hoodie_options.items() if k not in defining}


def definition_conflicts(table: HoodieTable, config: HoodieConfig) -> list[tuple[str, str, str]]:
    """(key, given, the table's) for each option that defines a table and differs from ``table``'s."""
    keygen = table.keygen
    checks = [
        (TableConfig.NAME, lambda v: v.strip(), table.name),
        (TableConfig.RECORD_KEY_FIELDS, lambda v: ",".join(parse_csv(v)), ",".join(keygen.record_key_fields)),
        (TableConfig.PARTITION_FIELDS, lambda v: ",".join(split_partition_types(parse_csv(v))[0]),
         ",".join(keygen.partition_fields)),
        (TableConfig.PRECOMBINE_FIELD, lambda v: TableConfig.PRECOMBINE_FIELD.parse(v),
         table.config.get(TableConfig.PRECOMBINE_FIELD) or ""),
        (TableConfig.KEY_GENERATOR_CLASS, lambda v: v.strip(), keygen.key_generator_class),
        (TableConfig.HIVE_STYLE_PARTITIONING, lambda v: str(parse_bool(v)).lower(),
         str(keygen.hive_style_partitioning).lower()),
        (TableConfig.TYPE, lambda v: TableConfig.TYPE.parse(v),
         table.properties.get(TableConfig.TYPE.key, COPY_ON_WRITE)),
    ]
    out = []
    for key, normal, existing in checks:
        raw = next((config.options[n] for n in key.names() if n in config.options), None)
        if raw is None:
            continue
        try:
            given = normal(str(raw))
        except ValueError as e:
            raise InvalidConfigError(key.key, raw, str(e)) from None
        if given != existing:
            out.append((next(n for n in key.names() if n in config.options), str(raw), existing))
    return out


def require_definition(table: HoodieTable, config: HoodieConfig) -> None:
    """Raise InvalidConfigError, as Hudi's "config conflict" does, when an option defining a table (record key,
    partitioning, ordering field, key generator, type, name) differs from ``table``'s."""
    conflicts = definition_conflicts(table, config)
    if conflicts:
        key, given, existing = conflicts[0]
        raise InvalidConfigError(key, given, f"the table at {table.base_path} has {existing!r} (options that "
                                 "define a table must match it; overwrite mode recreates it)")


def _data_schema(df: DataFrame):
    return normalize_arrow_schema(to_arrow_schema(df.drop(*[c for c in META_COLUMNS if c in df.columns]).schema))


def _require_no_other_data(storage: Storage) -> None:
    found = [f.path for f in storage.list_files("")] + storage.list_dirs("")
    if found:
        raise PathHoldsOtherDataError(storage.base_uri, sorted(found))


def table_definition(df: DataFrame, request: WriteRequest, path: str) -> dict[str, Any]:
    """The arguments of :meth:`HoodieTable.create` for the table ``request``'s options define, checked against
    the batch (name, record key, columns, key generator, table type) without writing anything."""
    config = request.config
    name = config.raw(TableConfig.NAME)
    if not name:
        raise MissingConfigError(TableConfig.NAME.key, "a DataFrame write that creates a table needs its name")
    keys = parse_csv(config.raw(TableConfig.RECORD_KEY_FIELDS) or "")  # none: generated keys (as Hudi 0.14+)
    check_writable(path, config.get(TableConfig.TYPE), "create", merge_on_read=True)
    keygen = KeyGenerator.from_config(config)  # a bad key generator or partitioning fails here
    precombine = config.raw(TableConfig.PRECOMBINE_FIELD)
    data = df.drop(*[c for c in META_COLUMNS if c in df.columns])
    require_columns(data.schema, list(keygen.record_key_fields), "record key")
    require_columns(data.schema, list(keygen.partition_fields), "partition")
    require_columns(data.schema, list(ordering_fields(precombine)), "ordering (precombine)")
    return {"table_name": str(name).strip(), "record_key_fields": keys,
            "partition_fields": parse_csv(config.raw(TableConfig.PARTITION_FIELDS) or ""),
            "precombine_field": precombine, "hive_style_partitioning": keygen.hive_style_partitioning,
            "database_name": config.get(TableConfig.DATABASE_NAME),
            "key_generator_class": config.raw(TableConfig.KEY_GENERATOR_CLASS), "schema": data.schema,
            "options": request.hoodie_options, "table_properties": request.hoodie_options,
            "table_type": config.get(TableConfig.TYPE)}


def new_table(df: DataFrame, request: WriteRequest, path: str) -> HoodieTable:
    """Create the table ``request``'s options define at ``path`` (hoodie.properties only; data follows)."""
    from hoodpy.table import HoodieTable

    return HoodieTable.create(df.sparkSession, path, **table_definition(df, request, path))


def _create_and_write(df: DataFrame, request: WriteRequest, storage: Storage, operation: str) -> CommitResult:
    table = new_table(df, request, storage.base_uri)  # validates everything before it writes hoodie.properties
    try:
        return table.write(df, operation, options=request.options)
    except BaseException:
        storage.delete_dir("")  # the path held nothing before: a failed first write leaves nothing
        raise


def _recreate(df: DataFrame, request: WriteRequest, storage: Storage, operation: str) -> CommitResult:
    """Overwrite with another definition or schema: a new table written beside the old one, then swapped in."""
    staging = open_storage(df.sparkSession, _staging_path(storage.base_uri), request.options)
    staging.delete_dir("")
    try:
        result = new_table(df, request, staging.base_uri).write(df, operation, options=request.options)
    except BaseException:
        staging.delete_dir("")
        raise
    _swap_in(staging, storage)
    return result


def _staging_path(base: str) -> str:
    parent, _, name = base.rstrip("/").rpartition("/")
    return f"{parent}/.{name}.hoodpy-overwrite-{time.time_ns()}"


def _swap_in(staging: Storage, target: Storage) -> None:
    """Replace the folder of ``target`` with the folder of ``staging`` (a rename where the file system has one;
    an object store copies the files). The catalog placeholder of the SQL layer, if any, is kept."""
    import pyarrow.fs as pafs

    from sql_ext.catalog import PLACEHOLDER

    placeholder = target.read_bytes(PLACEHOLDER) if target.exists(PLACEHOLDER) else None
    target.delete_dir("")
    if target.is_object_store:
        pafs.copy_files(staging.root, target.root, source_filesystem=staging.fs, destination_filesystem=target.fs)
        staging.delete_dir("")
    else:
        target.fs.move(staging.root, target.root)
    if placeholder is not None:
        target.write_bytes(PLACEHOLDER, placeholder)

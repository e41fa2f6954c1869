"""The Arrow normal form of a table schema: the Arrow schema that reading the stored Avro back yields.

Every Arrow type maps onto one Avro type, so each Arrow schema has a normal form (all fields nullable,
int8/int16 widened to int32, any timestamp unit or zone folded into microseconds UTC, large/dictionary types
unwrapped). What is written and what is read back agree because writers cast batches to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pyarrow as pa

from hoodpy.errors import SchemaEvolutionError
from hoodpy.meta_fields import META_COLUMNS

IS_DELETED_COLUMN = "_hoodie_is_deleted"

# Columns that are never part of the stored data schema: the meta columns are added by the writer, and the
# delete marker only steers the write.
_NOT_DATA = frozenset(META_COLUMNS) | {IS_DELETED_COLUMN}

_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
UTC_ZONE = "UTC"
LIST_ITEM = "element"  # what Spark's ArrowUtils and the Parquet spec call a list's element


def _normal_type(t: pa.DataType, path: str, problems: list[str]) -> pa.DataType | None:
    """The Arrow type a stored ``t`` reads back as; ``None`` (problem noted) if Hudi cannot store it."""
    if pa.types.is_dictionary(t):
        return _normal_type(t.value_type, path, problems)
    if pa.types.is_boolean(t):
        return pa.bool_()
    # Avro has only int and long; uint32 needs long to keep its range.
    if t in (pa.int8(), pa.int16(), pa.int32(), pa.uint8(), pa.uint16()):
        return pa.int32()
    if t in (pa.int64(), pa.uint32()):
        return pa.int64()
    if pa.types.is_float32(t):
        return pa.float32()
    if pa.types.is_float64(t):
        return pa.float64()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_date32(t):
        return pa.date32()
    if pa.types.is_timestamp(t):
        # Spark writes micros; a zone means an instant (TimestampType), none means TimestampNTZType.
        return pa.timestamp("us", tz=UTC_ZONE) if t.tz else pa.timestamp("us")
    if pa.types.is_decimal(t):
        if t.precision > 38:
            return pa.decimal256(t.precision, t.scale)
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        item = _normal_type(t.value_type, f"{path}.{LIST_ITEM}", problems)
        return None if item is None else pa.list_(pa.field(LIST_ITEM, item))
    if pa.types.is_map(t):
        key = _normal_type(t.key_type, f"{path}.key", problems)
        value = _normal_type(t.item_type, f"{path}.value", problems)
        if key is not None and key != pa.string():
            problems.append(
                f"column '{path}' is a map with {t.key_type} keys; Hudi (Avro) maps need string keys"
            )
            return None
        return None if key is None or value is None else pa.map_(pa.string(), value)
    if pa.types.is_struct(t):
        fields = normal_fields((t.field(i) for i in range(t.num_fields)), f"{path}.", problems)
        return None if fields is None else pa.struct(fields)
    problems.append(f"column '{path}' has Arrow type {t}, which a Hudi table cannot store")
    return None


def normal_fields(fields: Iterable[pa.Field], prefix: str, problems: list[str]) -> list[pa.Field] | None:
    """Normal form of a record's fields (all nullable); checks Avro naming on the way."""
    out: list[pa.Field] = []
    seen: set[str] = set()
    ok = True
    for f in fields:
        path = prefix + f.name
        if not _AVRO_NAME.match(f.name):
            # Avro (and so Java Hudi) rejects these names; better to say so before anything is written.
            problems.append(f"column '{path}' is not a valid Avro name (letters, digits and _ only)")
            ok = False
        if f.name in seen:
            problems.append(f"column '{path}' appears more than once")
            ok = False
        seen.add(f.name)
        t = _normal_type(f.type, path, problems)
        if t is None:
            ok = False
        else:
            out.append(pa.field(f.name, t))
    return out if ok else None


def data_fields(schema: pa.Schema) -> list[pa.Field]:
    return [f for f in schema if f.name not in _NOT_DATA]


def normalize_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """The data schema as the table stores it: no meta columns, every type in its Avro-backed normal form.

    Equal to ``arrow_schema_from_avro(avro_schema_from_arrow(schema, name))``.

    Raises:
        SchemaEvolutionError: a column has a type or name Hudi cannot store.

    Example:
        >>> normalize_arrow_schema(pa.schema([("b", pa.int8()), ("t", pa.timestamp("ns", "Europe/Paris"))]))
        b: int32
        t: timestamp[us, tz=UTC]
    """
    problems: list[str] = []
    fields = normal_fields(data_fields(schema), "", problems)
    if problems or fields is None:
        raise SchemaEvolutionError(problems)
    return pa.schema(fields)


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """The five meta columns (nullable strings) first, then the data fields; existing meta columns dropped.

    Example:
        >>> with_meta_columns(pa.schema([("id", pa.int32())])).names[:2]
        ['_hoodie_commit_time', '_hoodie_commit_seqno']
    """
    meta = [pa.field(c, pa.string()) for c in META_COLUMNS]
    return pa.schema(meta + [f for f in schema if f.name not in META_COLUMNS], metadata=schema.metadata)


"""Arrow <-> Avro for table schemas, exactly as Spark's ``SchemaConverters`` plus Hudi's
``AvroConversionUtils`` convert them, and the stored Avro JSON (commit ``extraMetadata.schema``,
``hoodie.table.create.schema``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hoodpy.errors import HoodieError, SchemaEvolutionError
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.schema.normal_form import UTC_ZONE, LIST_ITEM, normalize_arrow_schema

AvroType = str | dict[str, Any] | list[Any]


class InvalidSchemaError(HoodieError):
    """A stored Avro schema that is not valid JSON or not an Avro record hoodpy can read."""

    def __init__(self, reason: str, *, text: str | None = None):
        self.reason = reason
        tail = f" (schema starts {text[:80]!r})" if text else ""
        super().__init__(f"Invalid Avro table schema: {reason}{tail}")


# --------------------------------------------------------------------------------------------------------
# Names and sizes
# --------------------------------------------------------------------------------------------------------


def sanitize_avro_name(name: str) -> str:
    """Make a table name usable as an Avro name, the way Hudi's ``HoodieAvroUtils.sanitizeName`` does.

    Every character outside ``[A-Za-z0-9_]`` (and a leading digit) becomes ``__``.

    Example:
        >>> sanitize_avro_name("my-table")
        'my__table'
    """
    if not name:
        return name
    if not re.match(r"[A-Za-z_]", name[0]):
        name = "__" + name[1:]
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def decimal_fixed_size(precision: int) -> int:
    """Bytes of the Avro ``fixed`` holding a decimal of ``precision`` digits (Spark's minBytesForPrecision).

    The smallest n with 2^(8n-1) >= 10^precision, i.e. enough to hold 10^precision - 1 in two's complement.

    Example:
        >>> decimal_fixed_size(10)
        5
    """
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# --------------------------------------------------------------------------------------------------------
# Arrow -> Avro
# --------------------------------------------------------------------------------------------------------


def _nullable(avro: AvroType) -> list[AvroType]:
    return ["null", avro]


class _AvroBuilder:
    """Builds Avro types from normal-form Arrow types, naming records the way Spark's SchemaConverters does.

    A record is named after its field, in the namespace of the enclosing record's full name; a decimal is a
    ``fixed`` named "fixed" in namespace ``<enclosing record full name>.<field>``. Array items and map values
    reuse the name and namespace of their field.
    """

    def __init__(self) -> None:
        self.full_names: set[str] = set()
        self.problems: list[str] = []

    def _claim(self, full_name: str, path: str) -> None:
        # Avro forbids defining one full name twice; Spark's naming makes this nearly impossible, but say so.
        if full_name in self.full_names:
            self.problems.append(f"column '{path}' would define the Avro name {full_name} twice")
        self.full_names.add(full_name)

    def record(self, fields: Sequence[pa.Field], name: str, namespace: str, path: str) -> dict[str, Any]:
        self._claim(f"{namespace}.{name}", path)
        child_ns = f"{namespace}.{name}"
        prefix = f"{path}." if path else ""
        return {
            "type": "record",
            "name": name,
            "namespace": namespace,
            "fields": [
                {
                    "name": f.name,
                    "type": _nullable(self.type(f.type, f.name, child_ns, prefix + f.name)),
                    "default": None,
                }
                for f in fields
            ],
        }

    def type(self, t: pa.DataType, name: str, namespace: str, path: str) -> AvroType:
        simple = _SIMPLE_TO_AVRO.get(t)
        if simple is not None:
            return dict(simple) if isinstance(simple, dict) else simple
        if pa.types.is_timestamp(t):
            return {"type": "long", "logicalType": "timestamp-micros" if t.tz else "local-timestamp-micros"}
        if pa.types.is_decimal(t):
            self._claim(f"{namespace}.{name}.fixed", path)
            return {
                "type": "fixed",
                "name": "fixed",
                "namespace": f"{namespace}.{name}",
                "size": decimal_fixed_size(t.precision),
                "logicalType": "decimal",
                "precision": t.precision,
                "scale": t.scale,
            }
        if pa.types.is_list(t):
            return {"type": "array", "items": _nullable(self.type(t.value_type, name, namespace, path))}
        if pa.types.is_map(t):
            return {"type": "map", "values": _nullable(self.type(t.item_type, name, namespace, path))}
        if pa.types.is_struct(t):
            return self.record([t.field(i) for i in range(t.num_fields)], name, namespace, path)
        # Unreachable for normal-form input; kept so a new normal type cannot slip through silently.
        self.problems.append(f"column '{path}' has Arrow type {t}, which a Hudi table cannot store")
        return "null"


_SIMPLE_TO_AVRO: dict[pa.DataType, AvroType] = {
    pa.bool_(): "boolean",
    pa.int32(): "int",
    pa.int64(): "long",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.string(): "string",
    pa.binary(): "bytes",
    pa.date32(): {"type": "int", "logicalType": "date"},
}


def avro_schema_from_arrow(
    schema: pa.Schema, table_name: str, *, include_meta_columns: bool = False
) -> dict[str, Any]:
    """The Avro record Java Hudi 0.14 stores in commit metadata for a table with this Arrow schema.

    Meta columns and ``_hoodie_is_deleted`` are skipped. Every field is ``["null", T]`` with a null default.
    With ``include_meta_columns`` the five meta columns come first, as in a base file's
    ``parquet.avro.schema`` footer (``"doc": ""`` included, as Java writes them).

    Args:
        schema: the data schema (any supported Arrow types; see :func:`normalize_arrow_schema`).
        table_name: ``hoodie.table.name``; names the record ``<name>_record`` in namespace ``hoodie.<name>``.
        include_meta_columns: prepend the meta columns.

    Raises:
        SchemaEvolutionError: a column has a type or name Hudi cannot store; each problem names it.

    Example:
        >>> avro = avro_schema_from_arrow(pa.schema([("d", pa.decimal128(10, 5))]), "t")
        >>> fixed = avro["fields"][0]["type"][1]
        >>> fixed["name"], fixed["namespace"], fixed["size"]
        ('fixed', 'hoodie.t.t_record.d', 5)
    """
    normal = normalize_arrow_schema(schema)
    name = sanitize_avro_name(table_name)
    builder = _AvroBuilder()
    record = builder.record(list(normal), f"{name}_record", f"hoodie.{name}", "")
    if builder.problems:
        raise SchemaEvolutionError(builder.problems)
    if include_meta_columns:
        meta = [{"name": c, "type": ["null", "string"], "doc": "", "default": None} for c in META_COLUMNS]
        record["fields"] = meta + record["fields"]
    return record


def to_create_schema_form(schema: dict[str, Any]) -> dict[str, Any]:
    """The form Java writes to ``hoodie.table.create.schema``: unions as ``[T, "null"]``, no defaults.

    That property holds Spark's raw converter output, while commits hold Hudi's null-first form with
    defaults; both describe the same table.

    Example:
        >>> to_create_schema_form({"type": "record", "name": "r", "fields": [
        ...     {"name": "id", "type": ["null", "int"], "default": None}]})
        {'type': 'record', 'name': 'r', 'fields': [{'name': 'id', 'type': ['int', 'null']}]}
    """

    def convert(t: AvroType) -> AvroType:
        if isinstance(t, list):
            branches = [convert(b) for b in t]
            nulls = [b for b in branches if b == "null"]
            return [b for b in branches if b != "null"] + nulls
        if not isinstance(t, dict):
            return t
        out = dict(t)
        if t.get("type") == "record":
            out["fields"] = [
                {k: (convert(v) if k == "type" else v) for k, v in f.items() if k != "default"}
                for f in t["fields"]
            ]
        elif t.get("type") == "array":
            out["items"] = convert(t["items"])
        elif t.get("type") == "map":
            out["values"] = convert(t["values"])
        return out

    result = convert(schema)
    assert isinstance(result, dict)
    return result


def avro_schema_to_json(schema: dict[str, Any]) -> str:
    """Compact JSON as Java's Avro prints it (no spaces, key order as given).

    Example:
        >>> avro_schema_to_json({"type": "record", "name": "r", "fields": []})
        '{"type":"record","name":"r","fields":[]}'
    """
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def parse_avro_schema(text: str) -> dict[str, Any]:
    """Parse a stored Avro record schema (commit ``extraMetadata.schema`` or ``hoodie.table.create.schema``).

    Raises:
        InvalidSchemaError: not JSON, or not a JSON object of type record.

    Example:
        >>> parse_avro_schema('{"type":"record","name":"r","fields":[]}')["name"]
        'r'
    """
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = "; it still has Java-properties escapes (\\:)" if "\\:" in text else ""
        raise InvalidSchemaError(f"not JSON ({exc.msg} at {exc.pos}){hint}", text=text) from exc
    if not isinstance(parsed, dict) or parsed.get("type") != "record" or "fields" not in parsed:
        raise InvalidSchemaError("the top level is not an Avro record", text=text)
    return parsed


# --------------------------------------------------------------------------------------------------------
# Avro -> Arrow
# --------------------------------------------------------------------------------------------------------

_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}

_TIMESTAMPS: dict[str, pa.DataType] = {
    # Millis widen to micros: that is what Spark reads them as, and what we write back.
    "timestamp-millis": pa.timestamp("us", tz=UTC_ZONE),
    "timestamp-micros": pa.timestamp("us", tz=UTC_ZONE),
    "timestamp-nanos": pa.timestamp("ns", tz=UTC_ZONE),
    "local-timestamp-millis": pa.timestamp("us"),
    "local-timestamp-micros": pa.timestamp("us"),
    "local-timestamp-nanos": pa.timestamp("ns"),
}


class _ArrowReader:
    """Avro -> Arrow, resolving references to named types defined earlier in the schema."""

    def __init__(self) -> None:
        self.named: dict[str, pa.DataType] = {}

    @staticmethod
    def _full_name(d: dict[str, Any], namespace: str) -> tuple[str, str]:
        """(full name, namespace for children) of a named type per the Avro spec."""
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidSchemaError(f"a {d.get('type')} has no name")
        if "." in name:
            return name, name.rsplit(".", 1)[0]
        ns = d.get("namespace", namespace) or ""
        return (f"{ns}.{name}" if ns else name), ns

    def fields(self, d: dict[str, Any], namespace: str) -> list[pa.Field]:
        full, child_ns = self._full_name(d, namespace)
        fields = d.get("fields")
        if not isinstance(fields, list):
            raise InvalidSchemaError(f"record {full} has no field list")
        out = []
        for f in fields:
            if not isinstance(f, dict) or "name" not in f or "type" not in f:
                raise InvalidSchemaError(f"record {full} has a field without name or type: {f!r}")
            # Unqualified names inside a record resolve in the record's namespace (Avro spec).
            out.append(pa.field(f["name"], self.type(f["type"], child_ns)))
        return out

    def type(self, t: Any, namespace: str) -> pa.DataType:
        if isinstance(t, str):
            return self._named_or_primitive(t, namespace)
        if isinstance(t, list):
            return self._union(t, namespace)
        if not isinstance(t, dict) or "type" not in t:
            raise InvalidSchemaError(f"unreadable Avro type {t!r}")
        kind = t["type"]
        logical = t.get("logicalType")
        if kind == "record" or kind == "error":
            full, _ = self._full_name(t, namespace)
            # Register before the fields so a recursive reference fails clearly instead of looping.
            self.named[full] = pa.null()
            result = pa.struct(self.fields(t, namespace))
            self.named[full] = result
            return result
        if kind == "enum":
            full, _ = self._full_name(t, namespace)
            self.named[full] = pa.string()
            return pa.string()
        if kind == "fixed":
            full, _ = self._full_name(t, namespace)
            result = _decimal(t) if logical == "decimal" else pa.binary()
            self.named[full] = result
            return result
        if kind == "array":
            return pa.list_(pa.field(LIST_ITEM, self.type(t.get("items"), namespace)))
        if kind == "map":
            return pa.map_(pa.string(), self.type(t.get("values"), namespace))
        if isinstance(kind, (dict, list)):
            return self.type(kind, namespace)  # {"type": {...}} wrapping
        if logical == "decimal" and kind == "bytes":
            return _decimal(t)
        if logical == "date" and kind == "int":
            return pa.date32()
        if logical in _TIMESTAMPS and kind == "long":
            return _TIMESTAMPS[logical]
        if logical == "time-millis" and kind == "int":
            return pa.time32("ms")
        if logical == "time-micros" and kind == "long":
            return pa.time64("us")
        # Unknown logical types fall back to the underlying type, as the Avro spec says.
        return self._named_or_primitive(kind, namespace)

    def _named_or_primitive(self, name: str, namespace: str) -> pa.DataType:
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        for candidate in ((f"{namespace}.{name}" if namespace and "." not in name else name), name):
            if candidate in self.named:
                if self.named[candidate] == pa.null():
                    raise InvalidSchemaError(f"recursive type {candidate} cannot be read as a table schema")
                return self.named[candidate]
        raise InvalidSchemaError(f"unknown Avro type {name!r}")

    def _union(self, branches: list[Any], namespace: str) -> pa.DataType:
        types = [self.type(b, namespace) for b in branches if b != "null"]
        if not types:
            return pa.null()
        if len(types) == 1:
            return types[0]
        # Spark's SchemaConverters: numeric unions widen; anything else becomes a struct of members.
        if set(types) == {pa.int32(), pa.int64()}:
            return pa.int64()
        if set(types) == {pa.float32(), pa.float64()}:
            return pa.float64()
        return pa.struct([pa.field(f"member{i}", t) for i, t in enumerate(types)])


def _decimal(t: dict[str, Any]) -> pa.DataType:
    precision, scale = t.get("precision"), t.get("scale", 0)
    if not isinstance(precision, int) or not isinstance(scale, int):
        raise InvalidSchemaError(f"decimal without integer precision/scale: {t!r}")
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def arrow_schema_from_avro(schema: dict[str, Any] | str) -> pa.Schema:
    """The Arrow schema of a stored Avro record schema; every field nullable.

    Reads both the commit form (``["null", T]``) and the create-schema form (``[T, "null"]``). Logical types:
    timestamp-micros/millis -> ``timestamp[us, UTC]``, local-timestamp-* -> ``timestamp[us]``, date ->
    date32, decimal (fixed or bytes) -> decimal128; enums read as strings. Fields are kept as stored, meta
    columns included if present.

    Raises:
        InvalidSchemaError: not an Avro record, or a type that cannot be resolved.

    Example:
        >>> arrow_schema_from_avro('{"type":"record","name":"r","fields":'
        ...     '[{"name":"ts","type":[{"type":"long","logicalType":"timestamp-micros"},"null"]}]}')
        ts: timestamp[us, tz=UTC]
    """
    parsed = parse_avro_schema(schema) if isinstance(schema, str) else schema
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise InvalidSchemaError("the top level is not an Avro record")
    reader = _ArrowReader()
    full, _ = reader._full_name(parsed, "")
    reader.named[full] = pa.null()
    return pa.schema(reader.fields(parsed, ""))

"""How a CDC query prints its ``before`` / ``after`` record images, as Hudi 0.14's Spark CDC relation does.

Two printers, by where the image comes from:

* a CDC log record (DATA_BEFORE_AFTER images, the DATA_BEFORE before image): Avro's ``GenericData.toString``
  (``{"id": 1, "name": "a"}``): a decimal is the Avro ``fixed`` Spark writes, printed as Java's
  ``Arrays.toString`` of its signed two's-complement bytes (``[0, 0, 0, 0, -106]`` for 1.50 as decimal(10,2));
  bytes as ``{"bytes": "<one char per byte>"}`` (Avro 1.8 to 1.11, what Spark 3 ships); maps and records as
  objects, arrays as lists;
* a row read from a base or log file: InternalRowToJsonStringConverter (Jackson, compact): binary as base64
  (Jackson's byte[]); maps and structs as objects, arrays as lists (Hudi 1.x's converter; 0.14 hands Spark's
  internal map and row objects to Jackson, which prints their bean properties, not their values); decimals as
  JSON numbers (Hudi hands Jackson Spark's Decimal, which it prints as the bean ``{"zero":false}``, losing the
  value: hoodpy prints the value instead).

Timestamps and dates print as Spark holds them: microseconds and days since the epoch. Pure Python (executors).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa

from hoodpy.schema import decimal_fixed_size

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _spark_value(value: Any) -> Any:
    """Timestamps and dates as Hudi's images hold them: microseconds / days since the epoch (Spark's internal
    values, and the Avro longs and ints of timestamp-micros and date)."""
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)
        delta = moment - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, dt.date):
        return (value - _EPOCH.date()).days
    return value


def _literal(value: Any) -> str | None:
    """null, true and false, as both printers write them; None for other values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return None


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _field_type(t: pa.DataType | None, name: str) -> pa.DataType | None:
    if t is not None and pa.types.is_struct(t) and t.get_field_index(name) >= 0:
        return t.field(name).type
    return None


def _item_type(t: pa.DataType | None) -> pa.DataType | None:
    if t is not None and (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        return t.value_type
    return t.item_type if t is not None and pa.types.is_map(t) else None


def _fixed_decimal(value: Decimal, t: pa.DataType | None) -> str:
    """A decimal as Java prints the Avro fixed Spark stores it in: its signed bytes."""
    if t is None or not pa.types.is_decimal(t):
        return str(value)  # no declared precision to size the fixed with
    unscaled = int(value.scaleb(t.scale))
    raw = unscaled.to_bytes(decimal_fixed_size(t.precision), "big", signed=True)
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in raw) + "]"


def avro_text(value: Any, t: pa.DataType | None = None) -> str:
    """A value as Avro's GenericData.toString prints it; ``t``: its Arrow type where known (decimals need
    their precision)."""
    value = _spark_value(value)
    literal = _literal(value)
    if literal is not None:
        return literal
    if isinstance(value, dict):
        if t is not None and pa.types.is_map(t):
            return "{" + ", ".join(f"{_string(str(k))}: {avro_text(v, t.item_type)}" for k, v in value.items()) + "}"
        return "{" + ", ".join(f"{_string(str(k))}: {avro_text(v, _field_type(t, str(k)))}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(avro_text(v, _item_type(t)) for v in value) + "]"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return _fixed_decimal(value, t)
    if isinstance(value, (bytes, bytearray)):
        return '{"bytes": ' + _string(bytes(value).decode("latin-1")) + "}"
    return _string(str(value))


def _java_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _jackson(value: Any) -> str:
    value = _spark_value(value)
    literal = _literal(value)
    if literal is not None:
        return literal
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(str(k))}:{_jackson(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_jackson(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, Decimal):
        return str(value)  # BigDecimal.toString's notation
    if isinstance(value, (bytes, bytearray)):
        return '"' + base64.b64encode(bytes(value)).decode("ascii") + '"'
    return _string(str(value))


def jackson_text(value: Any) -> str:
    """One value as Jackson prints it in a row image."""
    return _jackson(value)


def row_text(row: dict[str, Any]) -> str:
    """A row as Hudi's InternalRowToJsonStringConverter prints it (Jackson, compact, the columns in order)."""
    return _jackson(row)

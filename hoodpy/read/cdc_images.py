r"""How a CDC query prints its ``before`` / ``after`` record images, as Hudi 0.14's Spark CDC relation does.

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

Timestamps and dates print as Spark holds them: microseconds and days since the epoch. Strings are escaped as
each printer escapes them: both write ``\"``, ``\\``, ``\b``, ``\f``, ``\n``, ``\r``, ``\t`` and other control
characters as ``\u00XX`` (upper-case hex: Jackson's CharTypes, Avro's writeEscapedString); Avro also escapes
U+007F to U+009F and U+2000 to U+20FF, nothing else (``/`` and other non-ASCII stay as they are). Floating-point
numbers print as Java's ``Double.toString`` / ``Float.toString`` (``1.0E7``, ``1.0E-4``, ``0.001``, ``100.0``; the
shortest digits that round-trip, as JDK 19+ prints them); Jackson quotes NaN and the infinities
(QUOTE_NON_NUMERIC_NUMBERS, on by default), Avro's toString does not. Pure Python (executors).
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Any

import numpy as np
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


_NAMED_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_JACKSON_RE = re.compile('[\\x00-\\x1f"\\\\]')
_AVRO_RE = re.compile('[\\x00-\\x1f"\\\\\\x7f-\\x9f\\u2000-\\u20ff]')


def _escape(match: re.Match) -> str:
    ch = match.group()
    return _NAMED_ESCAPES.get(ch) or f"\\u{ord(ch):04X}"


def jackson_string(text: str) -> str:
    """A string as Jackson writes it (quoted, escaped)."""
    return '"' + _JACKSON_RE.sub(_escape, text) + '"'


def avro_string(text: str) -> str:
    """A string as Avro's GenericData.toString writes it (quoted, escaped)."""
    return '"' + _AVRO_RE.sub(_escape, text) + '"'


def java_float_text(value: float, single: bool = False) -> str:
    """A finite float as Java's Double.toString (``single``: Float.toString of a float32) prints it: plain
    notation from 10^-3 up to 10^7, else ``d.dddE<n>``; always a digit after the point, and as few digits as
    tell the value apart (of two-digit decimals, the nearest: Double.MIN_VALUE is ``4.9E-324``)."""
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    parse = (lambda text: float(np.float32(text))) if single else float
    shortest = Decimal(str(np.float32(value)) if single else repr(value))
    if len(shortest.normalize().as_tuple().digits) == 1:  # Java prints two digits: the nearest two that parse back
        nearest = Context(prec=2, rounding=ROUND_HALF_EVEN).plus(Decimal(value))
        shortest = nearest if parse(str(nearest)) == value else shortest
    sign, coefficient, exponent = shortest.normalize().as_tuple()
    text = "".join(map(str, coefficient))
    point = len(coefficient) + int(exponent)  # where the decimal point goes after text's first digit, minus one
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole, fraction = text[:point].ljust(point, "0"), text[point:]
        return f"{prefix}{whole}.{fraction or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


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
            return "{" + ", ".join(f"{avro_string(str(k))}: {avro_text(v, t.item_type)}"
                                   for k, v in value.items()) + "}"
        return "{" + ", ".join(f"{avro_string(str(k))}: {avro_text(v, _field_type(t, str(k)))}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(avro_text(v, _item_type(t)) for v in value) + "]"
    if isinstance(value, float):
        return _java_double(value, t)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return _fixed_decimal(value, t)
    if isinstance(value, (bytes, bytearray)):
        return '{"bytes": ' + avro_string(bytes(value).decode("latin-1")) + "}"
    return avro_string(str(value))


def _non_finite(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    return ("Infinity" if value > 0 else "-Infinity") if math.isinf(value) else None


def _java_double(value: float, t: pa.DataType | None = None) -> str:
    special = _non_finite(value)
    return special if special is not None else java_float_text(value, t is not None and pa.types.is_float32(t))


def _jackson(value: Any) -> str:
    value = _spark_value(value)
    literal = _literal(value)
    if literal is not None:
        return literal
    if isinstance(value, dict):
        return "{" + ",".join(f"{jackson_string(str(k))}:{_jackson(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_jackson(v) for v in value) + "]"
    if isinstance(value, float):
        return jackson_float(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)  # BigDecimal.toString's notation
    if isinstance(value, (bytes, bytearray)):
        return '"' + base64.b64encode(bytes(value)).decode("ascii") + '"'
    return jackson_string(str(value))


def jackson_float(value: float, single: bool = False) -> str:
    """A float as Jackson writes it: Java's toString, NaN and the infinities quoted."""
    special = _non_finite(value)
    return f'"{special}"' if special is not None else java_float_text(value, single)


def jackson_text(value: Any) -> str:
    """One value as Jackson prints it in a row image."""
    return _jackson(value)


def row_text(row: dict[str, Any]) -> str:
    """A row as Hudi's InternalRowToJsonStringConverter prints it (Jackson, compact, the columns in order)."""
    return _jackson(row)

"""Read filters: ``(column, op, value)`` triples, checked and bound to their column's type.

``HoodieTable.read(filters=...)`` both prunes files with its filters (partition values, record-key ranges,
footer statistics, evaluated in Python) and applies them as Spark column expressions. Left to Spark's
implicit casts, a value of another type than its column makes the answer depend on the session's ANSI
mode (``id IN (9.0, '20')`` on a BIGINT: ANSI compares numbers and finds 9 and 20, non-ANSI compares text
and finds only 20), while the pruning would follow Python's rules. So each value is first *bound*: turned
into a value of the column's type, and both sides use the bound value, whose literal Spark compares
without any string cast:

* integer columns: integers; a float or decimal with an integral value becomes that integer, other
  numbers stay numbers (compared numerically, so ``id = 9.5`` matches nothing and ``id < 9.5`` is
  ``id <= 9``); a string must spell a number (``'20'``, ``' 9.0'``) and is read as one;
* DOUBLE / FLOAT columns: numbers as (64-bit) floats, so a FLOAT column is compared exactly after
  widening (``f = 16777217`` matches no FLOAT; non-ANSI Spark SQL would round the literal to 32 bits); a
  string must spell a number (``'NaN'`` and ``'Infinity'`` included);
* DECIMAL columns: numbers and numeric strings as ``Decimal``;
* STRING columns: strings; an integer or a boolean as its text (``9`` -> ``'9'``, as CAST does);
* BOOLEAN columns: booleans, or the strings ``'true'`` / ``'false'``;
* DATE columns: dates, or ISO strings (``'2024-01-31'``);
* anything else (timestamps, nested types), a column the schema does not have, and NULL: unchanged.

A value with no such reading (``'abc'`` against a number column, ``1.5`` against a string column, NaN
against an integer column) raises :class:`~hoodpy.errors.InvalidConfigError` naming the filter, before
anything is read. In ``in`` / ``not in`` lists, numbers an integer column can never equal are dropped.
Column names are matched case-insensitively (as Spark resolves them) and take the schema's spelling.

Example:
    >>> bind_filters([("ID", "in", [9.0, "20", 9.5])], StructType([StructField("id", LongType())]))
    [('id', 'in', [9, 20])]
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegralType,
    StringType,
    StructType,
)

from hoodpy.errors import InvalidConfigError

Filter = tuple[str, str, Any]
OPS = frozenset({"=", "==", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"})
_LISTS = ("in", "not in")


def check_filters(filters: Sequence[Filter]) -> list[Filter]:
    """The filters with lower-cased ops; InvalidConfigError for anything not ``(column, op, value)``."""
    out = []
    for f in filters:
        if not (isinstance(f, (tuple, list)) and len(f) == 3) or str(f[1]).lower() not in OPS:
            raise InvalidConfigError("filters", f, f"expected (column, op, value) with op in {sorted(OPS)}")
        op = str(f[1]).lower()
        if op in _LISTS and (isinstance(f[2], (str, bytes)) or not hasattr(f[2], "__iter__")):
            raise InvalidConfigError("filters", f, f"{op!r} takes a list of values")
        out.append((f[0], op, list(f[2]) if op in _LISTS else f[2]))
    return out


class _Unbindable(Exception):
    pass


def _field(schema: StructType, name: str) -> tuple[str, DataType] | None:
    """(name in the schema's spelling, type) of a column or dotted struct path; None if absent."""
    path, current, spelled = name.split("."), schema, []
    for i, part in enumerate(path):
        if not isinstance(current, StructType):
            return None
        match = next((f for f in current.fields if f.name == part), None) or \
            next((f for f in current.fields if f.name.lower() == part.lower()), None)
        if match is None:
            return None
        spelled.append(match.name)
        current = match.dataType
        if i == len(path) - 1:
            return ".".join(spelled), current
    return None


def _number(text: str) -> int | Decimal:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise _Unbindable("is not a number") from None
    if not value.is_finite():
        raise _Unbindable("is not a finite number")
    return int(value) if value == value.to_integral_value() else value


def _bind(value: Any, data_type: DataType) -> Any:
    if value is None:
        return None
    if isinstance(data_type, IntegralType):
        if isinstance(value, bool):
            raise _Unbindable("is a boolean")
        if isinstance(value, str):
            value = _number(value)
        if isinstance(value, float):
            if math.isnan(value):
                raise _Unbindable("is NaN")
            return int(value) if value.is_integer() else value
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise _Unbindable("is not a finite number")
            return int(value) if value == value.to_integral_value() else value
        if isinstance(value, int):
            return value
        raise _Unbindable("is not a number")
    if isinstance(data_type, (DoubleType, FloatType)):
        if isinstance(value, bool):
            raise _Unbindable("is a boolean")
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise _Unbindable("is not a number") from None
        if isinstance(value, (int, float, Decimal)):  # compared as a DOUBLE: a FLOAT column widens exactly
            return float(value)
        raise _Unbindable("is not a number")
    if isinstance(data_type, DecimalType):
        if isinstance(value, bool):
            raise _Unbindable("is a boolean")
        if isinstance(value, str):
            value = _number(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise _Unbindable("is not a finite number")
        if isinstance(value, (int, float, Decimal)):
            return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        raise _Unbindable("is not a number")
    if isinstance(data_type, StringType):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (str, int)):
            return str(value)
        raise _Unbindable("is not a string (compare a string column with strings or integers)")
    if isinstance(data_type, BooleanType):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _Unbindable("is not a boolean (true / false)")
    if isinstance(data_type, DateType):
        if isinstance(value, dt.datetime):
            if value.time() != dt.time() or value.tzinfo is not None:
                raise _Unbindable("is a timestamp, not a date")
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                raise _Unbindable("is not an ISO date (yyyy-mm-dd)") from None
        raise _Unbindable("is not a date")
    return value


def bind_filters(filters: Sequence[Filter], schema: StructType) -> list[Filter]:
    """Checked filters with each value bound to its column's type (see the module docstring)."""
    out = []
    for f in check_filters(filters):
        name, op, value = f
        found = _field(schema, str(name))
        if found is None or op in ("is null", "is not null"):
            out.append(f)
            continue
        spelled, data_type = found
        try:
            if op in _LISTS:
                bound = [_bind(v, data_type) for v in value]
                if isinstance(data_type, IntegralType):  # 9.5 equals no integer: it cannot change the result
                    bound = [v for v in bound if v is None or isinstance(v, int)]
                out.append((spelled, op, bound))
            else:
                out.append((spelled, op, _bind(value, data_type)))
        except _Unbindable as e:
            shown = next((v for v in (value if op in _LISTS else [value]) if _fails(v, data_type)), value)
            raise InvalidConfigError("filters", f, f"{shown!r} {e} (column {spelled} is "
                                     f"{data_type.simpleString()})") from None
    return out


def _fails(value: Any, data_type: DataType) -> bool:
    try:
        _bind(value, data_type)
        return False
    except _Unbindable:
        return True


def filter_column(f: Filter) -> Column:
    """The Spark condition of one (bound) filter."""
    name, op, value = f
    c = F.col(name)
    if op in ("=", "=="):
        return c == F.lit(value)
    if op in ("!=", "<>"):
        return c != F.lit(value)
    if op in _LISTS:
        inside = c.isin([F.lit(v) for v in value])
        return ~inside if op == "not in" else inside
    if op in ("is null", "is not null"):  # the value is ignored
        return c.isNull() if op == "is null" else c.isNotNull()
    return {"<": c < F.lit(value), "<=": c <= F.lit(value), ">": c > F.lit(value), ">=": c >= F.lit(value)}[op]

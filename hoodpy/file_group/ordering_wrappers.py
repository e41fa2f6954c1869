"""Delete-block ordering values as Hudi 1.x (table versions 8 and 9) writes them: Avro value wrappers.

Hudi 1.x serializes a delete record's ordering value with HoodieAvroUtils.wrapValueIntoAvro, so its
HoodieDeleteRecord.orderingVal is a union of one-field wrapper records, not table version 6's union of plain
Avro types (:data:`hoodpy.file_group.log_file.DELETE_RECORD_LIST_SCHEMA`):

  null, BooleanWrapper, IntWrapper, LongWrapper, FloatWrapper, DoubleWrapper, BytesWrapper, StringWrapper,
  DateWrapper, DecimalWrapper, TimeMicrosWrapper, TimestampMicrosWrapper, ArrayWrapper (indexes 0..12)

(apache/hudi ``HoodieDeleteRecordList.avsc``, 1.1). Several ordering fields (``hoodie.table.ordering.fields=a,b``,
Java's ArrayComparable) are an ArrayWrapper ``{wrappedValues: null | array<null | wrapper>}`` whose item union
also has LocalDateWrapper (index 12): the definition the metadata table's column_stats schema carries in Java
1.1's own files. A delete without an ordering value is IntWrapper(0) (Java's default ordering value, the
Integer 0): bytes ``04 00``, the same bytes as version 6's ``long 0``.
"""

from __future__ import annotations

import datetime
import decimal
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa

NAMESPACE = "org.apache.hudi.avro.model"
_DECIMAL = {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}
# Wrapper name -> its value's Avro type, in the orderingVal union's order.
_SCALARS = (
    ("BooleanWrapper", "boolean"), ("IntWrapper", "int"), ("LongWrapper", "long"), ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"), ("BytesWrapper", "bytes"), ("StringWrapper", "string"), ("DateWrapper", "int"),
    ("DecimalWrapper", _DECIMAL), ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", "long"),
)
_LOCAL_DATE = ("LocalDateWrapper", "int")


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": NAMESPACE, "fields": [{"name": "value", "type": value_type}]}


_ARRAY_WRAPPER = {
    "type": "record", "name": "ArrayWrapper", "namespace": NAMESPACE, "fields": [{
        "name": "wrappedValues", "default": None,
        "type": ["null", {"type": "array", "items": ["null", *(f"{NAMESPACE}.{n}" for n, _ in _SCALARS),
                                                     _wrapper(*_LOCAL_DATE)]}]}],
}

DELETE_RECORD_LIST_SCHEMA_1X = {
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": NAMESPACE,
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "default": None,
             "type": ["null", *(_wrapper(n, t) for n, t in _SCALARS), _ARRAY_WRAPPER]},
        ]}}}],
}

NO_ORDERING_1X = (f"{NAMESPACE}.IntWrapper", {"value": 0})  # Java's default ordering value, Integer 0
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DAY = datetime.date(1970, 1, 1)


@lru_cache(maxsize=1)
def delete_schema_1x() -> Any:
    return fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA_1X)


def _wrapper_of(arrow_type: pa.DataType) -> str | None:
    """The wrapper Java picks for a value of ``arrow_type`` (the Java class Spark hands it): None where Java
    has none."""
    t = arrow_type
    if pa.types.is_boolean(t):
        return "BooleanWrapper"
    if pa.types.is_integer(t):
        return "LongWrapper" if t.bit_width == 64 else "IntWrapper"
    if pa.types.is_float32(t):
        return "FloatWrapper"
    if pa.types.is_floating(t):
        return "DoubleWrapper"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "StringWrapper"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "BytesWrapper"
    if pa.types.is_date(t):
        return "DateWrapper"
    if pa.types.is_decimal(t):
        return "DecimalWrapper"
    if pa.types.is_timestamp(t):
        return "TimestampMicrosWrapper"
    return None


def _wrapped_value(name: str, value: Any) -> Any:
    if name == "DateWrapper" and isinstance(value, datetime.date):
        return (value - _EPOCH_DAY).days
    if name == "TimestampMicrosWrapper" and isinstance(value, datetime.datetime):
        naive = value.astimezone(datetime.timezone.utc).replace(tzinfo=None) if value.tzinfo else value
        return (naive - _EPOCH) // datetime.timedelta(microseconds=1)
    if name == "DecimalWrapper":
        return decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-_DECIMAL["scale"]))
    if name in ("FloatWrapper", "DoubleWrapper"):
        return float(value)
    return value


def wrap(value: Any, arrow_type: pa.DataType | None) -> tuple[str, dict[str, Any]] | None:
    """One field's ordering value as the wrapper union branch Java writes (``(full name, record)``); None
    for a null value, or a type Java wraps in none of the delete union's wrappers."""
    name = _wrapper_of(arrow_type) if arrow_type is not None else None
    if value is None or name is None:
        return None
    return f"{NAMESPACE}.{name}", {"value": _wrapped_value(name, value)}


def wrap_tuple(values: tuple[Any, ...], arrow_types: list[pa.DataType]) -> tuple[str, dict[str, Any]] | None:
    """Several fields' ordering values as Java's ArrayWrapper (an ArrayComparable); None when a value is
    null (Java's mergers cannot compare such a tuple) or a field's type has no wrapper."""
    wrapped = [wrap(v, t) for v, t in zip(values, arrow_types, strict=True)]
    return None if any(w is None for w in wrapped) else (f"{NAMESPACE}.ArrayWrapper", {"wrappedValues": wrapped})


def delete_orderings(deletes: pa.Table, fields: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """Each delete's orderingVal as Hudi 1.x writes it: the ``fields`` values of its row (one field: its
    wrapper; several: an ArrayWrapper), IntWrapper(0) where there are none (no ``fields``, a null, a type
    without a wrapper): such a delete always wins. hudi-rs 0.5 refuses the null branch, so it is never used."""
    if not fields:
        return [NO_ORDERING_1X] * deletes.num_rows
    columns = [deletes.column(f) for f in fields]
    types = [c.type for c in columns]
    rows = zip(*(c.to_pylist() for c in columns), strict=True)
    if len(fields) == 1:
        return [wrap(v, types[0]) or NO_ORDERING_1X for (v,) in rows]
    return [wrap_tuple(values, types) or NO_ORDERING_1X for values in rows]


def unwrap(datum: Any) -> Any:
    """A decoded orderingVal (read with ``return_record_name``) as a Python value: the wrapped value (dates
    as ``datetime.date``, timestamps as naive UTC ``datetime``), a tuple for an ArrayWrapper, None for null."""
    if datum is None:
        return None
    name, record = datum
    short = name.rsplit(".", 1)[-1]
    if short == "ArrayWrapper":
        return tuple(unwrap(v) for v in record["wrappedValues"] or ())
    value = record["value"]
    if short in ("DateWrapper", "LocalDateWrapper"):
        return _EPOCH_DAY + datetime.timedelta(days=value)
    if short == "TimestampMicrosWrapper":
        return _EPOCH + datetime.timedelta(microseconds=value)
    return value

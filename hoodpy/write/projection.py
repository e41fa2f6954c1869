"""The batch's column projection as SQL text.

Every Column built through the PySpark API is a chain of driver->JVM calls (``F.col(name).cast(type).alias(name)``
costs ~25, half of them py4j's reference releases), and the write projects every column of the batch: on a
16-column TPC-H batch that was a third of an upsert's ~2,100 JVM calls. ``selectExpr`` takes the whole
projection as strings in one call. Only atomic types are written as SQL text (nested types keep their
nullability only through a DataType, so a projection naming one is built as Columns).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType, BooleanType, ByteType, DataType, DateType, DecimalType, DoubleType, FloatType, IntegerType,
    LongType, ShortType, StringType, StructType, TimestampNTZType, TimestampType,
)

_ATOMIC = (BinaryType, BooleanType, ByteType, DateType, DecimalType, DoubleType, FloatType, IntegerType, LongType,
           ShortType, StringType, TimestampNTZType, TimestampType)


def quoted(name: str) -> str:
    """``name`` as a Spark SQL identifier (a dot in it stays part of the name)."""
    return "`" + name.replace("`", "``") + "`"


def literal(value: str) -> str:
    """``value`` as a Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def field_reference(name: str) -> str | None:
    """What ``F.col(name)`` refers to, as SQL text; None when ``name`` holds a dot or a backtick (F.col's own
    resolution applies then: a nested field, or a column whose name has a dot)."""
    if "`" in name or "." in name:
        return None
    return quoted(name)


def conformed(records: DataFrame, leading: tuple[str, ...], target: StructType) -> DataFrame:
    """``records`` as its ``leading`` columns followed by ``target``'s fields in order: each cast to its target
    type where the batch's differs, missing ones as typed nulls."""
    have = {f.name: f.dataType for f in records.schema.fields}
    if not all(isinstance(f.dataType, _ATOMIC) for f in target.fields):
        return records.select(*leading, *[_column(have, f.name, f.dataType).alias(f.name) for f in target.fields])
    exprs = [quoted(c) for c in leading]
    for f in target.fields:
        name = quoted(f.name)
        if f.name not in have:
            exprs.append(f"CAST(NULL AS {f.dataType.simpleString()}) AS {name}")
        elif have[f.name] == f.dataType:
            exprs.append(name)
        else:
            exprs.append(f"CAST({name} AS {f.dataType.simpleString()}) AS {name}")
    return records.selectExpr(*exprs)


def _column(have: dict[str, DataType], name: str, data_type: DataType):
    return F.col(quoted(name)).cast(data_type) if name in have else F.lit(None).cast(data_type)

"""Column types as each base file's writer recorded them, where they differ from the table schema by one of
Hudi's type promotions (int -> long / float / double / string, long -> float / double / string, float ->
double / string, bytes <-> string). A read takes such files with their own types and casts to the table's,
as Hudi and hudi-rs read an evolved schema; Spark's parquet reader refuses a file column of another
physical type.

Hudi 1.1 records the partition column of a TimestampBasedKeyGenerator table as a string in its table schema
from the first write that evolves the schema on, while the earlier files hold the source column (int64).
The writer schema of a base file is the one its commit recorded (commit metadata ``schema``); files of
archived commits, or of commits that recorded none, are taken as written with the table schema.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from hoodpy.file_group.file_group import BaseFile
from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema
from hoodpy.timeline.timeline import Timeline

_PROMOTIONS: dict[type[DataType], tuple[type[DataType], ...]] = {
    IntegerType: (LongType, FloatType, DoubleType, StringType),
    LongType: (FloatType, DoubleType, StringType),
    FloatType: (DoubleType, StringType),
    BinaryType: (StringType,),
    StringType: (BinaryType,),
}


def promoted(written: DataType, table: DataType) -> bool:
    """Whether Hudi reads a column written as ``written`` as ``table`` (a type promotion)."""
    return type(table) in _PROMOTIONS.get(type(written), ())


def written_schemas(timeline: Timeline, files: Iterable[BaseFile], schema: StructType) -> dict[str, StructType]:
    """By base file path: the schema to read the file with, for files whose writer recorded a promotable
    other type for some of ``schema``'s columns (``schema`` with those columns' types replaced). Files read
    with ``schema`` as is are left out."""
    by_instant: dict[str, StructType | None] = {}
    by_text: dict[str, StructType | None] = {}  # commits mostly record one schema: convert it once
    out = {}
    for bf in files:
        if bf.instant_time not in by_instant:
            by_instant[bf.instant_time] = _written_schema(timeline, bf.instant_time, schema, by_text)
        if (written := by_instant[bf.instant_time]) is not None:
            out[bf.path] = written
    return out


def _written_schema(timeline: Timeline, instant_time: str, schema: StructType,
                    by_text: dict[str, StructType | None]) -> StructType | None:
    instant = next((i for i in timeline.completed_commits() if i.timestamp == instant_time), None)
    text = timeline.commit_metadata(instant).schema if instant is not None else None
    if not text:
        return None
    if text not in by_text:
        by_text[text] = _promoted_schema(text, schema)
    return by_text[text]


def _promoted_schema(text: str, schema: StructType) -> StructType | None:
    types = {f.name: f.dataType for f in from_arrow_schema(arrow_schema_from_avro(parse_avro_schema(text)),
                                                            prefer_timestamp_ntz=True).fields}
    fields = [StructField(f.name, types[f.name], f.nullable)
              if f.name in types and promoted(types[f.name], f.dataType) else f for f in schema.fields]
    return StructType(fields) if fields != list(schema.fields) else None

"""The table schema as Hudi stores it (Avro JSON), its Arrow form, and the rules for evolving it.

Hudi 0.14 keeps the writer schema as an Avro record in commit metadata (``extraMetadata.schema``) and in
``hoodie.table.create.schema``; readers such as hudi-rs take the table schema from there. hoodpy converts
between that Avro form and Arrow, exactly as Spark's ``SchemaConverters`` plus Hudi's
``AvroConversionUtils`` do, and decides what schema a table has after a batch is written.

Every Arrow type maps onto one Avro type, so each Arrow schema has a *normal form*: the Arrow schema that
reading the stored Avro back yields (all fields nullable, int8/int16 widened to int32, any timestamp unit or
zone folded into microseconds UTC, large/dictionary types unwrapped). :func:`evolve_schema` and
:func:`normalize_arrow_schema` return that form, so what is written and what is read back agree.

Example:
    >>> import pyarrow as pa
    >>> avro = avro_schema_from_arrow(pa.schema([("id", pa.int32())]), "trips")
    >>> avro_schema_to_json(avro)[:70]
    '{"type":"record","name":"trips_record","namespace":"hoodie.trips","fie'
    >>> arrow_schema_from_avro(avro)
    id: int32
"""

from hoodpy.schema.avro import (
    InvalidSchemaError,
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    avro_schema_to_json,
    decimal_fixed_size,
    parse_avro_schema,
    sanitize_avro_name,
    to_create_schema_form,
)
from hoodpy.schema.evolution import TYPE_PROMOTIONS, evolve_schema, promotes
from hoodpy.schema.normal_form import IS_DELETED_COLUMN, normalize_arrow_schema, with_meta_columns


__all__ = [
    "IS_DELETED_COLUMN",
    "InvalidSchemaError",
    "TYPE_PROMOTIONS",
    "arrow_schema_from_avro",
    "avro_schema_from_arrow",
    "avro_schema_to_json",
    "decimal_fixed_size",
    "evolve_schema",
    "normalize_arrow_schema",
    "parse_avro_schema",
    "promotes",
    "sanitize_avro_name",
    "to_create_schema_form",
    "with_meta_columns",
]

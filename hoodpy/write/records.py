"""Incoming records in Spark: record keys, partition paths, delete flags, validation and combining."""

from __future__ import annotations

import re
from functools import reduce

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    StringType,
    StructType,
    TimestampType,
)

from hoodpy.config import ordering_fields
from hoodpy.errors import InvalidRecordError
from hoodpy.keygen import (
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    ESCAPED_CHARS,
    NULL_RECORDKEY_PLACEHOLDER,
    TIMESTAMP,
    KeyGenerator,
)
from hoodpy.meta_fields import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.schema import IS_DELETED_COLUMN
from hoodpy.write.merge import INVALID_KEY, OP, OP_DELETE, OP_UPSERT
from hoodpy.write.projection import field_reference, literal
from hoodpy.write.task_combine import BATCH_SEQ as _BATCH_SEQ
# In front of a generated key that still lacks its instant time, in an upsert that also carries stored keys (see
# keyed_records): no key Hudi generates or hoodpy reads from a table starts with it.
_NEW_KEY_MARK = "\x00"
# In front of the message of a record a Spark stage refused (checked_in_stage), to find it in Spark's error.
_REFUSAL = "hoodpy refused a record: "
# Columns keyed_records adds in front of the data columns.
WORKING_COLUMNS = (RECORD_KEY, PARTITION_PATH, OP, INVALID_KEY)


def _blank(c: Column) -> Column:
    return c.isNull() | (c == F.lit(""))


def record_key_column(keygen: KeyGenerator) -> tuple[Column, Column]:
    """(record key, is-invalid) expressions: a null or empty simple key, or an all-null composite key."""
    refs = [field_reference(f) for f in keygen.record_key_fields]
    if all(refs):
        return _record_key_sql(keygen, refs)
    parts = [F.col(f).cast("string") for f in keygen.record_key_fields]
    if not keygen.composite_record_key:
        return parts[0], _blank(parts[0])
    encoded = [
        F.concat(F.lit(f"{name}:"),
                 F.when(p.isNull(), F.lit(NULL_RECORDKEY_PLACEHOLDER))
                 .when(p == F.lit(""), F.lit(EMPTY_RECORDKEY_PLACEHOLDER))
                 .otherwise(p))
        for name, p in zip(keygen.record_key_fields, parts, strict=True)
    ]
    all_blank = _blank(parts[0])
    for p in parts[1:]:
        all_blank = all_blank & _blank(p)
    return F.concat_ws(",", *encoded), all_blank


def _record_key_sql(keygen: KeyGenerator, refs: list[str]) -> tuple[Column, Column]:
    """:func:`record_key_column` as SQL text: a few JVM calls instead of ~30 per key field (see projection)."""
    parts = [f"CAST({r} AS STRING)" for r in refs]
    blank = [f"({p} IS NULL OR {p} = '')" for p in parts]
    if not keygen.composite_record_key:
        return F.expr(parts[0]), F.expr(blank[0])
    encoded = [f"concat({literal(name + ':')}, CASE WHEN {p} IS NULL THEN {literal(NULL_RECORDKEY_PLACEHOLDER)} "
               f"WHEN {p} = '' THEN {literal(EMPTY_RECORDKEY_PLACEHOLDER)} ELSE {p} END)"
               for name, p in zip(keygen.record_key_fields, parts, strict=True)]
    return F.expr(f"concat_ws(',', {', '.join(encoded)})"), F.expr(" AND ".join(blank))


def escaped(value: Column) -> Column:
    """Hudi's escapePathName (partition path url-encoding) as a Spark expression."""
    for c in ESCAPED_CHARS:
        value = F.replace(value, F.lit(c), F.lit(f"%{ord(c):02X}"))
    return value


def timestamp_segment_column(keygen: KeyGenerator, name: str, dtype: DataType) -> Column:
    """A TIMESTAMP partition field's path segment: :meth:`KeyGenerator.timestamp_segments` in a vectorized
    UDF. Timestamps and dates enter as the numbers Hudi's Avro records hold (epoch micros, epoch days; a
    timestamp without time zone arrives as its wall clock, Avro's local-timestamp-micros)."""
    value = F.col(name)
    if isinstance(dtype, TimestampType):
        value = F.unix_micros(value)
    elif isinstance(dtype, DateType):
        value = F.unix_date(value)

    @F.pandas_udf(StringType())
    def segments(values: pd.Series) -> pd.Series:
        return keygen.timestamp_segments(name, pa.Array.from_pandas(values)).to_pandas()

    return segments(value)


def partition_path_column(keygen: KeyGenerator, schema: StructType | None = None) -> Column:
    if not keygen.is_partitioned:
        return F.lit("")
    keygen.check_writable()  # on the driver, naming the missing key
    segments = []
    for name, kind in zip(keygen.partition_fields, keygen.partition_types, strict=True):
        if kind == TIMESTAMP:
            dtype = schema[name].dataType if schema is not None and name in schema.fieldNames() else StringType()
            segments.append(timestamp_segment_column(keygen, name, dtype))
            continue
        value = F.col(name).cast("string")
        value = F.when(_blank(value), F.lit(DEFAULT_PARTITION_PATH)).otherwise(value)
        if keygen.url_encode_partitioning:
            value = escaped(value)
        segments.append(F.concat(F.lit(f"{name}="), value) if keygen.hive_style_partitioning else value)
    return F.concat_ws("/", *segments)


def require_columns(schema: StructType, columns: list[str], what: str) -> None:
    present = set(schema.fieldNames())
    missing = [c for c in columns if c not in present]
    if missing:
        raise InvalidRecordError(
            f"The batch lacks {what} column(s) {', '.join(missing)}; it has {', '.join(schema.fieldNames())}"
        )


def generated_key_column() -> Column:
    """``<task partition>_<row>``: the part of an auto-generated key known before the instant time (Hudi's
    AutoRecordGenWrapperKeyGenerator: the Spark partition id and the row's index within that partition; the
    writer puts the instant time in front, :func:`with_key_instant`)."""
    row_in_partition = F.monotonically_increasing_id().bitwiseAND(F.lit((1 << 33) - 1))
    return F.concat_ws("_", F.spark_partition_id().cast("string"), row_in_partition.cast("string"))


def with_key_instant(records: DataFrame, instant_time: str) -> DataFrame:
    """Complete generated keys: ``<instantTime>_<partitionId>_<rowId>``, as Hudi's HoodieRecord.generateSequenceId."""
    return records.withColumn(RECORD_KEY, F.concat(F.lit(instant_time + "_"), F.col(RECORD_KEY)))


def complete_new_keys(records: DataFrame, instant_time: str) -> DataFrame:
    """:func:`with_key_instant` for the rows of an upsert that got a generated key (marked by keyed_records);
    the stored keys stay as they are."""
    key = F.col(RECORD_KEY)
    completed = F.concat(F.lit(instant_time + "_"), F.substring(key, 2, 1 << 30))
    return records.withColumn(RECORD_KEY, F.when(key.startswith(_NEW_KEY_MARK), completed).otherwise(key))


def complete_new_keys_arrow(keys: pa.Table, instant_time: str) -> pa.Table:
    """:func:`complete_new_keys` on the batch keys collected to the driver (:func:`collect_keys`)."""
    column = keys.column(RECORD_KEY).combine_chunks()
    completed = pc.binary_join_element_wise(instant_time + "_", pc.utf8_slice_codeunits(column, 1), "")
    new = pc.fill_null(pc.starts_with(column, _NEW_KEY_MARK), False)
    return keys.set_column(keys.schema.get_field_index(RECORD_KEY), RECORD_KEY, pc.if_else(new, completed, column))


def stored_key_column(df: DataFrame, what: str) -> tuple[Column, Column]:
    """(record key, is-invalid) from the ``_hoodie_record_key`` the rows carry: how a table with generated keys
    is updated or deleted from (rows read from it), as in Hudi."""
    if RECORD_KEY not in df.columns:
        raise InvalidRecordError(
            f"The table's record keys are generated (no hoodie.datasource.write.recordkey.field): {what} needs "
            f"the {RECORD_KEY} column of rows read from the table; the batch has {', '.join(df.columns)}")
    key = F.col(RECORD_KEY).cast("string")
    return key, _blank(key)


def keyed_records(df: DataFrame, keygen: KeyGenerator, *, deletes: bool = False,
                  with_partition: bool = True, generate_keys: bool = False) -> DataFrame:
    """``df`` minus any meta columns, plus record key, partition path and operation columns.

    ``deletes`` marks every row a delete (the delete operation); otherwise rows whose
    ``_hoodie_is_deleted`` is true are deletes. ``with_partition=False`` leaves the partition path null
    (a delete by key alone, located through a global lookup). A table with generated keys
    (:attr:`KeyGenerator.auto_keys`) takes keys from ``_hoodie_record_key``, or with ``generate_keys``
    (inserts) gets new ones (:func:`generated_key_column`, completed by :func:`with_key_instant`). In an upsert
    there, a non-deleted row whose ``_hoodie_record_key`` is null is a new record and gets a generated key too
    (completed by :func:`complete_new_keys`): Hudi's MERGE INTO on a table without a primary key writes the
    matched rows with their stored keys and the inserted ones with new keys in one batch.
    """
    schema = df.schema
    data = StructType([f for f in schema.fields if f.name not in META_COLUMNS])  # no DataFrame for it: JVM calls
    if not keygen.auto_keys:
        key, invalid = record_key_column(keygen)
    elif generate_keys:
        key, invalid = generated_key_column(), F.lit(False)
    else:
        key, invalid = stored_key_column(df, "a delete" if deletes else "an upsert")
    if deletes:
        op = F.lit(OP_DELETE)
    elif IS_DELETED_COLUMN in data.fieldNames():
        if not isinstance(data[IS_DELETED_COLUMN].dataType, BooleanType):
            raise InvalidRecordError(f"Column {IS_DELETED_COLUMN} must be boolean, "
                                     f"not {data[IS_DELETED_COLUMN].dataType.simpleString()}")
        op = F.when(F.coalesce(F.col(IS_DELETED_COLUMN), F.lit(False)), F.lit(OP_DELETE)).otherwise(
            F.lit(OP_UPSERT))
    else:
        op = F.lit(OP_UPSERT)
    if keygen.auto_keys and not generate_keys:
        new = F.col(RECORD_KEY).isNull() & (op == OP_UPSERT)
        key = F.when(new, F.concat(F.lit(_NEW_KEY_MARK), generated_key_column())).otherwise(key)
        invalid = invalid & ~new
    partition = partition_path_column(keygen, data) if with_partition else F.lit(None).cast("string")
    out = df.select(  # df: the key may come from its _hoodie_record_key; the data columns are data's
        key.alias(RECORD_KEY), partition.alias(PARTITION_PATH), op.cast("int").alias(OP),
        invalid.alias(INVALID_KEY), *[df[c] for c in data.fieldNames() if c != IS_DELETED_COLUMN],
    )
    return out


def validate(records: DataFrame, keygen: KeyGenerator, ordering_field: str | None, *,
             count_by: str | None = None) -> tuple:
    """Fail, naming the problem, on null record keys or null ordering values; else return the batch's
    partition paths, sorted, and how many of its records are upserts (one Spark job for all). With
    ``count_by`` (a column), the same job also counts the records per (partition path, value of that column),
    returned third."""
    groups = _validated_groups(records, keygen, ordering_field, PARTITION_PATH, *([count_by] if count_by else []))
    partitions = sorted({g[PARTITION_PATH] for g in groups if g[PARTITION_PATH] is not None})
    upserts = sum(g["upserts"] for g in groups)
    if count_by is None:
        return partitions, upserts
    return partitions, upserts, {(g[PARTITION_PATH], g[count_by]): g["rows"] for g in groups}


def validate_by_partition(records: DataFrame, keygen: KeyGenerator, ordering_field: str | None,
                          ) -> dict[str | None, int]:
    """:func:`validate`, returning how many upserts each partition path the batch names gets (None: deletes
    by key alone); one Spark job."""
    return {g[PARTITION_PATH]: g["upserts"] for g in _validated_groups(records, keygen, ordering_field,
                                                                          PARTITION_PATH)}


def _validated_groups(records: DataFrame, keygen: KeyGenerator, ordering_field: str | None, *by: str) -> list:
    """Per group of ``by``: upserts and rows, after rejecting null keys and null ordering values."""
    aggs = [F.sum(F.col(INVALID_KEY).cast("long")).alias("bad_keys"),
            F.count(F.when(F.col(OP) == OP_UPSERT, 1)).alias("upserts"), F.count(F.lit(1)).alias("rows")]
    if ordering_field is not None:
        aggs.append(F.sum(F.when((F.col(OP) == OP_UPSERT) & _null_ordering(ordering_field), 1).otherwise(0))
                    .alias("bad_ordering"))
    groups = records.groupBy(*by).agg(*aggs).collect()
    _reject_invalid(records, keygen, ordering_field, sum(g["bad_keys"] or 0 for g in groups),
                    sum(g["bad_ordering"] or 0 for g in groups) if ordering_field is not None else 0)
    return groups


def _null_ordering(ordering_field: str) -> Column:
    """Whether a record lacks an ordering value: any of the ordering fields is null (Hudi's merge cannot
    compare such a tuple)."""
    return reduce(lambda a, b: a | b, [F.col(f).isNull() for f in ordering_fields(ordering_field)])


def _reject_invalid(records: DataFrame, keygen: KeyGenerator, ordering_field: str | None, bad_keys: int,
                    bad_ordering: int) -> None:
    if bad_keys:
        fields = keygen.record_key_fields or (RECORD_KEY,)
        examples = [r.asDict() for r in records.filter(F.col(INVALID_KEY))
                    .select(*[c for c in fields if c in records.columns]).limit(3).collect()]
        raise InvalidRecordError(f"{bad_keys} record(s) have {_null_key_problem(keygen)}", examples=examples)
    if bad_ordering:
        raise InvalidRecordError(f"{bad_ordering} record(s) have {_null_ordering_problem(ordering_field)}")


def _null_key_problem(keygen: KeyGenerator) -> str:
    """What a record with a null or empty key lacks, as the refusals name it."""
    return f"a null or empty record key (fields {', '.join(keygen.record_key_fields or (RECORD_KEY,))})"


def _null_ordering_problem(ordering_field: str) -> str:
    """What an upsert without an ordering value lacks, as the refusals name it."""
    several = " (every field of the list must be set)" if "," in ordering_field else ""
    return f"a null ordering (precombine) field {ordering_field!r}{several}"


def checked_in_stage(value: Column, keygen: KeyGenerator, ordering_field: str | None) -> Column:
    """``value``, computed only for records :func:`validate` accepts: a record with a null or empty key, or an upsert
    with a null ordering value, fails the Spark task that computes ``value`` (raise_error). Spark's error names
    the refusal (:func:`refused_in_stage`). The checks of :func:`validate` without a job of their own, for a
    column that a write's first stage computes for every record."""
    checked = F.when(F.col(INVALID_KEY), F.raise_error(F.lit(f"{_REFUSAL}a record has {_null_key_problem(keygen)}")))
    if ordering_field is not None:
        checked = checked.when((F.col(OP) == OP_UPSERT) & _null_ordering(ordering_field), F.raise_error(
            F.concat(F.lit(f"{_REFUSAL}a record has {_null_ordering_problem(ordering_field)} (record key "),
                     F.col(RECORD_KEY), F.lit(")"))))
    return checked.otherwise(value)


def refused_in_stage(error: BaseException) -> InvalidRecordError | None:
    """The InvalidRecordError of a record :func:`checked_in_stage` refused, if Spark's ``error`` reports one."""
    found = re.search(re.escape(_REFUSAL) + r"(.*?)(?: SQLSTATE: \w+)?(?:\n|$)", str(error))
    return None if found is None else InvalidRecordError(found.group(1).strip())


def collect_keys(records: DataFrame, keygen: KeyGenerator, ordering_field: str | None,
                 ) -> tuple[pa.Table, list[str]]:
    """:func:`validate` that also brings the batch's (record key, partition path, op) to the driver as Arrow, in
    the same single Spark job, for driver-side index lookups. Fails as :func:`validate` does."""
    cols = [RECORD_KEY, PARTITION_PATH, OP, INVALID_KEY]
    if ordering_field is not None:
        cols.append(((F.col(OP) == OP_UPSERT) & _null_ordering(ordering_field)).alias("_bad_ordering"))
    table = records.select(*cols).toArrow()
    bad_keys = pc.sum(table.column(INVALID_KEY).cast(pa.int64())).as_py() or 0
    bad_ordering = (pc.sum(table.column("_bad_ordering").cast(pa.int64())).as_py() or 0) \
        if ordering_field is not None else 0
    _reject_invalid(records, keygen, ordering_field, bad_keys, bad_ordering)
    partitions = pc.unique(table.column(PARTITION_PATH).combine_chunks()).drop_null().to_pylist()
    return table.select([RECORD_KEY, PARTITION_PATH, OP]), sorted(partitions)


def has_duplicate_keys(keys: pa.Table, *, by_partition: bool) -> bool:
    """Whether two rows of the collected batch share a record key (and partition, with ``by_partition``)."""
    columns = [RECORD_KEY, PARTITION_PATH] if by_partition else [RECORD_KEY]
    if by_partition and pc.count_distinct(keys.column(PARTITION_PATH), mode="all").as_py() <= 1:
        columns = [RECORD_KEY]  # one partition (or none named): grouping by the key alone is a third cheaper
    if columns == [RECORD_KEY]:  # one hash pass: a third of the CPU of Acero's threaded grouping (360k keys)
        return len(pc.unique(keys.column(RECORD_KEY))) != keys.num_rows
    return keys.select(columns).group_by(columns, use_threads=False).aggregate([]).num_rows != keys.num_rows


def combine(records: DataFrame, ordering_field: str | None, *, by_partition: bool) -> DataFrame:
    """One record per key: the largest ordering value wins (several fields: compared as a tuple, the first
    field first); on ties (or no ordering) the last in the batch."""
    keys = [RECORD_KEY, PARTITION_PATH] if by_partition else [RECORD_KEY]
    seq = with_batch_order(records)
    order = F.struct(*[F.col(f) for f in ordering_fields(ordering_field)], F.col(_BATCH_SEQ))
    value_cols = [c for c in seq.columns if c not in keys]
    best = seq.groupBy(*keys).agg(F.max_by(F.struct(*value_cols), order).alias("_r"))
    return best.select(*keys, "_r.*").drop(_BATCH_SEQ)


def with_batch_order(records: DataFrame) -> DataFrame:
    """Each record numbered by its position in the batch (ties between ordering values go to the last)."""
    return records.withColumn(_BATCH_SEQ, F.monotonically_increasing_id())


def drop_working_columns(records: DataFrame) -> DataFrame:
    return records.drop(INVALID_KEY)

"""The metadata table's ``column_stats`` partition: per base file and column, its min / max value, null and
value counts and sizes (HoodieMetadataColumnStats records, type 3), so that a query prunes files without opening
their parquet footers.

Layout (Java's HoodieTableMetadataUtil, checked on the Hudi 1.1 sample v9_txns_simple_meta):

* file groups ``col-stats-0000-0`` .. (``hoodie.metadata.index.column.stats.file.group.count``, 2); a record
  goes to file group ``abs(abs(String.hashCode(key)) % count)`` (Java's mapRecordKeyToFileGroupIndex);
* key = ``b64(xxh64(column)) + b64(xxh64(partition)) + b64(md5(file name))``: XXHash64 with seed 0xdabadaba
  (sign-extended) of the UTF-8 text, 8 bytes big-endian; MD5 16 bytes; standard base64. A non-partitioned
  table's partition is ``.``;
* min / max are wrapped values. Table versions 8 and 9 (Hudi 1.x) use the plain wrappers (Int, Long, String,
  Bytes, ...) and say what they hold in ``valueType`` (ValueType ordinal; a decimal is BytesWrapper of its
  unscaled big-endian two's complement with ``additionalInfo`` ``"precision,scale"``, a date IntWrapper of
  epoch days, a timestamp LongWrapper of micros); table version 6 (Hudi 0.14) leaves ``valueType`` null and
  uses DateWrapper for dates and DecimalWrapper (scale 15) for decimals;
* a file removed (cleaned, rolled back) gets a tombstone per column (``isDeleted``, min / max null, counts -1
  as Java's HoodieColumnRangeMetadata.stub); merging is HoodieMetadataPayload.mergeColumnStatsRecords: a
  tombstone on either side gives the newer record, else min of mins, max of maxes and sums of the counts.

The partition is initialised at ``00000000000000001`` (versions 8 and 9, as the sample) or
``<latest data instant>011`` (version 6: Java's createIndexInitTimestamp, offset 1 after files). Base files
(parquet) are indexed from their footers; log files of merge-on-read tables from the records of their data blocks
(each deltacommit adds the ranges of what it appended; merging folds them), so that data skipping can prune a
merge-on-read slice when its base file and every log file are ruled out.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import io
import struct
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.config.metadata import COLUMN_STATS_PARTITION, MetadataConfig
from hoodpy.errors import HFileFormatError, HoodieError, InvalidInstantError, MetadataTableError
from hoodpy.file_group.log_file import data_rows, effective_blocks
from hoodpy.file_group.naming import parse_log_file_name
from hoodpy.hfile import HFileReader, parsed_schema
from hoodpy.metadata_table.column_stats_vectorized import decode_stats_batch
from hoodpy.metadata_table.layout import MetadataBaseFile, MetadataLogFile, parse_base_file, parse_log_file
from hoodpy.metadata_table.reader import MetadataTable, ValidInstants, block_records
from hoodpy.metadata_table.records import NON_PARTITIONED_NAME
from hoodpy.schema.avro import arrow_schema_from_avro
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import LAYOUT_2, State
from hoodpy.timeline.timeline import Timeline

COLUMN_STATS = 3  # MetadataPartitionType.COLUMN_STATS record type
FILE_ID_PREFIX = "col-stats-"
INIT_INSTANT_V8 = "00000000000000001"
INIT_SUFFIX_V6 = "011"
# The meta columns Hudi 1.x indexes (the sample's records); the sequence number and file name it leaves out.
META_COLUMNS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")

_M64 = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                           9650029242287828579, 2870177450012600261)
_SEED = 0xFFFFFFFFDABADABA  # Java's int 0xdabadaba widened to long


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data: bytes, seed: int = _SEED) -> int:
    """XXHash64 of ``data`` (the reference algorithm; no library for it is installed)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed & _M64, (seed - _P1) & _M64]
        while i + 32 <= n:
            for j, lane in enumerate(struct.unpack_from("<4Q", data, i)):
                v[j] = _round(v[j], lane)
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for lane in v:
            h = (((h ^ _round(0, lane)) * _P1) + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * _P1 & _M64), 23) * _P2 + _P3) & _M64
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5 & _M64), 11) * _P1) & _M64
        i += 1
    h = ((h ^ (h >> 33)) * _P2) & _M64
    h = ((h ^ (h >> 29)) * _P3) & _M64
    return h ^ (h >> 32)


@lru_cache(maxsize=4096)  # a table's few columns and partitions, hashed for each of its files
def _b64_xxh(text: str) -> str:
    return base64.b64encode(xxh64(text.encode("utf-8")).to_bytes(8, "big")).decode("ascii")


def column_stats_key(column: str, partition_path: str, file_name: str) -> str:
    """The record key of a file's column (see the module docstring)."""
    return (file_key_prefix(column, partition_path)
            + base64.b64encode(hashlib.md5(file_name.encode("utf-8")).digest()).decode("ascii"))


def file_key_prefix(column: str, partition_path: str) -> str:
    """What the keys of a column's records of a partition's files start with (the file name's hash follows)."""
    return _b64_xxh(column) + _b64_xxh(partition_path or NON_PARTITIONED_NAME)


_PREFIX_CHARS = 24  # two base64 hashes of 8 bytes


def stats_by_file(stats: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(:func:`file_key_prefix`, fileName) -> the record of ``stats`` (key -> record): a file's record found by
    its name, as Java's ColumnStatsIndexSupport joins records to files, without hashing every file's name."""
    return {(key[:_PREFIX_CHARS], s.get("fileName")): s for key, s in stats.items()}


def java_string_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units, int32 arithmetic)."""
    h = 0
    units = text.encode("utf-16-be")
    for k in range(0, len(units), 2):
        h = (31 * h + (units[k] << 8 | units[k + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def shard_of(key: str, count: int) -> int:
    """The file group index of ``key`` among ``count`` (HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex)."""
    return abs(abs(java_string_hash(key)) % count)


def file_group_id(index: int) -> str:
    return f"{FILE_ID_PREFIX}{index:04d}-0"


def init_instant(layout: int, latest_data_instant: str | None) -> str:
    if layout == LAYOUT_2:
        return INIT_INSTANT_V8
    return (latest_data_instant or "00000000000000") + INIT_SUFFIX_V6


# -- which columns, and their values -----------------------------------------------------------------------------
def indexable(arrow_type: pa.DataType) -> bool:
    return not pa.types.is_nested(arrow_type) and not pa.types.is_null(arrow_type)


def columns_to_index(fields: Iterable[tuple[str, bool]], wanted: Sequence[str] = ()) -> list[str]:
    """Of ``(column, indexable)`` pairs (the table's columns, meta columns included), the indexed ones, in
    order: ``wanted`` (hoodie.metadata.index.column.stats.column.list) when given, else the meta columns Hudi 1.x
    indexes and every indexable data column."""
    fields = list(fields)
    ok = {name for name, can in fields if can}
    if wanted:
        return [c for c in wanted if c in ok]
    return [name for name, can in fields if can and (name in META_COLUMNS or not name.startswith("_hoodie_"))]


# ValueType ordinals (Hudi 1.x org.apache.hudi.stats.ValueType)
_NONE = 1  # a column without values (the v9 MOR fixture's record of a log file of delete blocks only)
_BOOLEAN, _INT, _LONG, _FLOAT, _DOUBLE, _STRING, _BYTES, _DECIMAL, _DATE = 2, 3, 4, 5, 6, 7, 8, 10, 12
_TIMESTAMP_MILLIS, _TIMESTAMP_MICROS = 15, 16
_NS = "org.apache.hudi.avro.model."
_V6_DECIMAL_SCALE = 15


def _unscaled_bytes(value: Decimal, scale: int) -> bytes:
    """Java BigInteger.toByteArray of the unscaled value at ``scale`` (minimal big-endian two's complement)."""
    unscaled = int(value.scaleb(scale).to_integral_value())
    return unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)


def _epoch_micros(value: dt.datetime, unit: str) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    delta = value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros // 1000 if unit == "ms" else micros


def wrap_value(value: Any, arrow_type: pa.DataType, versioned: bool) -> tuple[dict[str, Any] | None, Any]:
    """(wrapped min / max value for the Avro union, valueType) of a footer statistic; ``versioned``: table
    versions 8 and 9 (plain wrappers and a valueType) rather than 6."""
    if value is None:
        return None, None
    kind, wrapper, info = None, None, None
    if pa.types.is_boolean(arrow_type):
        kind, wrapper, value = _BOOLEAN, "BooleanWrapper", bool(value)
    elif pa.types.is_integer(arrow_type):
        kind, wrapper = (_LONG, "LongWrapper") if arrow_type.bit_width == 64 else (_INT, "IntWrapper")
        value = int(value)
    elif pa.types.is_float32(arrow_type) or pa.types.is_float16(arrow_type):
        kind, wrapper, value = _FLOAT, "FloatWrapper", float(value)
    elif pa.types.is_floating(arrow_type):
        kind, wrapper, value = _DOUBLE, "DoubleWrapper", float(value)
    elif pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        kind, wrapper = _STRING, "StringWrapper"
        value = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    elif pa.types.is_decimal(arrow_type):
        kind, info = _DECIMAL, f"{arrow_type.precision},{arrow_type.scale}"
        if versioned:
            wrapper, value = "BytesWrapper", _unscaled_bytes(Decimal(value), arrow_type.scale)
        else:  # the DecimalWrapper's decimal(30,15) logical type: fastavro scales a Decimal itself
            wrapper, value = "DecimalWrapper", Decimal(value).quantize(Decimal(1).scaleb(-_V6_DECIMAL_SCALE))
    elif pa.types.is_date(arrow_type):
        kind, wrapper = _DATE, "IntWrapper" if versioned else "DateWrapper"
        value = (value - dt.date(1970, 1, 1)).days if isinstance(value, dt.date) else int(value)
    elif pa.types.is_timestamp(arrow_type):
        kind, wrapper = (_TIMESTAMP_MILLIS if arrow_type.unit == "ms" else _TIMESTAMP_MICROS), "LongWrapper"
        value = _epoch_micros(value, arrow_type.unit) if isinstance(value, dt.datetime) else int(value)
    elif pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type) or pa.types.is_fixed_size_binary(
            arrow_type):
        kind, wrapper, value = _BYTES, "BytesWrapper", bytes(value)
    else:
        return None, None
    value_type = {"typeOrdinal": kind, "additionalInfo": info} if versioned else None
    return {"-type": _NS + wrapper, "value": value}, value_type


def unwrap_value(wrapped: Mapping[str, Any] | None, value_type: Mapping[str, Any] | None,
                 arrow_type: pa.DataType | None) -> Any:
    """A stored min / max as the Python value parquet statistics give for the column (pyarrow's types), so
    that filters compare against it as against a footer. ``arrow_type``: the column's type in the table."""
    if wrapped is None:
        return None
    value = wrapped.get("value")
    kind = (value_type or {}).get("typeOrdinal")
    if kind not in _CONVERTED_KINDS and _plain_type(arrow_type):
        return value  # most columns: the stored value as it is (thousands of files: skip the checks below)
    if arrow_type is not None and pa.types.is_decimal(arrow_type) or kind == _DECIMAL:
        if isinstance(value, bytes):
            scale = arrow_type.scale if arrow_type is not None and pa.types.is_decimal(arrow_type) else int(
                (value_type or {}).get("additionalInfo", "0,0").split(",")[1])
            return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
        return Decimal(value) if value is not None else None
    if (arrow_type is not None and pa.types.is_date(arrow_type)) or kind == _DATE:
        return dt.date(1970, 1, 1) + dt.timedelta(days=int(value)) if isinstance(value, int) else value
    if (arrow_type is not None and pa.types.is_timestamp(arrow_type)) or kind in (_TIMESTAMP_MICROS,
                                                                                   _TIMESTAMP_MILLIS):
        if isinstance(value, int):
            millis = kind == _TIMESTAMP_MILLIS or (kind is None and arrow_type is not None and arrow_type.unit == "ms")
            tz = dt.timezone.utc if arrow_type is None or arrow_type.tz is not None else None
            return dt.datetime(1970, 1, 1, tzinfo=tz) + dt.timedelta(microseconds=value * (1000 if millis else 1))
    return value


_CONVERTED_KINDS = frozenset((_DECIMAL, _DATE, _TIMESTAMP_MILLIS, _TIMESTAMP_MICROS))


@lru_cache(maxsize=256)
def _plain_type(arrow_type: pa.DataType | None) -> bool:
    """Whether :func:`unwrap_value` gives a stored value of a column of this type unchanged (unless its valueType
    says otherwise)."""
    return arrow_type is None or not (pa.types.is_decimal(arrow_type) or pa.types.is_date(arrow_type)
                                      or pa.types.is_timestamp(arrow_type))


# -- records ---------------------------------------------------------------------------------------------------
def stats_record(key: str, stats: Mapping[str, Any], file_name: str | None = None) -> dict[str, Any]:
    """A HoodieMetadataRecord of type 3 holding ``stats`` (a HoodieMetadataColumnStats datum); ``file_name`` fills
    ``_hoodie_file_name`` (a compacted base file's own name)."""
    return {
        "_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
        "_hoodie_partition_path": None, "_hoodie_file_name": file_name,
        "key": key, "type": COLUMN_STATS, "filesystemMetadata": None, "BloomFilterMetadata": None,
        "ColumnStatsMetadata": dict(stats), "recordIndexMetadata": None, "SecondaryIndexMetadata": None,
    }


def tombstone(file_name: str, column: str) -> dict[str, Any]:
    return {"fileName": file_name, "columnName": column, "minValue": None, "maxValue": None, "valueCount": -1,
            "nullCount": -1, "totalSize": -1, "totalUncompressedSize": -1, "isDeleted": True,
            "isTightBound": False, "valueType": None}


def footer_stats(metadata: pq.FileMetaData, file_name: str, columns: Sequence[str] | None,
                 versioned: bool) -> list[dict[str, Any]]:
    """HoodieMetadataColumnStats of the top-level ``columns`` (None: every indexable one) of a parquet file, from
    its footer: row groups folded (min of mins, max of maxes; counts and column-chunk sizes summed), as Java's
    ParquetUtils.readColumnStatsFromMetadata."""
    if metadata.num_row_groups == 0:
        return []  # Java folds statistics over row groups: a file of no rows (all deleted) gets no records
    schema = metadata.schema.to_arrow_schema()
    index = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    names = [f.name for f in schema if indexable(f.type)] if columns is None else list(columns)
    out = []
    for name in names:
        ci = index.get(name)
        if ci is None or schema.get_field_index(name) < 0:
            continue  # not in this file (an older schema)
        arrow_type = schema.field(name).type
        lo = hi = None
        values = nulls = size = raw = 0
        complete = True
        for rg in range(metadata.num_row_groups):
            chunk = metadata.row_group(rg).column(ci)
            values += chunk.num_values
            size += chunk.total_compressed_size
            raw += chunk.total_uncompressed_size
            stats = chunk.statistics
            if stats is None or not stats.has_null_count:
                complete = False
                continue
            nulls += stats.null_count
            if stats.has_min_max:
                lo = stats.min if lo is None or stats.min < lo else lo
                hi = stats.max if hi is None or stats.max > hi else hi
        if not complete:
            lo = hi = None
        out.append(_stats_datum(file_name, name, arrow_type, lo, hi, values, nulls, size, raw, versioned))
    return out


def _stats_datum(file_name: str, column: str, arrow_type: pa.DataType, lo: Any, hi: Any, values: int, nulls: int,
                 size: int, raw: int, versioned: bool) -> dict[str, Any]:
    """A HoodieMetadataColumnStats of one file's column."""
    wrapped_lo, value_type = wrap_value(lo, arrow_type, versioned)
    wrapped_hi, _ = wrap_value(hi, arrow_type, versioned)
    if value_type is None and versioned:
        value_type = wrap_value(_sample(arrow_type), arrow_type, versioned)[1]
    return {"fileName": file_name, "columnName": column, "minValue": wrapped_lo, "maxValue": wrapped_hi,
            "valueCount": values, "nullCount": nulls, "totalSize": size, "totalUncompressedSize": raw,
            "isDeleted": False, "isTightBound": False, "valueType": value_type}


def is_indexed_file(name: str) -> bool:
    """Whether column_stats indexes a data file: parquet base files and data log files (not CDC logs)."""
    return (name.endswith(".parquet") and not name.startswith(".")) or is_log_file(name)


def is_log_file(name: str) -> bool:
    return parse_log_file_name(name) is not None


def indexed_columns(avro_schema: str | None, wanted: Sequence[str] = ()) -> list[str]:
    """The columns indexed for a table of this (Avro) schema: what tombstones of a removed file name."""
    return columns_to_index(((f.name, indexable(f.type)) for f in table_arrow_schema(avro_schema)), wanted)


def base_file_stats(storage: Storage, partition_path: str, names: Sequence[str], wanted: Sequence[str],
                    versioned: bool) -> list[dict[str, Any]]:
    """HoodieMetadataColumnStats of base files ``names`` of a data partition, from their footers."""
    def one(name: str) -> list[dict[str, Any]]:
        rel = f"{partition_path}/{name}" if partition_path else name
        with storage.fs.open_input_file(storage.full_path(rel)) as f:
            metadata = pq.read_metadata(f)
        schema = metadata.schema.to_arrow_schema()
        columns = columns_to_index(((f.name, indexable(f.type)) for f in schema), wanted)
        return footer_stats(metadata, name, columns, versioned)
    with ThreadPoolExecutor(max_workers=8) as pool:
        return [s for stats in pool.map(one, names) for s in stats]


def table_arrow_schema(avro_schema: str | None) -> pa.Schema:
    """The columns a table's records carry: the indexed meta columns, then the data columns of its schema."""
    fields = [pa.field(c, pa.string()) for c in META_COLUMNS]
    if avro_schema:
        fields += [f for f in arrow_schema_from_avro(avro_schema) if not f.name.startswith("_hoodie_")]
    return pa.schema(fields)


def log_file_stats(storage: Storage, partition_path: str, names: Sequence[str], wanted: Sequence[str],
                   versioned: bool, schema: pa.Schema, instants: Container[str]) -> list[dict[str, Any]]:
    """HoodieMetadataColumnStats of data log files ``names`` of a data partition over the records of their data
    blocks of ``instants`` (a deltacommit's own; all committed ones when building), as Java's log-file column
    ranges: min / max / counts of the records written, sizes 0 (as the v9 fixture's log-file records). Delete
    blocks only: every column with no values and no range (valueType NONE in versions 8 and 9), as the fixture's
    record of a log file holding one delete block. A log file without blocks of ``instants`` gets none."""
    columns = columns_to_index(((f.name, indexable(f.type)) for f in schema), wanted)

    def one(name: str) -> list[dict[str, Any]]:
        rel = f"{partition_path}/{name}" if partition_path else name
        blocks = effective_blocks([(storage.full_path(rel), storage.read_bytes(rel))], instants).blocks
        if not blocks:
            return []
        tables = [data_rows(b, schema) for b in blocks if b.block_type != log_format.DELETE_BLOCK]
        if not any(t.num_rows for t in tables):
            none = {"typeOrdinal": _NONE, "additionalInfo": None} if versioned else None
            return [{**_stats_datum(name, c, pa.null(), None, None, 0, 0, 0, 0, False), "valueType": none}
                    for c in columns]
        rows = pa.concat_tables(tables, promote_options="default")
        out = []
        for column in columns:
            if column not in rows.column_names:
                continue
            data = rows.column(column)
            bounds = pc.min_max(data) if data.null_count < len(data) else None
            lo, hi = (bounds["min"].as_py(), bounds["max"].as_py()) if bounds is not None else (None, None)
            out.append(_stats_datum(name, column, data.type, lo, hi, len(data), data.null_count, 0, 0, versioned))
        return out
    with ThreadPoolExecutor(max_workers=8) as pool:
        return [s for stats in pool.map(one, names) for s in stats]


def _sample(arrow_type: pa.DataType) -> Any:
    """A value of the type, for the valueType of an all-null column."""
    if pa.types.is_decimal(arrow_type):
        return Decimal(0)
    if pa.types.is_date(arrow_type):
        return dt.date(1970, 1, 1)
    if pa.types.is_timestamp(arrow_type):
        return 0
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return ""
    if pa.types.is_boolean(arrow_type):
        return False
    return b"" if pa.types.is_binary(arrow_type) else 0


def merge_stats(older: Mapping[str, Any] | None, newer: Mapping[str, Any]) -> Mapping[str, Any]:
    """HoodieMetadataPayload.mergeColumnStatsRecords (see the module docstring)."""
    if older is None or newer["isDeleted"] or older["isDeleted"]:
        return newer
    out = dict(newer)
    pairs = ((older.get("minValue"), newer.get("minValue"), min), (older.get("maxValue"), newer.get("maxValue"), max))
    for (a, b, pick), name in zip(pairs, ("minValue", "maxValue"), strict=True):
        if a is None or b is None:
            out[name] = a if b is None else b
        else:
            vt = newer.get("valueType") or older.get("valueType")
            out[name] = pick(a, b, key=lambda w: unwrap_value(w, vt, None))
    for name in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
        out[name] = (older.get(name) or 0) + (newer.get(name) or 0)
    return out


def shard_records(stats: Iterable[Mapping[str, Any]], partition_path: str, count: int,
                  ) -> dict[int, list[tuple[str, dict[str, Any]]]]:
    """(key, record) of each stats datum of ``partition_path``, by file group index."""
    out: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for s in stats:
        key = column_stats_key(s["columnName"], partition_path, s["fileName"])
        out.setdefault(shard_of(key, count), []).append((key, stats_record(key, s)))
    return out


# -- reading ---------------------------------------------------------------------------------------------------
@dataclass
class StatsSlice:
    """The file slice of one column_stats file group that a read merges (a group Java created without records has
    no base file until its first compaction)."""

    file_id: str
    base_file: MetadataBaseFile | None
    log_files: list[MetadataLogFile] = field(default_factory=list)

    @property
    def base_instant(self) -> str:
        if self.base_file is not None:
            return self.base_file.instant_time
        return min((lf.instant_time for lf in self.log_files), default="")


class ColumnStatsPartition:
    """The column_stats partition of a loaded metadata table: its file groups and their latest slices (a
    subclass naming another ``PARTITION`` and ``PREFIX`` reads another partition of per-file records)."""

    PARTITION = COLUMN_STATS_PARTITION
    PREFIX = FILE_ID_PREFIX

    def __init__(self, table: MetadataTable):
        self.table = table
        self.storage = table.storage
        names = [(f.path.rsplit("/", 1)[-1], f.size) for f in self.storage.list_files(self.PARTITION)]
        self.base_files = sorted((b for b in (parse_base_file(n, s, self.PARTITION) for n, s in names)
                                  if b is not None and b.file_id.startswith(self.PREFIX)),
                                 key=lambda b: b.instant_time)
        self.log_files = [lf for lf in (parse_log_file(n, s, self.PARTITION) for n, s in names)
                          if lf is not None and lf.file_id.startswith(self.PREFIX)]
        self.file_ids = sorted({b.file_id for b in self.base_files} | {lf.file_id for lf in self.log_files})

    @classmethod
    def path(cls, name: str) -> str:
        return f"{cls.PARTITION}/{name}"

    def latest_slices(self) -> list[StatsSlice]:
        completed = self.table.completed_times()
        completion = {i.timestamp: i.completed_at for i in self.table.timeline.instants if i.state == State.COMPLETED}
        out = []
        for file_id in self.file_ids:
            bases = [b for b in self.base_files if b.file_id == file_id and b.instant_time in completed]
            logs = [lf for lf in self.log_files if lf.file_id == file_id]
            base = bases[-1] if bases else None
            if self.table.layout != LAYOUT_2:
                start = base.instant_time if base else min((lf.instant_time for lf in logs), default="")
                chosen = sorted((lf for lf in logs if lf.instant_time == start), key=lambda lf: (lf.version, lf.token))
            else:  # a log belongs to the newest base file at or before its deltacommit's completion
                start = base.instant_time if base else ""
                dated = [(completion[lf.instant_time], lf) for lf in logs if lf.instant_time in completion]
                chosen = [lf for done, lf in sorted(dated, key=lambda x: (x[0], x[1].version, x[1].token))
                          if done >= start]
            out.append(StatsSlice(file_id, base, chosen))
        return out

    def read(self, data_timeline: Timeline, slices: Sequence[StatsSlice] | None = None,
             keys: Iterable[str] | None = None, prefixes: Sequence[str] | None = None,
             ) -> dict[str, Mapping[str, Any]]:
        """key -> merged HoodieMetadataColumnStats of every record (of ``keys`` only, when given: the file groups
        they shard to, looked up in the base files; of keys starting with one of ``prefixes`` only, when given:
        ranges of the sorted base files, and only those records decoded; tombstones kept: callers skip them)."""
        valid = ValidInstants.of(self.table.timeline, data_timeline)
        wanted = None if keys is None else set(keys)
        starts = None if prefixes is None else tuple(prefixes)
        shards = None if wanted is None else {shard_of(k, len(self.file_ids)) for k in wanted}
        merged: dict[str, Mapping[str, Any]] = {}
        try:
            for s in self.latest_slices() if slices is None else slices:
                if shards is not None and self.file_ids.index(s.file_id) not in shards:
                    continue
                if s.base_file is not None:
                    reader = HFileReader(self.storage.read_bytes(self.path(s.base_file.name)),
                                         source=self.storage.full_path(self.path(s.base_file.name)))
                    schema = parsed_schema(reader.schema or "")
                    if wanted is not None:
                        pairs: Iterable[tuple[str, bytes]] = sorted(reader.get_many(wanted).items())
                    elif starts is not None:
                        pairs = (pair for prefix in sorted(set(starts)) for pair in reader.scan(prefix))
                    else:
                        pairs = reader
                    self._merge_all(merged, list(pairs), schema, reader.source)
                files = [(self.storage.full_path(self.path(lf.name)), self.storage.read_bytes(self.path(lf.name)))
                         for lf in s.log_files]
                for block in effective_blocks(files, valid).blocks:
                    records = [r for r in block_records(block, wanted) if starts is None or r[0].startswith(starts)]
                    for key, value, _, _ in records:
                        if value is None:
                            merged.pop(key, None)
                    if records and records[0][1] is not None:  # a data block (a block's records are one kind)
                        self._merge_all(merged, [(k, v) for k, v, _, _ in records], records[0][2], records[0][3])
        except (HFileFormatError, InvalidInstantError, OSError, HoodieError, EOFError, ValueError) as e:
            if isinstance(e, MetadataTableError):
                raise
            raise MetadataTableError(self.table.data_storage.base_uri,
                                     f"cannot read the {self.PARTITION} partition: {e}") from e
        return merged

    @staticmethod
    def _merge_all(merged: dict[str, Mapping[str, Any]], pairs: Sequence[tuple[str, bytes]],
                   schema: dict[str, Any], source: str) -> None:
        """Merge the records ``pairs`` (key, encoded value) into ``merged``, decoded all at once (a partition
        whose records are not column_stats' overrides this)."""
        values = [v for _, v in pairs]
        decoded = decode_stats_batch(values, schema, decode_stats, source)
        if decoded is None:
            decoded = [decode_stats(v, schema) for v in values]
        for (key, _), stats in zip(pairs, decoded, strict=True):
            if stats is not None:
                merged[key] = merge_stats(merged.get(key), stats)


def _named(value: Any) -> Any:
    return value[1] if isinstance(value, tuple) else value


def decode_stats(value: bytes, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The HoodieMetadataColumnStats of an encoded HoodieMetadataRecord (None for another type), its min / max
    wrappers naming their branch (``-type``), so that writing them again keeps DateWrapper a DateWrapper."""
    record = fastavro.schemaless_reader(io.BytesIO(value), schema, None, return_record_name=True)
    stats = _named(record.get("ColumnStatsMetadata"))
    if stats is None:
        return None
    stats = dict(stats)
    for name in ("minValue", "maxValue"):
        if isinstance(stats.get(name), tuple):
            branch, wrapped = stats[name]
            stats[name] = {"-type": branch, **wrapped}
    stats["valueType"] = _named(stats.get("valueType"))
    return stats


def live_stats(merged: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {k: v for k, v in merged.items() if not v.get("isDeleted")}


def has_column_stats(properties: Mapping[str, str] | None) -> bool:
    return COLUMN_STATS_PARTITION in MetadataConfig.TABLE_PARTITIONS.parse(
        (properties or {}).get(MetadataConfig.TABLE_PARTITIONS.key, ""))


def read_file_stats(storage: Storage, column: str, files: Iterable[tuple[str, str]], data_timeline: Timeline,
                    ) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(partition path, base file name) -> live HoodieMetadataColumnStats of ``column`` in those ``files`` the
    partition holds, looked up by key (only the file groups the keys shard to are read)."""
    by_key = {column_stats_key(column, p, n): (p, n) for p, n in files}
    if not by_key:
        return {}
    merged = ColumnStatsPartition(MetadataTable(storage)).read(data_timeline, keys=by_key)
    return {by_key[k]: v for k, v in live_stats(merged).items()}


def read_column_stats(storage: Storage, data_timeline: Timeline, columns: Iterable[str] | None = None,
                      ) -> dict[str, Mapping[str, Any]]:
    """key -> live HoodieMetadataColumnStats of a table's column_stats partition (of ``columns`` only, when
    given: a key starts with its column's hash, so only their key ranges are read and decoded)."""
    prefixes = None if columns is None else [_b64_xxh(c) for c in columns]
    return live_stats(ColumnStatsPartition(MetadataTable(storage)).read(data_timeline, prefixes=prefixes))

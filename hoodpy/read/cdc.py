"""Change data capture queries (``hoodie.datasource.query.incremental.format=cdc``) over copy-on-write tables
with ``hoodie.table.cdc.enabled``: one row per change committed in (start, end], with Hudi's columns ``op``
(``i``, ``u``, ``d``), ``ts_ms`` (the commit's instant time), ``before`` and ``after`` (JSON strings of the
record images, null where absent), as Hudi's Spark CDC relation (HoodieCDCExtractor + its CDC RDD) returns them.

Per commit (commit and replacecommit instants whose operation changes data: not clustering) and file group
written, what the changes are read from (Hudi's HoodieCDCInferenceCase):

* AS_IS: the write stat names CDC log files (``cdcStats``): their records, with the images the supplemental
  logging mode did not log read from the file versions before (``prevCommit``) and after (the written file);
* BASE_FILE_INSERT: a file of inserts only and no CDC log (a new file group): every row is an ``i``;
* BASE_FILE_DELETE: a delete that emptied a file group and logged nothing: every row of the version before
  is a ``d``;
* REPLACE_COMMIT: every row of a file group a replacecommit replaced (insert_overwrite) is a ``d``.

JSON as Hudi writes it: images from CDC log records (and the OP_KEY_ONLY before image) as Avro's
``GenericData.toString`` prints a record (``{"id": 1, "name": "a"}``, table columns only for logged images);
images read from base files as its InternalRowToJsonStringConverter prints a row (compact, meta columns
included). Plain column types print as Hudi does, timestamps and dates as their microseconds and days since
the epoch; other types (decimals, binary, maps) print their values as Python's JSON encoder does.

The changes are planned on the driver (commit metadata and file listings) and read in Spark tasks, one per
(commit, file group).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.config.table import DATA_BEFORE, DATA_BEFORE_AFTER, TableConfig, cdc_mode
from hoodpy.errors import ChangesNotReadableError, HoodieIOError, InvalidConfigError, UnsupportedTableTypeError
from hoodpy.file_group.cdc_log import AFTER, BEFORE, OP, OP_DELETE, OP_INSERT, OP_UPDATE, RECORD_KEY
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.file_group.log_file import cdc_records
from hoodpy.file_group.log_writer import avro_records
from hoodpy.meta_fields import RECORD_KEY as KEY_COLUMN
from hoodpy.read.query import window_commits
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import NULL_COMMIT, OperationType
from hoodpy.timeline.timeline import Timeline

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hoodpy.read.query import ReadableTable

CDC_COLUMNS_DDL = "op string, ts_ms string, before string, after string"
AS_IS, BASE_FILE_INSERT, BASE_FILE_DELETE, REPLACE_COMMIT = "AS_IS", "BASE_FILE_INSERT", "BASE_FILE_DELETE", \
    "REPLACE_COMMIT"
# WriteOperationType.isDataChange: table services rewrite files without changing records.
_NOT_DATA_CHANGES = {OperationType.CLUSTER, OperationType.COMPACT, "LOG_COMPACT", "INDEX"}
_OUTPUT = pa.schema([(n, pa.string()) for n in ("op", "ts_ms", "before", "after")])


@dataclass(frozen=True)
class CdcSplit:
    """The changes one commit made to one file group, and the files they are read from (relative paths)."""

    instant_time: str
    case: str
    mode: str
    cdc_files: tuple[str, ...] = ()
    before_file: str | None = None  # the file version before the commit (its base file)
    after_file: str | None = None  # the file version the commit wrote


def check_cdc_table(table: ReadableTable) -> str:
    """The table's supplemental logging mode; a clear error when the table does not capture changes."""
    props = table.properties
    mode = cdc_mode(props)
    if mode is None:
        raise InvalidConfigError(TableConfig.CDC_ENABLED.key, props.get(TableConfig.CDC_ENABLED.key, "false"),
                                 f"It isn't a CDC hudi table on {table.storage.base_uri}: change data capture "
                                 f"queries read tables created with {TableConfig.CDC_ENABLED.key}=true")
    if props.get(TableConfig.TYPE.key) == "MERGE_ON_READ":
        raise UnsupportedTableTypeError(table.storage.base_uri, "MERGE_ON_READ",
                                        "run change data capture queries on it (copy-on-write tables only)")
    if props.get(TableConfig.POPULATE_META_FIELDS.key, "true").lower() == "false":
        raise InvalidConfigError(TableConfig.POPULATE_META_FIELDS.key, "false",
                                 "change data capture queries match images by the stored record key")
    return mode


class _Versions:
    """The committed base files of the partitions a CDC query touches, listed once per partition."""

    def __init__(self, storage: Storage, timeline: Timeline):
        self.storage, self.timeline = storage, timeline
        self._listed: dict[str, list[BaseFile]] = {}

    def of(self, partition: str, file_id: str, *, at: str | None = None, before: str | None = None) -> str | None:
        """The base file of a file group written at instant ``at``, or the newest committed one before
        ``before``."""
        if partition not in self._listed:
            first = self.timeline.earliest_instant_time()
            self._listed[partition] = [
                bf for bf in list_base_files(self.storage, [partition])
                if self.timeline.is_completed_write(bf.instant_time) or (first is not None and bf.instant_time < first)]
        return _version_on(self._listed[partition], file_id, at=at, before=before)


def _version_on(files: list[BaseFile], file_id: str, *, at: str | None = None, before: str | None = None,
                ) -> str | None:
    found = [bf for bf in files if bf.file_id == file_id]
    if at is not None:
        found = [bf for bf in found if bf.instant_time == at]
    if before is not None:
        found = [bf for bf in found if bf.instant_time < before]
    return max(found, key=lambda bf: bf.instant_time).path if found else None


def plan_cdc(table: ReadableTable, start: str, end: str | None = None) -> list[CdcSplit]:
    """The splits of a CDC query over the commits in (start, end] (``end`` None: the latest)."""
    mode = check_cdc_table(table)
    timeline, commits, end = window_commits(table, start, end)
    storage = table.storage
    versions = _Versions(storage, timeline)
    splits: list[CdcSplit] = []

    def need(path: str | None, what: str) -> str:
        if path is None or not storage.exists(path):
            raise ChangesNotReadableError(storage.base_uri, start, end, f"{what} is gone (cleaned)", None)
        return path

    for instant in commits:
        if instant.action not in (Action.COMMIT, Action.REPLACECOMMIT):
            raise UnsupportedTableTypeError(storage.base_uri, "MERGE_ON_READ",
                                            f"read the changes of {instant.action} {instant.timestamp}")
        metadata = timeline.commit_metadata(instant)
        if metadata.operation_type in _NOT_DATA_CHANGES:
            continue
        ts = instant.timestamp
        for stat in metadata.write_stats:
            if not stat.path:
                continue
            where = f"file group {stat.file_id} (partition {stat.partition_path!r})"
            prev = stat.prev_commit if stat.prev_commit not in (None, "", NULL_COMMIT) else None
            if stat.cdc_stats:
                before = after = None
                if mode != DATA_BEFORE_AFTER:
                    after = need(stat.path, f"the version {ts} of {where}")
                    if mode != DATA_BEFORE and prev is not None:
                        before = need(versions.of(stat.partition_path, stat.file_id, at=prev),
                                      f"the version {prev} of {where}")
                files = tuple(need(p, f"the CDC log {p}") for p in sorted(stat.cdc_stats))
                splits.append(CdcSplit(ts, AS_IS, mode, files, before, after))
            elif metadata.operation_type == OperationType.DELETE and stat.num_writes == 0 and stat.num_deletes:
                before = versions.of(stat.partition_path, stat.file_id, at=prev)
                splits.append(CdcSplit(ts, BASE_FILE_DELETE, mode, before_file=need(
                    before, f"the version {prev} of {where}")))
            elif stat.num_update_writes == 0 and stat.num_deletes == 0 and stat.num_writes == stat.num_inserts:
                splits.append(CdcSplit(ts, BASE_FILE_INSERT, mode, after_file=need(stat.path, f"{stat.path}")))
            else:
                raise HoodieIOError(stat.path, f"commit {ts} changed {where} but logged no CDC file (it was "
                                    "written without change data capture)")
        for partition, file_id in sorted(metadata.replaced_file_ids()):
            replaced = versions.of(partition, file_id, before=ts)
            if replaced is not None:  # an empty file group has nothing to delete
                splits.append(CdcSplit(ts, REPLACE_COMMIT, mode, before_file=replaced))
    return splits


# -- executors ---------------------------------------------------------------------------------------------
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


def _avro_text(value: Any) -> str:
    """A value as Avro's GenericData.toString prints it."""
    value = _spark_value(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_avro_text(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_avro_text(v) for v in value) + "]"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return '{"bytes": ' + json.dumps(bytes(value).decode("latin-1"), ensure_ascii=False) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(str(value), ensure_ascii=False)


def _java_double(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def _json_value(value: Any) -> Any:
    value = _spark_value(value)
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _row_text(row: dict[str, Any]) -> str:
    """A row as Hudi's InternalRowToJsonStringConverter prints it (Jackson, compact, the columns in order)."""
    return json.dumps({k: _json_value(v) for k, v in row.items()}, ensure_ascii=False, separators=(",", ":"))


def _rows(storage: Storage, path: str | None) -> list[dict[str, Any]]:
    if path is None:
        return []
    return avro_records(pq.read_table(storage.full_path(path), filesystem=storage.fs))


def _keyed(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r[KEY_COLUMN]: r for r in rows}


def split_changes(storage: Storage, split: CdcSplit) -> list[tuple[str, str, str | None, str | None]]:
    """The (op, ts_ms, before, after) rows of one split."""
    ts = split.instant_time
    if split.case == BASE_FILE_INSERT:
        return [(OP_INSERT, ts, None, _row_text(r)) for r in _rows(storage, split.after_file)]
    if split.case in (BASE_FILE_DELETE, REPLACE_COMMIT):
        return [(OP_DELETE, ts, _row_text(r), None) for r in _rows(storage, split.before_file)]
    records = [r for path in split.cdc_files for r in cdc_records(storage.read_bytes(path), path)]
    if split.mode == DATA_BEFORE_AFTER:
        return [(r[OP], ts, _avro_or_none(r[BEFORE]), _avro_or_none(r[AFTER])) for r in records]
    after = _keyed(_rows(storage, split.after_file))
    before = _keyed(_rows(storage, split.before_file)) if split.mode != DATA_BEFORE else {}
    out = []
    for r in records:
        op, key = r[OP], r[RECORD_KEY]
        image = r[BEFORE] if split.mode == DATA_BEFORE else before.get(key) if op != OP_INSERT else None
        out.append((op, ts, _avro_or_none(image),
                    _row_text(after[key]) if op in (OP_INSERT, OP_UPDATE) and key in after else None))
    return out


def _avro_or_none(image: dict | None) -> str | None:
    return None if image is None else _avro_text(image)


def _run_splits(base_uri: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    storage = Storage(base_uri)
    for batch in batches:
        for text in batch.column(0).to_pylist():
            rows = split_changes(storage, CdcSplit(**{k: tuple(v) if k == "cdc_files" else v
                                                      for k, v in json.loads(text).items()}))
            if rows:
                yield pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in zip(*rows, strict=True)],
                                                 schema=_OUTPUT)


def read_cdc(table: ReadableTable, start: str, end: str | None = None) -> DataFrame:
    """The CDC query over (start, end]: a DataFrame of ``op``, ``ts_ms``, ``before``, ``after``."""
    splits = plan_cdc(table, start, end)
    base_uri = table.storage.base_uri
    texts = [(json.dumps(asdict(s)),) for s in splits]
    frame = table.spark.createDataFrame(texts, "split string") if texts else \
        table.spark.createDataFrame([], "split string")
    if texts:
        frame = frame.repartition(min(len(texts), table.spark.sparkContext.defaultParallelism))
    return frame.mapInArrow(lambda it: _run_splits(base_uri, it), CDC_COLUMNS_DDL)

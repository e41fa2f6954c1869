"""Commit and replacecommit metadata: Hudi's HoodieCommitMetadata / HoodieReplaceCommitMetadata, as JSON
(timeline layout 1, table version 6) or as an Avro container file (layout 2, table versions 8 and 9)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

import fastavro

from hoodpy.errors import InvalidInstantError
from hoodpy.timeline.avro_models import table_version_8_schema

AVRO_MAGIC = b"Obj\x01"
NULL_COMMIT = "null"  # Hudi writes the string "null" as prevCommit of a new file group
SCHEMA_KEY = "schema"


class OperationType:
    """Java WriteOperationType enum names, as commit metadata spells them."""

    INSERT = "INSERT"
    UPSERT = "UPSERT"
    BULK_INSERT = "BULK_INSERT"
    DELETE = "DELETE"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
    CLUSTER = "CLUSTER"
    COMPACT = "COMPACT"
    DELETE_PARTITION = "DELETE_PARTITION"
    UNKNOWN = "UNKNOWN"


@dataclass
class WriteStat:
    """What one task wrote into one file group (HoodieWriteStat); with a ``log_version``, what it wrote into
    one merge-on-read log file (HoodieDeltaWriteStat: the log file's version and start offset, and the file
    slice's base file name, "" for a slice of logs only, and log file names after the write)."""

    file_id: str
    path: str | None  # "<partition>/<file name>", relative to the base path
    partition_path: str
    prev_commit: str = NULL_COMMIT
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    file_size_in_bytes: int = 0
    total_create_time: int = 0
    total_upsert_time: int = 0
    # Filled by compaction (what it read from the slice's log files); zero for other writes.
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_blocks: int = 0
    total_rollback_blocks: int = 0
    total_scan_time: int = 0
    log_version: int | None = None
    log_offset: int = 0
    base_file: str = ""
    log_files: list[str] | None = None
    cdc_stats: dict[str, int] | None = None  # CDC log file path (relative to the base path) -> size
    # Hudi 1.x's additions, written at table versions 8 and 9 only (:meth:`version_1x_fields`): the base file
    # a merge replaced (its name; compaction sets it) and the time compaction spent reading the log files.
    prev_base_file: str | None = None
    total_log_read_time_ms: int = 0

    @property
    def is_log_write(self) -> bool:
        """Whether the stat is a HoodieDeltaWriteStat (its path a log file)."""
        return self.log_version is not None

    def to_json(self) -> dict[str, Any]:
        body = {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": dict(self.cdc_stats) if self.cdc_stats is not None else None,
            "prevCommit": self.prev_commit,
            "numWrites": int(self.num_writes),
            "numDeletes": int(self.num_deletes),
            "numUpdateWrites": int(self.num_update_writes),
            "numInserts": int(self.num_inserts),
            "totalWriteBytes": int(self.total_write_bytes),
            "totalWriteErrors": int(self.total_write_errors),
            "tempPath": None,
            "partitionPath": self.partition_path,
            "totalLogRecords": int(self.total_log_records),
            "totalLogFilesCompacted": int(self.total_log_files_compacted),
            "totalLogSizeCompacted": int(self.total_log_size_compacted),
            "totalUpdatedRecordsCompacted": int(self.total_updated_records_compacted),
            "totalLogBlocks": int(self.total_log_blocks),
            "totalCorruptLogBlock": int(self.total_corrupt_log_blocks),
            "totalRollbackBlocks": int(self.total_rollback_blocks),
            "fileSizeInBytes": int(self.file_size_in_bytes),
            "minEventTime": None,
            "maxEventTime": None,
            "runtimeStats": {
                "totalScanTime": int(self.total_scan_time),
                "totalUpsertTime": int(self.total_upsert_time),
                "totalCreateTime": int(self.total_create_time),
            },
        }
        if self.is_log_write:
            body.update({"logVersion": int(self.log_version), "logOffset": int(self.log_offset),
                         "baseFile": self.base_file, "logFiles": list(self.log_files or []),
                         "recordsStats": {"val": None}})  # Java's empty Option, as Jackson writes it
        return body

    def version_1x_fields(self) -> dict[str, Any]:
        """The HoodieWriteStat fields Hudi 1.x adds, as its commit metadata (Avro) holds them."""
        return {"prevBaseFile": self.prev_base_file, "totalLogReadTimeMs": int(self.total_log_read_time_ms)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WriteStat:
        runtime = d.get("runtimeStats") or {}
        log_version = d.get("logVersion")
        return cls(
            file_id=d.get("fileId") or "",
            path=d.get("path"),
            partition_path=d.get("partitionPath") or "",
            prev_commit=d.get("prevCommit") or NULL_COMMIT,
            num_writes=int(d.get("numWrites") or 0),
            num_deletes=int(d.get("numDeletes") or 0),
            num_update_writes=int(d.get("numUpdateWrites") or 0),
            num_inserts=int(d.get("numInserts") or 0),
            total_write_bytes=int(d.get("totalWriteBytes") or 0),
            total_write_errors=int(d.get("totalWriteErrors") or 0),
            file_size_in_bytes=int(d.get("fileSizeInBytes") or 0),
            total_create_time=int(runtime.get("totalCreateTime") or 0),
            total_upsert_time=int(runtime.get("totalUpsertTime") or 0),
            total_log_records=int(d.get("totalLogRecords") or 0),
            total_log_files_compacted=int(d.get("totalLogFilesCompacted") or 0),
            total_log_size_compacted=int(d.get("totalLogSizeCompacted") or 0),
            total_updated_records_compacted=int(d.get("totalUpdatedRecordsCompacted") or 0),
            total_log_blocks=int(d.get("totalLogBlocks") or 0),
            total_corrupt_log_blocks=int(d.get("totalCorruptLogBlock") or 0),
            total_rollback_blocks=int(d.get("totalRollbackBlocks") or 0),
            total_scan_time=int(runtime.get("totalScanTime") or 0),
            log_version=int(log_version) if log_version is not None else None,
            log_offset=int(d.get("logOffset") or 0),
            base_file=d.get("baseFile") or "",
            log_files=list(d.get("logFiles") or []) if log_version is not None else None,
            cdc_stats={str(k): int(v) for k, v in d["cdcStats"].items()} if d.get("cdcStats") else None,
            prev_base_file=d.get("prevBaseFile") or None,
            total_log_read_time_ms=int(d.get("totalLogReadTimeMs") or 0),
        )


@dataclass
class CommitMetadata:
    """HoodieCommitMetadata, plus partitionToReplaceFileIds for replacecommits."""

    operation_type: str
    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    partition_to_replace_file_ids: dict[str, list[str]] | None = None
    compacted: bool = False

    @property
    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get(SCHEMA_KEY) or None

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        return {
            (partition, file_id)
            for partition, ids in (self.partition_to_replace_file_ids or {}).items()
            for file_id in ids
        }

    def add_write_stat(self, stat: WriteStat) -> None:
        self.partition_to_write_stats.setdefault(stat.partition_path, []).append(stat)

    def to_json_bytes(self) -> bytes:
        body: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [s.to_json() for s in stats] for p, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            body["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in self.partition_to_replace_file_ids.items()
            }
        return json.dumps(body, indent=2).encode("utf-8")

    def to_avro_bytes(self) -> bytes:
        """The completed instant file of table versions 8 and 9: one record in an Avro container file (codec
        null), with the writer schema Hudi 1.x embeds (a replacecommit's when it replaces file groups)."""
        replace = self.partition_to_replace_file_ids is not None
        record = json.loads(self.to_json_bytes())
        record["version"] = None  # as Hudi 1.x writes it
        for partition, stats in self.partition_to_write_stats.items():
            for body, stat in zip(record["partitionToWriteStats"][partition], stats, strict=True):
                body.update(stat.version_1x_fields())
        if not replace:
            record.pop("partitionToReplaceFileIds", None)
        buf = io.BytesIO()
        name = "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata"
        fastavro.writer(buf, table_version_8_schema(name), [record], codec="null")
        return buf.getvalue()

    def to_bytes(self, layout: int) -> bytes:
        """The completed instant file's bytes in timeline layout ``layout``."""
        return self.to_avro_bytes() if layout >= 2 else self.to_json_bytes()

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "commit metadata") -> CommitMetadata:
        """Read JSON or Avro commit metadata (the content tells which)."""
        if data.startswith(AVRO_MAGIC):
            return cls.from_avro_bytes(data, source=source)
        return cls.from_json_bytes(data, source=source)

    @classmethod
    def from_avro_bytes(cls, data: bytes, *, source: str = "commit metadata") -> CommitMetadata:
        try:
            records = list(fastavro.reader(io.BytesIO(data)))
        except Exception as e:  # fastavro reports corrupt input with many exception types
            raise InvalidInstantError(f"Completed instant file {source} is not readable Avro: {e}") from e
        if not records or not isinstance(records[0], dict):
            raise InvalidInstantError(f"Completed instant file {source} holds no Avro record")
        return cls.from_dict(records[0])

    @classmethod
    def from_json_bytes(cls, data: bytes, *, source: str = "commit metadata") -> CommitMetadata:
        if not data.strip():
            raise InvalidInstantError(f"Completed instant file {source} is empty")
        try:
            d = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InvalidInstantError(f"Completed instant file {source} is not valid JSON: {e}") from e
        if not isinstance(d, dict):
            raise InvalidInstantError(f"Completed instant file {source} is not a JSON object")
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CommitMetadata:
        """From the JSON object or Avro record (the two share field names)."""
        stats = {
            p: [WriteStat.from_json(s) for s in (lst or [])]
            for p, lst in (d.get("partitionToWriteStats") or {}).items()
        }
        replace = d.get("partitionToReplaceFileIds")
        return cls(
            operation_type=d.get("operationType") or OperationType.UNKNOWN,
            partition_to_write_stats=stats,
            extra_metadata={k: v for k, v in (d.get("extraMetadata") or {}).items() if v is not None},
            partition_to_replace_file_ids=dict(replace) if replace is not None else None,
            compacted=bool(d.get("compacted", False)),
        )

"""The compaction plan: Hudi's HoodieCompactionPlan as Java 0.14 writes it into ``<t>.compaction.requested``
(Java 1.x, table versions 8 and 9: under ``.hoodie/timeline``, with 1.x's writer schema), and which file groups
the pending plans hold.

A plan lists one operation per file slice to compact: the slice's base file and log files (plan version 2:
names inside the partition), its file id, partition and base instant, and the metrics the compaction strategy
captured. Java 0.14 saves the plan (an Avro container file, codec null) both in ``.hoodie/`` and in
``.hoodie/.aux/``; the inflight state is an empty file; the compaction completes as ``<t>.commit``.

While a compaction is pending, writers append to the slice it will create (logs named after its instant):
:func:`pending_compaction_instant` tells a writer which file groups that applies to.

Example:
    >>> plan = load_compaction_plan(storage, "20250117083140000")
    >>> [(op.file_id, op.delta_file_names) for op in plan.operations]
    [('d206069c-...-0', ('.d206069c-...-0_20250117083125837.log.1_0-33-43',))]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodpy.errors import PlanNotFoundError
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize, serialize_for_layout
from hoodpy.timeline.instant import LAYOUT_1, METAFOLDER, Action, Instant, State, validate_instant_time
from hoodpy.timeline.timeline import Timeline, read_layout

# CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: operations name files relative to their partition (version
# 1 held full paths).
PLAN_VERSION = 2
AUX_FOLDER = f"{METAFOLDER}/.aux"

# The metrics Java's CompactionStrategy.captureMetrics fills in (FileSliceMetricUtils), in the order a Java
# HashMap iterates them (the order the plan's Avro map holds them).
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
METRIC_KEYS = (TOTAL_LOG_FILES, TOTAL_IO_MB, TOTAL_IO_READ_MB, TOTAL_LOG_FILES_SIZE, TOTAL_IO_WRITE_MB)

FileGroupId = tuple[str, str]  # (partition path, file id)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _join(partition_path: str, name: str) -> str:
    return f"{partition_path}/{name}" if partition_path else name


@dataclass(frozen=True)
class CompactionOperation:
    """HoodieCompactionOperation: one file slice to merge into a new base file."""

    partition_path: str
    file_id: str
    base_instant_time: str
    data_file_name: str | None  # None: a slice of log files only
    delta_file_names: tuple[str, ...]  # in log order
    metrics: Mapping[str, float] = field(default_factory=dict)
    bootstrap_file_path: str | None = None

    @property
    def file_group_id(self) -> FileGroupId:
        return self.partition_path, self.file_id

    @property
    def data_file_path(self) -> str | None:
        """The base file's path relative to the table."""
        return _join(self.partition_path, self.data_file_name) if self.data_file_name else None

    @property
    def delta_file_paths(self) -> list[str]:
        """The log files' paths relative to the table, in log order."""
        return [_join(self.partition_path, n) for n in self.delta_file_names]

    @property
    def total_log_size(self) -> int:
        return int(self.metrics.get(TOTAL_LOG_FILES_SIZE, 0))

    def to_avro(self) -> dict[str, Any]:
        return {"baseInstantTime": self.base_instant_time, "deltaFilePaths": list(self.delta_file_names),
                "dataFilePath": self.data_file_name, "fileId": self.file_id,
                "partitionPath": self.partition_path, "metrics": dict(self.metrics),
                "bootstrapFilePath": self.bootstrap_file_path}

    @classmethod
    def from_avro(cls, d: Mapping[str, Any]) -> CompactionOperation:
        # Version 1 plans hold full paths: the name is what counts (Hudi's CompactionV2MigrationHandler).
        data = d.get("dataFilePath")
        return cls(partition_path=d.get("partitionPath") or "", file_id=d.get("fileId") or "",
                   base_instant_time=d.get("baseInstantTime") or "",
                   data_file_name=_name(data) if data else None,
                   delta_file_names=tuple(_name(p) for p in d.get("deltaFilePaths") or ()),
                   metrics=dict(d.get("metrics") or {}), bootstrap_file_path=d.get("bootstrapFilePath"))


@dataclass(frozen=True)
class CompactionPlan:
    """HoodieCompactionPlan, plus the instant it is scheduled at (None until scheduled)."""

    operations: tuple[CompactionOperation, ...]
    extra_metadata: Mapping[str, str] | None = None  # Java 0.14's strategies leave it null
    version: int = PLAN_VERSION
    preserve_hoodie_metadata: bool | None = False
    instant_time: str | None = None

    @property
    def partitions(self) -> list[str]:
        return sorted({op.partition_path for op in self.operations})

    @property
    def file_group_ids(self) -> set[FileGroupId]:
        return {op.file_group_id for op in self.operations}

    def to_avro(self) -> dict[str, Any]:
        return {"operations": [op.to_avro() for op in self.operations],
                "extraMetadata": dict(self.extra_metadata) if self.extra_metadata is not None else None,
                "version": self.version, "strategy": None,
                "preserveHoodieMetadata": self.preserve_hoodie_metadata}

    def to_bytes(self, layout: int = LAYOUT_1) -> bytes:
        """The plan file's bytes; timeline layout 2 (table versions 8 and 9): with Hudi 1.x's writer schema,
        which adds ``missingSchedulePartitions`` (an empty list, as the Hudi 1.1 samples hold it)."""
        if layout == LAYOUT_1:
            return serialize(AvroModel.COMPACTION_PLAN, self.to_avro())
        return serialize_for_layout(AvroModel.COMPACTION_PLAN, self.to_avro(), layout,
                                    {"missingSchedulePartitions": []})

    @classmethod
    def from_avro(cls, d: Mapping[str, Any], instant_time: str | None = None) -> CompactionPlan:
        extra = d.get("extraMetadata")
        return cls(operations=tuple(CompactionOperation.from_avro(op) for op in d.get("operations") or ()),
                   extra_metadata=dict(extra) if extra is not None else None,
                   version=d.get("version") if d.get("version") is not None else 1,
                   preserve_hoodie_metadata=d.get("preserveHoodieMetadata"), instant_time=instant_time)


def requested_instant(storage: Storage, instant_time: str) -> Instant:
    return Instant(instant_time, Action.COMPACTION, State.REQUESTED, layout=read_layout(storage))


def save_compaction_plan(storage: Storage, plan: CompactionPlan) -> Instant:
    """Write ``<t>.compaction.requested`` (and, as Java 0.14 does, its copy in ``.hoodie/.aux``)."""
    if plan.instant_time is None:
        raise ValueError("a compaction plan needs its instant time to be saved")
    layout = read_layout(storage)
    data = plan.to_bytes(layout)
    if layout == LAYOUT_1:
        storage.write_atomic(f"{AUX_FOLDER}/{requested_instant(storage, plan.instant_time).file_name}", data)
    return transitions.create_requested(storage, plan.instant_time, Action.COMPACTION, data, layout=layout)


def load_compaction_plan(storage: Storage, instant_time: str) -> CompactionPlan:
    """The plan saved in ``<instant_time>.compaction.requested``.

    Raises:
        PlanNotFoundError: no such requested compaction (the file is absent or empty).
    """
    validate_instant_time(instant_time)
    rel = requested_instant(storage, instant_time).path
    data = storage.read_bytes(rel) if storage.exists(rel) else b""
    if not data:
        raise PlanNotFoundError(f"No compaction plan at {instant_time}: {rel} does not exist or is empty")
    return CompactionPlan.from_avro(deserialize(AvroModel.COMPACTION_PLAN, data, source=storage.full_path(rel)),
                                    instant_time)


def pending_compactions(storage: Storage, timeline: Timeline) -> list[tuple[Instant, CompactionPlan]]:
    """Requested and inflight compactions with their plans, oldest first."""
    return [(i, load_compaction_plan(storage, i.timestamp)) for i in timeline.pending([Action.COMPACTION])]


def pending_compaction_file_groups(storage: Storage, timeline: Timeline) -> dict[FileGroupId, str]:
    """(partition path, file id) -> instant of the pending compaction whose plan holds that file group
    (Hudi's CompactionUtils.getAllPendingCompactionOperations)."""
    return {op.file_group_id: instant.timestamp
            for instant, plan in pending_compactions(storage, timeline) for op in plan.operations}


def pending_compaction_instant(storage: Storage, timeline: Timeline, partition_path: str, file_id: str,
                               ) -> str | None:
    """The instant of the pending compaction of one file group, or None. A writer appending to that group
    names its new log file after this instant (the slice the compaction creates), as Java does."""
    return pending_compaction_file_groups(storage, timeline).get((partition_path, file_id))

"""A clean's Avro records: its plan (HoodieCleanerPlan, in ``<t>.clean.requested`` and ``.clean.inflight``) and
what it did (HoodieCleanMetadata, in the completed ``<t>.clean``). Below the cleaners that write them: the data
table's (:mod:`hoodpy.services.clean`) and the metadata table's (:mod:`hoodpy.metadata_table.cleaner`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodpy.config.clean import KEEP_LATEST_COMMITS
from hoodpy.timeline.instant import Action, Instant, State

CLEAN_PLAN_VERSION = 2  # filePathsToBeDeletedPerPartition, as Hudi 0.14 writes
CLEAN_METADATA_VERSION = 2  # file names (not paths) in the partition metadata, as Hudi 0.14 writes


@dataclass(frozen=True)
class CleanerPlan:
    """HoodieCleanerPlan: the files one clean deletes, per partition (paths relative to the base path)."""

    policy: str
    earliest_instant_to_retain: Instant | None
    last_completed_commit_timestamp: str
    files_per_partition: Mapping[str, tuple[str, ...]]
    partitions_to_delete: tuple[str, ...] = ()
    version: int = CLEAN_PLAN_VERSION
    instant_time: str | None = None

    @property
    def earliest_commit_to_retain(self) -> str:
        return self.earliest_instant_to_retain.timestamp if self.earliest_instant_to_retain else ""

    @property
    def num_files(self) -> int:
        return sum(len(v) for v in self.files_per_partition.values())

    @property
    def is_empty(self) -> bool:
        return self.num_files == 0 and not self.partitions_to_delete

    def to_avro(self, full_path=lambda rel: rel) -> dict[str, Any]:
        e = self.earliest_instant_to_retain
        return {
            "earliestInstantToRetain": (
                {"timestamp": e.timestamp, "action": e.action.value, "state": e.state.value} if e else None),
            "lastCompletedCommitTimestamp": self.last_completed_commit_timestamp,
            "policy": self.policy,
            "filesToBeDeletedPerPartition": {},
            "version": self.version,
            "filePathsToBeDeletedPerPartition": {
                p: [{"filePath": full_path(rel), "isBootstrapBaseFile": False} for rel in paths]
                for p, paths in self.files_per_partition.items()
            },
            "partitionsToBeDeleted": list(self.partitions_to_delete),
        }

    @classmethod
    def from_avro(cls, d: Mapping[str, Any], relative=lambda path: path, instant_time: str | None = None,
                  ) -> CleanerPlan:
        e = d.get("earliestInstantToRetain")
        earliest = None
        if e and e.get("timestamp"):
            action = e.get("action") or Action.COMMIT.value
            earliest = Instant(e["timestamp"], Action(action) if action in {a.value for a in Action} else Action.COMMIT,
                               State(e.get("state") or State.COMPLETED.value))
        files: dict[str, tuple[str, ...]] = {}
        for p, infos in (d.get("filePathsToBeDeletedPerPartition") or {}).items():
            files[p] = tuple(relative(i["filePath"]) for i in infos or () if i.get("filePath"))
        for p, paths in (d.get("filesToBeDeletedPerPartition") or {}).items():  # plan version 1: names
            if p not in files:
                files[p] = tuple(relative(f"{p}/{name}" if p and "/" not in name else name) for name in paths or ())
        return cls(policy=d.get("policy") or KEEP_LATEST_COMMITS, earliest_instant_to_retain=earliest,
                   last_completed_commit_timestamp=d.get("lastCompletedCommitTimestamp") or "",
                   files_per_partition=files, partitions_to_delete=tuple(d.get("partitionsToBeDeleted") or ()),
                   version=d.get("version") or 1, instant_time=instant_time)


@dataclass
class CleanResult:
    """What one clean deleted."""

    instant_time: str
    policy: str
    earliest_retained_instant: str
    deleted_files: dict[str, list[str]] = field(default_factory=dict)  # partition -> relative paths
    failed_files: dict[str, list[str]] = field(default_factory=dict)
    deleted_partitions: list[str] = field(default_factory=list)
    time_taken_ms: int = 0
    last_completed_commit_timestamp: str = ""

    @property
    def total_files_deleted(self) -> int:
        return sum(len(v) for v in self.deleted_files.values())

    @property
    def deleted_count(self) -> dict[str, int]:
        return {p: len(v) for p, v in self.deleted_files.items()}

    @property
    def failed_count(self) -> int:
        return sum(len(v) for v in self.failed_files.values())


def clean_metadata(plan: CleanerPlan, result: CleanResult) -> dict:
    """HoodieCleanMetadata (version 2: file names per partition)."""
    partitions = sorted(set(plan.files_per_partition) | set(plan.partitions_to_delete))

    def names(paths):
        return [p.rsplit("/", 1)[-1] for p in paths]

    return {
        "startCleanTime": result.instant_time,
        "timeTakenInMillis": result.time_taken_ms,
        "totalFilesDeleted": result.total_files_deleted,
        "earliestCommitToRetain": plan.earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": plan.last_completed_commit_timestamp,
        "partitionMetadata": {
            p: {"partitionPath": p, "policy": plan.policy,
                "deletePathPatterns": names(plan.files_per_partition.get(p, ())),
                "successDeleteFiles": names(result.deleted_files.get(p, [])),
                "failedDeleteFiles": names(result.failed_files.get(p, [])),
                "isPartitionDeleted": p in result.deleted_partitions}
            for p in partitions
        },
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
    }

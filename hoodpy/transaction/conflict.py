"""Optimistic conflict detection (Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy).

Two writes conflict when they touched the same file group. At commit time, under the lock, a write is
compared with every write instant that completed after it started, with pending clustering plans, and with
the compactions planned after its instant (pending or completed: a merge-on-read write's log files belong to
the file slice it saw when it started, which such a compaction would leave behind). A compaction planned
before the write's instant does not conflict: the write saw it and appended to the slice it creates.
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.errors import WriteConflictError
from hoodpy.storage import Storage
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.compaction_plan import pending_compaction_file_groups
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.metadata import CommitMetadata, OperationType
from hoodpy.timeline.timeline import Timeline

FileGroupId = tuple[str, str]  # (partition path, file id)


def touched_file_groups(metadata: CommitMetadata) -> set[FileGroupId]:
    """File groups a commit wrote or replaced."""
    written = {(s.partition_path, s.file_id) for s in metadata.write_stats if s.file_id}
    return written | metadata.replaced_file_ids()


def pending_clustering_file_groups(storage: Storage, timeline: Timeline) -> dict[str, set[FileGroupId]]:
    """Instant time -> input file groups of every pending clustering plan."""
    out: dict[str, set[FileGroupId]] = {}
    for instant in timeline.pending([Action.REPLACECOMMIT]):
        requested = instant.with_state(State.REQUESTED)
        rel = requested.path
        if not storage.exists(rel):
            continue
        data = storage.read_bytes(rel)
        if not data:
            continue
        meta = deserialize(AvroModel.REQUESTED_REPLACE_METADATA, data, source=storage.full_path(rel))
        plan = meta.get("clusteringPlan")
        if not plan:
            continue
        groups = {(s.get("partitionPath") or "", s["fileId"])
                  for g in plan.get("inputGroups") or [] for s in g.get("slices") or []}
        out[instant.timestamp] = groups
    return out


def check_conflicts(storage: Storage, timeline: Timeline, instant_time: str, touched: Iterable[FileGroupId],
                    completed_at_start: set[str]) -> None:
    """Raise WriteConflictError naming the first instant whose file groups overlap ``touched``."""
    mine = set(touched)
    if not mine:
        return
    for instant in timeline.completed_commits():
        if instant.timestamp == instant_time or instant.timestamp in completed_at_start:
            continue
        metadata = timeline.commit_metadata(instant)
        if metadata.operation_type == OperationType.COMPACT and instant.timestamp < instant_time:
            continue  # planned before this write, which appended to the slice it creates (as Hudi resolves it)
        overlap = mine & touched_file_groups(metadata)
        if overlap:
            raise WriteConflictError(instant_time, instant.timestamp, [f for _, f in overlap])
    compactions = pending_compaction_file_groups(storage, timeline)
    overlap = {fg: t for fg, t in compactions.items() if fg in mine and t > instant_time}
    if overlap:
        raise WriteConflictError(instant_time, f"{min(overlap.values())} (pending compaction)",
                                 [f for _, f in overlap])
    for plan_time, groups in pending_clustering_file_groups(storage, timeline).items():
        if plan_time == instant_time:
            continue
        overlap = mine & groups
        if overlap:
            raise WriteConflictError(instant_time, f"{plan_time} (pending clustering)", [f for _, f in overlap])

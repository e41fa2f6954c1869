"""Table service plans on the timeline as rows: clustering plans (``show_clustering``'s columns, plus one
row per input file slice), compaction plans (``show_compaction``'s columns) and pending clean plans (one row
per partition, and one per file to delete).

A plan is what a requested instant holds: ``<t>.replacecommit.requested`` (operation CLUSTER),
``<t>.compaction.requested`` and ``<t>.clean.requested``. Plans that cannot be read are skipped, as Hudi's
listings skip them.
"""

from __future__ import annotations

from hoodpy.errors import PlanNotFoundError
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.services.clean.execute import load_clean_plan
from hoodpy.services.clean.plan import CleanerPlan
from hoodpy.services.clustering.plan import ClusteringPlan, clustering_instants
from hoodpy.storage import Storage
from hoodpy.timeline.compaction_plan import CompactionPlan, load_compaction_plan
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.timeline import Timeline

CLUSTERING = columns(("timestamp", "string"), ("input_group_size", "int"), ("state", "string"),
                     ("involved_partitions", "string"))
COMPACTION = columns(("timestamp", "string"), ("operation_size", "int"), ("state", "string"))
CLUSTERING_SLICES = columns(
    ("timestamp", "string"), ("state", "string"), ("group", "int"), ("partition_path", "string"),
    ("file_id", "string"), ("base_instant", "string"), ("num_output_file_groups", "int"),
    ("sort_columns", "string"), ("layout_strategy", "string"),
)
PENDING_CLEANS = columns(
    ("clean_time", "string"), ("state", "string"), ("policy", "string"), ("earliest_commit_to_retain", "string"),
    ("last_completed_commit_timestamp", "string"), ("partition_path", "string"), ("files_to_delete", "int"),
    ("is_partition_deleted", "boolean"),
)
PENDING_CLEAN_FILES = columns(("clean_time", "string"), ("state", "string"), ("partition_path", "string"),
                              ("file_path", "string"))


def clustering_row(instant_time: str, state: str, plan: ClusteringPlan, show_partitions: bool) -> tuple:
    partitions = ",".join(plan.partitions) if show_partitions else "*"
    return instant_time, len(plan.input_groups), state, partitions


def _clusterings(storage: Storage, pending_only: bool) -> list[tuple[Instant, ClusteringPlan]]:
    """Clustering instants with their plans, newest first."""
    found = reversed(clustering_instants(storage, Timeline.load(storage)))
    return [(i, p) for i, p in found if not (pending_only and i.is_completed)]


def clustering_plans(storage: Storage, *, pending_only: bool = False, show_partitions: bool = False,
                     limit: int | None = None) -> Rows:
    """One row per clustering plan on the active timeline (pending and completed unless ``pending_only``)."""
    rows = [clustering_row(i.timestamp, i.state.value, p, show_partitions)
            for i, p in _clusterings(storage, pending_only)]
    return make_rows(CLUSTERING, rows, limit)


def clustering_plan_slices(storage: Storage, *, pending_only: bool = True, limit: int | None = None) -> Rows:
    """One row per file slice a clustering plan rewrites: its group and what the group is sorted by."""
    rows = []
    for instant, plan in _clusterings(storage, pending_only):
        sort_columns = ",".join(plan.sort_columns)
        layout = plan.layout_strategy() or ""
        for number, group in enumerate(plan.input_groups):
            for s in group.slices:
                rows.append((instant.timestamp, instant.state.value, number, s.partition_path, s.file_id,
                             s.base_instant_time, group.num_output_file_groups, sort_columns, layout))
    return make_rows(CLUSTERING_SLICES, rows, limit)


def compaction_instants(storage: Storage, timeline: Timeline | None = None) -> list[tuple[Instant, CompactionPlan]]:
    """Compactions on the active timeline with their plans, newest first: pending ones (action compaction)
    and completed ones (a commit whose ``<t>.compaction.requested`` holds the plan)."""
    timeline = timeline or Timeline.load(storage)
    out = []
    for instant in reversed(timeline.filter(actions=[Action.COMPACTION, Action.COMMIT])):
        try:
            out.append((instant, load_compaction_plan(storage, instant.timestamp)))
        except PlanNotFoundError:
            continue  # a commit that was no compaction
    return out


def compaction_row(instant: Instant, plan: CompactionPlan) -> tuple:
    """``show_compaction`` / ``run_compaction``'s row: instant time, number of operations, state."""
    return instant.timestamp, len(plan.operations), instant.state.value


def compaction_plans(storage: Storage, *, limit: int | None = None) -> Rows:
    """One row per compaction on the active timeline (Hudi's show_compaction), newest first."""
    return make_rows(COMPACTION, (compaction_row(i, p) for i, p in compaction_instants(storage)), limit)


def pending_clean_plans(storage: Storage) -> list[tuple[Instant, CleanerPlan]]:
    """Requested and inflight cleans with their plans, oldest first."""
    out = []
    for instant in Timeline.load(storage).filter(actions=[Action.CLEAN]):
        if instant.is_completed:
            continue
        try:
            out.append((instant, load_clean_plan(storage, instant.timestamp)))
        except PlanNotFoundError:
            continue
    return out


def pending_cleans(storage: Storage, *, limit: int | None = None) -> Rows:
    """One row per partition of each pending clean plan: how many files it deletes there."""
    rows = []
    for instant, plan in pending_clean_plans(storage):
        partitions = sorted(set(plan.files_per_partition) | set(plan.partitions_to_delete))
        for partition in partitions:
            rows.append((instant.timestamp, instant.state.value, plan.policy, plan.earliest_commit_to_retain,
                         plan.last_completed_commit_timestamp, partition,
                         len(plan.files_per_partition.get(partition, ())), partition in plan.partitions_to_delete))
    return make_rows(PENDING_CLEANS, rows, limit)


def pending_clean_files(storage: Storage, *, limit: int | None = None) -> Rows:
    """One row per file a pending clean deletes (paths relative to the base path)."""
    rows = [(instant.timestamp, instant.state.value, partition, path)
            for instant, plan in pending_clean_plans(storage)
            for partition, paths in sorted(plan.files_per_partition.items()) for path in paths]
    return make_rows(PENDING_CLEAN_FILES, rows, limit)

"""The clustering service (``table.clustering``): schedule a plan, execute it, and clustering after a write.

Example:
    >>> plan = t.clustering.schedule(sort_columns=["city", "ts"], layout="z-order")
    >>> t.clustering.execute(plan.instant_time)
    ClusteringCommitResult(instant_time='2024...', input_groups=1, ...)
    >>> [p.instant_time for p in t.clustering.pending()]
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hoodpy.config import HoodieConfig
from hoodpy.config.clustering import ClusteringConfig
from hoodpy.config.concurrency import ConcurrencyConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema
from hoodpy.services.clustering.execute import ClusteringCommitResult, execute_clustering
from hoodpy.services.clustering.plan import ClusteringPlan, clustering_instants, load_clustering_plan
from hoodpy.services.clustering.strategy import plan_clustering
from hoodpy.services.table_service import Options, ServiceContext, TableService, instant_time_of_plan
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, serialize_for_layout
from hoodpy.timeline.instant import Action, Instant, plan_instant_time
from hoodpy.timeline.metadata import OperationType
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.heartbeat import is_expired

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

# Triggers of the automatic scheduling after a write (None: an explicit call, which always plans).
INLINE = "inline"
ASYNC = "async"


# -- when to schedule -----------------------------------------------------------------------------------


def last_completed_clustering(timeline: Timeline) -> Instant | None:
    """The newest completed replacecommit whose operation is CLUSTER (Hudi's getLastClusterCommit)."""
    for instant in reversed(timeline.completed_replacecommits()):
        if timeline.commit_metadata(instant).operation_type == OperationType.CLUSTER:
            return instant
    return None


def commits_since_last_clustering(timeline: Timeline) -> int:
    last = last_completed_clustering(timeline)
    return len(timeline.completed_commits_in_range(last.timestamp if last else None, None))


def should_schedule(timeline: Timeline, config: HoodieConfig, trigger: str | None) -> bool:
    """Whether an inline (``inline.max.commits``) or async / schedule-inline (``async.max.commits``)
    trigger may plan now; explicit calls (trigger None) always may."""
    if trigger is None:
        return True
    if trigger not in (INLINE, ASYNC):
        raise InvalidConfigError("trigger", trigger, f"expected {INLINE!r}, {ASYNC!r} or None")
    key = ClusteringConfig.INLINE_MAX_COMMITS if trigger == INLINE else ClusteringConfig.ASYNC_MAX_COMMITS
    return commits_since_last_clustering(timeline) >= config.get(key)


def table_schema(storage: Storage, timeline: Timeline) -> pa.Schema | None:
    """The data schema of the newest commit, else the create schema from hoodie.properties."""
    from hoodpy.config.properties import load_table_properties

    text = timeline.latest_schema()
    if not text:
        props = load_table_properties(storage) or {}
        text = props.get(TableConfig.CREATE_SCHEMA.key)
    return arrow_schema_from_avro(parse_avro_schema(text)) if text else None


class ClusteringService(TableService[ClusteringPlan, ClusteringCommitResult]):
    """``HoodieTable.clustering``: schedule, execute and list clustering plans of one table.

    Executing needs the table (its Spark session writes the files): build the service from a HoodieTable.
    """

    action = Action.REPLACECOMMIT
    supports_table_version_8 = True
    supports_merge_on_read = True  # slices with log files are merged while rewritten

    def schedule(self, options: Options = None, *, instant_time: str | None = None,
                 sort_columns: Sequence[str] | str | None = None, layout: str | None = None,
                 trigger: str | None = None, table_schema_fields: pa.Schema | Iterable[str] | None = None,
                 now: datetime | None = None) -> ClusteringPlan | None:
        """Plan clustering and save it as ``<t>.replacecommit.requested``; None when nothing qualifies.

        Args:
            options: any ``hoodie.clustering.*`` / ``hoodie.layout.optimize.*`` options for this call.
            instant_time: the plan's instant (default: a new one); must be later than every instant.
            sort_columns: ``hoodie.clustering.plan.strategy.sort.columns``.
            layout: ``hoodie.layout.optimize.strategy`` (linear, z-order, hilbert).
            trigger: ``"inline"`` / ``"async"`` applies the max-commits gate; None plans unconditionally.
            table_schema_fields: schema to validate sort columns against (default: the table's latest).
            now: clock for DAY_ROLLING.

        Under optimistic concurrency the table lock is held from loading the timeline to saving the plan.
        """
        layered = dict(options.options if isinstance(options, HoodieConfig) else options or {})
        if sort_columns is not None:
            layered[ClusteringConfig.SORT_COLUMNS.key] = (
                sort_columns if isinstance(sort_columns, str) else ",".join(sort_columns))
        if layout is not None:
            layered[ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key] = layout
        context = self._context(layered)
        storage, config = context.storage, context.config
        ClusteringConfig.validate(config)
        with self._transaction(context).locked():
            timeline = context.timeline()
            if not should_schedule(timeline, config, trigger):
                return None
            view = FileSystemView.load(storage, timeline)
            schema = table_schema_fields if table_schema_fields is not None else table_schema(storage, timeline)
            plan = plan_clustering(timeline, view, config, table_schema_fields=schema, now=now)
            if plan is None:
                return None
            instant_time = plan_instant_time(instant_time, timeline.latest_instant_time(), "Clustering")
            plan = replace(plan, instant_time=instant_time)
            # Layout 2 (versions 8 and 9) names it <t>.clustering.requested, with Hudi 1.x's schema.
            data = serialize_for_layout(AvroModel.REQUESTED_REPLACE_METADATA, plan.requested_metadata(),
                                        timeline.layout)
            transitions.create_requested(storage, instant_time, Action.REPLACECOMMIT, data,
                                         layout=timeline.layout, clustering=True)
            return plan

    def execute(self, plan: ClusteringPlan | str, *, options: Options = None) -> ClusteringCommitResult:
        """Run the plan saved at the plan's instant (resuming a failed attempt) and complete it.

        ``options``: file writing and concurrency; layout keys only for plans that do not record their
        layout (e.g. plans Java Hudi scheduled).
        """
        if self.context.table is None:
            raise TypeError("executing clustering needs the table, whose Spark session writes the files: "
                            "build the service with ClusteringService.of(table)")
        return execute_clustering(self._context(options), instant_time_of_plan(plan))

    def run(self, options: Options = None, *, sort_columns: Sequence[str] | str | None = None,
            layout: str | None = None) -> list[ClusteringCommitResult]:
        """Schedule and execute a new plan; when none qualifies, execute the pending ones (as
        run_clustering's default scheduleAndExecute does)."""
        plan = self.schedule(options, sort_columns=sort_columns, layout=layout)
        instants = [plan.instant_time] if plan is not None else [p.instant_time for p in self.pending()]
        return [self.execute(t, options=options) for t in instants]

    def plan(self, instant_time: str) -> ClusteringPlan:
        return load_clustering_plan(self.storage, instant_time)

    def _instants(self) -> list[tuple[Instant, ClusteringPlan]]:
        return clustering_instants(self.storage, self.context.timeline())

    def pending_instant_times(self) -> list[str]:
        """Requested and inflight clusterings (not other replacecommits), oldest first."""
        return [i.timestamp for i, _ in self._instants() if not i.is_completed]

    def pending(self) -> list[ClusteringPlan]:
        """Requested and inflight clustering plans, oldest first."""
        return [p for i, p in self._instants() if not i.is_completed]

    def instants(self) -> list[tuple[str, str, ClusteringPlan]]:
        """(instant time, state, plan) of every clustering on the active timeline, newest first."""
        return [(i.timestamp, i.state.value, p) for i, p in reversed(self._instants())]

    def finish_pending(self, options: Options = None) -> list[ClusteringCommitResult]:
        """Execute pending plans, oldest first, except those whose heartbeat is alive (being executed
        elsewhere)."""
        config = self._context(options).config
        interval = config.get(ConcurrencyConfig.HEARTBEAT_INTERVAL_MS)
        misses = config.get(ConcurrencyConfig.HEARTBEAT_TOLERABLE_MISSES)
        return [self.execute(t, options=options) for t in self.pending_instant_times()
                if is_expired(self.storage, t, interval, misses)]


def cluster_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None,
                         ) -> ClusteringCommitResult | ClusteringPlan | None:
    """Table services after a successful write, as Hudi's write client runs them.

    ``hoodie.clustering.inline``: schedule once ``inline.max.commits`` commits completed since the last
    clustering, then execute that plan. ``hoodie.clustering.schedule.inline``: only schedule, gated by
    ``async.max.commits`` (an async job executes). Returns the result, the plan, or None.
    """
    context = ServiceContext.of(table)
    config = context.config.with_options(options)
    if not (config.get(ClusteringConfig.INLINE) or config.get(ClusteringConfig.SCHEDULE_INLINE)):
        return None
    service = ClusteringService(context)
    if config.get(ClusteringConfig.INLINE):
        plan = service.schedule(options, trigger=INLINE)
        return service.execute(plan, options=options) if plan is not None else None
    if config.get(ClusteringConfig.SCHEDULE_INLINE):
        return service.schedule(options, trigger=ASYNC)
    return None


def resume_pending_clustering(table: HoodieTable, options: Mapping[str, Any] | None = None,
                              ) -> list[ClusteringCommitResult]:
    """With ``hoodie.clustering.inline``, finish plans an earlier inline run left pending (it crashed),
    oldest first. Call before a write: their file groups reject updates until they complete.

    Plans whose heartbeat is alive (being executed elsewhere) are left alone.
    """
    context = ServiceContext.of(table)
    if not context.config.with_options(options).get(ClusteringConfig.INLINE):
        return []
    return ClusteringService(context).finish_pending(options)

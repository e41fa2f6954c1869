"""The table's clustering namespace (``table.clustering``) and clustering after a write.

Example:
    >>> plan = t.clustering.schedule(sort_columns=["city", "ts"], layout="z-order")
    >>> t.clustering.execute(plan.instant_time)
    ClusteringCommitResult(instant_time='2024...', input_groups=1, ...)
    >>> [p.instant_time for p in t.clustering.pending()]
    []
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hoodpy.config.clustering import ClusteringConfig
from hoodpy.config.concurrency import ConcurrencyConfig
from hoodpy.services.clustering.execute import ClusteringCommitResult, execute_clustering
from hoodpy.services.clustering.plan import (
    ASYNC,
    INLINE,
    ClusteringPlan,
    clustering_instants,
    load_clustering_plan,
    schedule_clustering,
)
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.heartbeat import is_expired

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable


class ClusteringService:
    """``HoodieTable.clustering``: schedule, execute and list clustering plans of one table."""

    def __init__(self, table: HoodieTable):
        self.table = table

    def schedule(self, *, sort_columns: Sequence[str] | str | None = None, layout: str | None = None,
                 options: Mapping[str, Any] | None = None, instant_time: str | None = None,
                 ) -> ClusteringPlan | None:
        """Plan clustering and save it as a requested replacecommit; None when nothing qualifies.

        Args:
            sort_columns: ``hoodie.clustering.plan.strategy.sort.columns``.
            layout: ``hoodie.layout.optimize.strategy`` (linear, z-order, hilbert).
            options: any other ``hoodie.clustering.*`` / ``hoodie.layout.optimize.*`` options.
            instant_time: the plan's instant (default: a new one).
        """
        opts = dict(options or {})
        if sort_columns is not None:
            opts[ClusteringConfig.SORT_COLUMNS.key] = (
                sort_columns if isinstance(sort_columns, str) else ",".join(sort_columns))
        if layout is not None:
            opts[ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key] = layout
        return schedule_clustering(self.table, opts, instant_time=instant_time)

    def execute(self, instant_time: str, *, options: Mapping[str, Any] | None = None) -> ClusteringCommitResult:
        """Run the plan saved at ``instant_time`` (resuming a failed attempt) and complete it."""
        return execute_clustering(self.table, instant_time, options=options)

    def run(self, *, sort_columns: Sequence[str] | str | None = None, layout: str | None = None,
            options: Mapping[str, Any] | None = None) -> list[ClusteringCommitResult]:
        """Schedule and execute a new plan; when none qualifies, execute the pending ones (as
        run_clustering's default scheduleAndExecute does)."""
        plan = self.schedule(sort_columns=sort_columns, layout=layout, options=options)
        instants = [plan.instant_time] if plan is not None else [p.instant_time for p in self.pending()]
        return [self.execute(t, options=options) for t in instants]

    def plan(self, instant_time: str) -> ClusteringPlan:
        return load_clustering_plan(self.table.storage, instant_time)

    def pending(self) -> list[ClusteringPlan]:
        """Requested and inflight clustering plans, oldest first."""
        storage = self.table.storage
        return [p for i, p in clustering_instants(storage, Timeline.load(storage)) if not i.is_completed]

    def instants(self) -> list[tuple[str, str, ClusteringPlan]]:
        """(instant time, state, plan) of every clustering on the active timeline, newest first."""
        storage = self.table.storage
        return [(i.timestamp, i.state.value, p)
                for i, p in reversed(clustering_instants(storage, Timeline.load(storage)))]


def cluster_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None,
                         ) -> ClusteringCommitResult | ClusteringPlan | None:
    """Table services after a successful write, as Hudi's write client runs them.

    ``hoodie.clustering.inline``: schedule once ``inline.max.commits`` commits completed since the last
    clustering, then execute that plan. ``hoodie.clustering.schedule.inline``: only schedule, gated by
    ``async.max.commits`` (an async job executes). Returns the result, the plan, or None.
    """
    config = table.config.with_options(options)
    if config.get(ClusteringConfig.INLINE):
        plan = schedule_clustering(table, options, trigger=INLINE)
        return execute_clustering(table, plan.instant_time, options=options) if plan is not None else None
    if config.get(ClusteringConfig.SCHEDULE_INLINE):
        return schedule_clustering(table, options, trigger=ASYNC)
    return None


def resume_pending_clustering(table: HoodieTable, options: Mapping[str, Any] | None = None,
                              ) -> list[ClusteringCommitResult]:
    """With ``hoodie.clustering.inline``, finish plans an earlier inline run left pending (it crashed),
    oldest first. Call before a write: their file groups reject updates until they complete.

    Plans whose heartbeat is alive (being executed elsewhere) are left alone.
    """
    config = table.config.with_options(options)
    if not config.get(ClusteringConfig.INLINE):
        return []
    storage = table.storage
    interval = config.get(ConcurrencyConfig.HEARTBEAT_INTERVAL_MS)
    misses = config.get(ConcurrencyConfig.HEARTBEAT_TOLERABLE_MISSES)
    done = []
    for instant, _ in clustering_instants(storage, Timeline.load(storage)):
        if not instant.is_completed and is_expired(storage, instant.timestamp, interval, misses):
            done.append(execute_clustering(table, instant.timestamp, options=options))
    return done

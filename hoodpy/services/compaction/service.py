"""The compaction service (``table.compaction``): schedule a plan, execute it, and compaction after a write.

Scheduling follows Hudi 0.14's ScheduleCompactionActionExecutor: the new instant is later than every instant
on the timeline (so no completed write or other compaction is at or after it), and, for a single writer
(no optimistic concurrency, EAGER failed-writes policy), no write may still be pending before it (its logs
would land in the slice being compacted after the plan was made). An explicit call always plans; writers
scheduling on their own (:func:`compact_after_commit`) ask the trigger strategy first (``trigger.py``).

Example:
    >>> plan = t.compaction.schedule()
    >>> [op.file_id for op in plan.operations]
    ['d206069c-22c8-4532-b9ea-3cf4282342c4-0']
    >>> t.compaction.execute(plan.instant_time).files_written
    1
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hoodpy.config import HoodieConfig
from hoodpy.config.compaction import CompactionConfig
from hoodpy.config.concurrency import EAGER
from hoodpy.config.table import MERGE_ON_READ, TableConfig
from hoodpy.errors import CompactionError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.markers import marked_log_files
from hoodpy.services.compaction.execute import (
    CompactionCommitResult,
    compaction_transaction,
    execute_compaction,
    require_merge_on_read,
)
from hoodpy.services.compaction.strategy import plan_operations
from hoodpy.services.compaction.trigger import should_compact
from hoodpy.services.table_service import Options, ServiceContext, TableService, instant_time_of_plan
from hoodpy.timeline.compaction_plan import (
    CompactionPlan,
    load_compaction_plan,
    pending_compaction_file_groups,
    save_compaction_plan,
)
from hoodpy.timeline.instant import Action, plan_instant_time
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import pending_clustering_file_groups
from hoodpy.transaction.heartbeat import is_expired
from hoodpy.transaction.transaction import WriteTransaction

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable


def check_schedulable(timeline: Timeline, instant_time: str, transaction: WriteTransaction,
                      clustering: set[str]) -> None:
    """Raise CompactionError when a single writer's table has a write pending before ``instant_time``
    (Hudi: "Earliest write inflight instant time must be later than compaction time"). Under optimistic
    concurrency or the LAZY failed-writes policy writes may run alongside, as in Hudi. Pending clusterings
    (``clustering``: their instants) do not count: their file groups are left out of the plan instead."""
    if transaction.optimistic or transaction.policy != EAGER:
        return
    earlier = [i for i in timeline.pending_writes() if i.timestamp < instant_time and i.timestamp not in clustering]
    if earlier:
        raise CompactionError(
            f"Cannot schedule a compaction at {instant_time}: the write {earlier[0]} is still pending before it "
            "(its log files would miss the plan). Let it finish, or roll it back (the next write does), then "
            "schedule again. The table is unchanged.")


class CompactionService(TableService[CompactionPlan, CompactionCommitResult]):
    """``HoodieTable.compaction``: schedule, execute and list the compactions of a merge-on-read table.

    Executing needs the table (its Spark session writes the files): build the service from a HoodieTable.
    """

    action = Action.COMPACTION
    supports_table_version_8 = True  # 1.x plans; logs join slices by completion time, see FileGroup

    def __init__(self, context: ServiceContext):
        require_merge_on_read(context.storage, context.config, "compact or list the compactions of")
        super().__init__(context)

    def schedule(self, options: Options = None, *, instant_time: str | None = None,
                 triggered: bool = False) -> CompactionPlan | None:
        """Plan a compaction and save it as ``<t>.compaction.requested``; None when no file slice has log
        files (or, ``triggered``, when the trigger strategy says not yet).

        Args:
            options: ``hoodie.compaction.*`` / ``hoodie.compact.*`` options for this call.
            instant_time: the plan's instant (default: a new one); must be later than every instant.
            triggered: apply ``hoodie.compact.inline.trigger.strategy`` (what writers do on their own).

        Raises:
            CompactionError: a write is pending before the new instant (single writer).

        Under optimistic concurrency the table lock is held from loading the timeline to saving the plan.
        """
        context = self._context(options)
        storage, config = context.storage, context.config
        CompactionConfig.validate(config)
        transaction = compaction_transaction(context)
        with transaction.locked():
            timeline = context.timeline()
            instant_time = plan_instant_time(instant_time, timeline.latest_instant_time(), "Compaction")
            if triggered and not should_compact(timeline, config, instant_time):
                return None
            clustering = pending_clustering_file_groups(storage, timeline)
            check_schedulable(timeline, instant_time, transaction, set(clustering))
            excluded = set(pending_compaction_file_groups(storage, timeline))
            excluded |= {fg for groups in clustering.values() for fg in groups}
            being_written = {rel for i in timeline.pending_writes() for rel in marked_log_files(storage, i.timestamp)}
            operations = plan_operations(FileSystemView.load(storage, timeline), excluded, config, being_written)
            if not operations:
                return None
            plan = CompactionPlan(tuple(operations), instant_time=instant_time)
            save_compaction_plan(storage, plan)
            return plan

    def execute(self, plan: CompactionPlan | str, *, options: Options = None) -> CompactionCommitResult:
        """Run the plan saved at the plan's instant (rolling back a failed attempt first) and complete it."""
        if self.context.table is None:
            raise TypeError("executing a compaction needs the table, whose Spark session writes the files: "
                            "build the service with CompactionService.of(table)")
        return execute_compaction(self._context(options), instant_time_of_plan(plan))

    def run(self, options: Options = None) -> list[CompactionCommitResult]:
        """Schedule and execute a new plan; when nothing qualifies, execute the pending ones (as
        run_compaction's scheduleAndExecute does)."""
        plan = self.schedule(options)
        instants = [plan.instant_time] if plan is not None else self.pending_instant_times()
        return [self.execute(t, options=options) for t in instants]

    def plan(self, instant_time: str) -> CompactionPlan:
        return load_compaction_plan(self.storage, instant_time)

    def finish_pending(self, options: Options = None) -> list[CompactionCommitResult]:
        """Execute pending plans, oldest first, except those whose heartbeat is alive (being executed
        elsewhere)."""
        transaction = compaction_transaction(self._context(options))
        return [self.execute(t, options=options) for t in self.pending_instant_times()
                if is_expired(self.storage, t, transaction.heartbeat_ms, transaction.misses)]


def compact_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None,
                         ) -> list[CompactionCommitResult] | CompactionPlan | None:
    """Compaction after a successful write to a merge-on-read table, as Hudi's write client runs it.

    ``hoodie.compact.inline``: finish compactions an earlier run left pending, then schedule one when the
    trigger strategy says so and execute it; returns the results (possibly none). Else
    ``hoodie.compact.schedule.inline``: schedule one (trigger permitting) unless one is pending already, for
    another job to execute; returns the plan or None. Copy-on-write tables: None, nothing done.
    """
    context = ServiceContext.of(table)
    config = context.config.with_options(options)
    if config.get(TableConfig.TYPE) != MERGE_ON_READ:
        return None
    inline, schedule_inline = config.get(CompactionConfig.INLINE), config.get(CompactionConfig.SCHEDULE_INLINE)
    if not (inline or schedule_inline):
        return None
    service = CompactionService(context)
    if inline:
        results = service.finish_pending(options)
        plan = service.schedule(options, triggered=True)
        return results + ([service.execute(plan, options=options)] if plan is not None else [])
    if service.pending_instant_times():
        return None
    return service.schedule(options, triggered=True)


def validate_compaction_options(config: HoodieConfig) -> None:
    """A bad compaction option of a merge-on-read table fails before a write starts."""
    if config.get(TableConfig.TYPE) == MERGE_ON_READ:
        CompactionConfig.validate(config)

"""The table's cleaning namespace (``table.cleaning``) and cleaning after a commit.

Scheduling gathers what :func:`~hoodpy.services.clean.plan.plan_clean` needs from storage (the listing of
the partitions to scan, savepointed files, pending clustering inputs, pending writes), and saves a plan
only when it deletes something: a table with nothing to clean gets no clean instant, as in Hudi.
The automatic check after a commit is driver-only: a timeline count (``hoodie.clean.max.commits``), then,
for the by-commits policies, nothing at all until enough commits exist to retain.

Example:
    >>> t.cleaning.run({"hoodie.cleaner.commits.retained": "2"})
    CleanResult(instant_time='2024...', policy='KEEP_LATEST_COMMITS', ...)
    >>> t.cleaning.schedule()   # None: nothing left to clean
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hoodpy.config import HoodieConfig
from hoodpy.config.clean import KEEP_LATEST_FILE_VERSIONS, NUM_COMMITS, CleanConfig
from hoodpy.errors import PlanNotFoundError
from hoodpy.file_group.fs_view import table_group_files
from hoodpy.services.clean.execute import (
    CleanResult,
    execute_clean,
    load_clean_plan,
    read_clean_metadata,
    save_clean_plan,
)
from hoodpy.services.clean.plan import (
    CleanerPlan,
    Protected,
    earliest_commit_to_retain,
    partitions_to_clean,
    plan_clean,
    with_instant,
)
from hoodpy.services.table_service import Options, TableService, instant_time_of_plan
from hoodpy.storage import Storage
from hoodpy.timeline.compaction_plan import pending_compactions
from hoodpy.timeline.instant import Action, plan_instant_time
from hoodpy.timeline.timeline import Timeline

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)


def last_completed_clean_earliest(storage: Storage, timeline: Timeline) -> str | None:
    """earliestCommitToRetain of the newest completed clean ('' or None when there is none)."""
    cleans = timeline.filter(actions=[Action.CLEAN], states=None)
    done = [i for i in cleans if i.is_completed]
    if not done:
        return None
    return read_clean_metadata(storage, done[-1].timestamp).get("earliestCommitToRetain") or None


def commits_since_last_clean(timeline: Timeline) -> int:
    cleans = [i for i in timeline.filter(actions=[Action.CLEAN]) if i.is_completed]
    since = cleans[-1].timestamp if cleans else None
    return len([i for i in timeline.completed_commits() if since is None or i.timestamp > since])


def protected_files(storage: Storage, timeline: Timeline) -> Protected:
    """Savepointed files, pending clustering inputs (base and log files), the slices pending compactions merge
    and pending writes: never cleaned. A compaction completes as a commit of its instant while its requested
    and inflight files stay: it is pending only until then."""
    from hoodpy.services.clustering.plan import clustering_instants
    from hoodpy.services.savepoint import savepointed_files

    clustering = {path.rsplit("/", 1)[-1] for i, plan in clustering_instants(storage, timeline)
                  if not i.is_completed for g in plan.input_groups for s in g.slices
                  for path in (s.data_file_path, *s.delta_file_paths) if path}
    pending = [i.timestamp for i in timeline.filter(actions=_WRITE_ACTIONS)
               if not i.is_completed and not timeline.is_completed_write(i.timestamp)]
    compacting = {(op.partition_path, op.file_id, op.base_instant_time)
                  for instant, plan in pending_compactions(storage, timeline)
                  if not timeline.is_completed_write(instant.timestamp) for op in plan.operations}
    return Protected(savepointed_files=savepointed_files(storage, timeline),
                     pending_clustering_files=clustering, pending_write_times=pending,
                     pending_compaction_slices=compacting)


def _with_deleted_savepoint_partitions(storage: Storage, partitions: list[str] | None) -> list[str] | None:
    from hoodpy.services.savepoint import partitions_of_deleted_savepoints

    if partitions is None:
        return None
    return sorted(set(partitions) | partitions_of_deleted_savepoints(storage))


def compute_clean_plan(storage: Storage, config: HoodieConfig, *, timeline: Timeline | None = None,
                       now: datetime | None = None) -> CleanerPlan | None:
    """The plan a clean would run now (nothing is written), or None when nothing is to be deleted."""
    CleanConfig.validate(config)
    timeline = timeline or Timeline.load(storage)
    policy = CleanConfig.policy(config)
    earliest = earliest_commit_to_retain(timeline, policy, config, now=now)
    if earliest is None and policy != KEEP_LATEST_FILE_VERSIONS:
        return None  # the cheap exit: nothing is old enough yet
    partitions = partitions_to_clean(timeline, policy, earliest, config,
                                     last_clean_earliest=last_completed_clean_earliest(storage, timeline))
    partitions = _with_deleted_savepoint_partitions(storage, partitions)
    if partitions == []:
        return None
    files = table_group_files(storage, timeline, partitions)  # the metadata table's listing when it has one
    scanned = partitions if partitions is not None else sorted({f.partition_path for f in files})
    return plan_clean(timeline, files, config, protected=protected_files(storage, timeline),
                      scanned_partitions=scanned, now=now)


class CleanService(TableService[CleanerPlan, CleanResult]):
    """``HoodieTable.cleaning``: schedule, execute and list cleans of one table."""

    action = Action.CLEAN
    supports_table_version_8 = True  # the clean instants follow the table's timeline layout
    supports_merge_on_read = True  # a file slice's log files go with its base file

    def preview(self, options: Options = None, *, now: datetime | None = None) -> CleanerPlan | None:
        """What a clean would delete now; nothing is written (a dry run)."""
        return compute_clean_plan(self.storage, self._context(options).config, now=now)

    def schedule(self, options: Options = None, *, instant_time: str | None = None, now: datetime | None = None,
                 trigger: bool = False) -> CleanerPlan | None:
        """Plan a clean and save it as ``<t>.clean.requested``; None (and no instant) when nothing to delete.

        ``trigger`` applies the automatic trigger (``hoodie.clean.trigger.strategy``); explicit calls plan always.
        """
        from hoodpy.services.savepoint import forget_deleted_savepoints

        storage, context = self.storage, self._context(options)
        config = context.config
        CleanConfig.validate(config)
        with self._transaction(context).locked():  # planning reads the timeline it must not race
            timeline = context.timeline()
            if trigger and config.get(CleanConfig.TRIGGER_STRATEGY) == NUM_COMMITS and (
                    commits_since_last_clean(timeline) < config.get(CleanConfig.MAX_COMMITS)):
                return None
            plan = compute_clean_plan(storage, config, timeline=timeline, now=now)
            if plan is None:
                return None
            instant_time = plan_instant_time(instant_time, timeline.latest_instant_time(), "Clean")
            plan = with_instant(plan, instant_time)
            save_clean_plan(storage, plan)
            forget_deleted_savepoints(storage)  # their partitions were scanned for this plan
            return plan

    def execute(self, plan: CleanerPlan | str, *, options: Options = None) -> CleanResult:
        """Run the clean plan saved at the plan's instant (resuming a crashed attempt)."""
        return execute_clean(self.storage, instant_time_of_plan(plan), self._context(options).config)

    def run(self, options: Options = None, *, now: datetime | None = None, trigger: bool = False,
            schedule: bool = True) -> CleanResult | None:
        """Finish pending cleans, then schedule and execute a new one (Hudi's ``client.clean()``). Returns the
        new clean's result, else the last pending clean finished, else None."""
        finished = self.finish_pending(options)
        plan = self.schedule(options, now=now, trigger=trigger) if schedule else None
        if plan is not None:
            return self.execute(plan, options=options)
        return finished[-1] if finished else None

    def plan(self, instant_time: str) -> CleanerPlan:
        return load_clean_plan(self.storage, instant_time)

    def pending(self) -> list[CleanerPlan]:
        """Requested and inflight clean plans, oldest first."""
        out = []
        for t in self.pending_instant_times():
            try:
                out.append(self.plan(t))
            except PlanNotFoundError:
                continue
        return out


def clean_after_commit(table: HoodieTable, options: Mapping[str, Any] | None = None) -> CleanResult | None:
    """``hoodie.clean.automatic``: after a commit, finish pending cleans and clean if the trigger says so."""
    service = CleanService.of(table, options)
    if not service.context.config.get(CleanConfig.AUTOMATIC):
        return None
    return service.run(trigger=True)


def validate_after_commit_services(config: HoodieConfig) -> None:
    """Check the clean, archival and clustering options a write will use after its commit, before it starts."""
    from hoodpy.config.clean import ArchivalConfig
    from hoodpy.config.clustering import ClusteringConfig

    if config.get(CleanConfig.AUTOMATIC):
        CleanConfig.validate(config)
    if config.get(ArchivalConfig.AUTOMATIC):
        ArchivalConfig.validate(config)
    if config.get(ClusteringConfig.INLINE) or config.get(ClusteringConfig.SCHEDULE_INLINE):
        ClusteringConfig.require_clusterable_index(config)

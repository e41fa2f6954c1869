"""A write's transaction: clean up failed writes before starting, keep a heartbeat while running, and
commit under the lock with conflict detection when optimistic concurrency control is on."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import TypeVar

from hoodpy.config import HoodieConfig
from hoodpy.config.concurrency import EAGER, LAZY, ConcurrencyConfig
from hoodpy.services.rollback import RollbackService
from hoodpy.services.table_service import ServiceContext
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.metadata import CommitMetadata
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import check_conflicts, pending_clustering_file_groups, touched_file_groups
from hoodpy.transaction.heartbeat import Heartbeat, is_expired
from hoodpy.transaction.lock import lock_provider

T = TypeVar("T")


class WriteTransaction:
    def __init__(self, storage: Storage, config: HoodieConfig):
        self.storage = storage
        self.config = config
        self.optimistic = ConcurrencyConfig.is_optimistic(config)
        self.policy = ConcurrencyConfig.failed_writes_policy(config)
        self.heartbeat_ms = config.get(ConcurrencyConfig.HEARTBEAT_INTERVAL_MS)
        self.misses = config.get(ConcurrencyConfig.HEARTBEAT_TOLERABLE_MISSES)
        self._lock = lock_provider(storage, config) if self.optimistic else None
        self.completed_at_start: set[str] = set()

    @contextmanager
    def locked(self):
        """Hold the table lock (optimistic mode only; a single writer needs none)."""
        if self._lock is None:
            yield
            return
        self._lock.acquire()
        try:
            yield
        finally:
            self._lock.release()

    def clean_failed_writes(self, timeline: Timeline) -> Timeline:
        """Finish interrupted rollbacks and roll back failed writes per the failed-writes policy."""
        # Rollbacks run through the rollback service's schedule / execute, inside this transaction's lock.
        rollbacks = RollbackService(ServiceContext(self.storage, self.config))
        with self.locked():
            for pending in timeline.pending([Action.ROLLBACK]):  # interrupted by a crash: finish from the plan
                rollbacks.execute(pending.timestamp)
            timeline = Timeline.load(self.storage)
            clustering = pending_clustering_file_groups(self.storage, timeline)
            for instant in timeline.pending_writes():
                if instant.timestamp in clustering:
                    continue  # a scheduled table service, not a failed write
                if self.policy == EAGER or (
                        self.policy == LAZY and is_expired(self.storage, instant.timestamp, self.heartbeat_ms,
                                                           self.misses)):
                    rollbacks.execute(rollbacks.schedule(target=instant))
            timeline = Timeline.load(self.storage)
        self.completed_at_start = {i.timestamp for i in timeline.completed_commits()}
        return timeline

    def heartbeat(self, instant_time: str) -> Heartbeat:
        return Heartbeat(self.storage, instant_time, self.heartbeat_ms)

    def commit(self, inflight: Instant, metadata: CommitMetadata, publish: Callable[[], T]) -> T:
        """Publish the instant; under optimistic concurrency, first check for conflicting writes."""
        with self.locked():
            if self.optimistic:
                timeline = Timeline.load(self.storage)
                check_conflicts(self.storage, timeline, inflight.timestamp, touched_file_groups(metadata),
                                self.completed_at_start)
            return publish()

"""A write's transaction: clean up failed writes before starting, keep a heartbeat while running, and
commit under the lock with conflict detection when optimistic concurrency control is on."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import TypeVar

from hoodpy.config import HoodieConfig
from hoodpy.config.concurrency import ConcurrencyConfig
from hoodpy.config.table import TableConfig, check_writable
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Instant
from hoodpy.timeline.metadata import CommitMetadata
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import check_conflicts, touched_file_groups
from hoodpy.transaction.heartbeat import Heartbeat
from hoodpy.transaction.lock import lock_provider

T = TypeVar("T")


class WriteTransaction:
    def __init__(self, storage: Storage, config: HoodieConfig, *, merge_on_read: bool = False):
        # Every write, table service and rollback starts here: refuse table types hoodpy cannot change
        # (``merge_on_read``: the caller, a write, a rollback or compaction, handles merge-on-read tables).
        check_writable(storage.base_uri, config.get(TableConfig.TYPE), merge_on_read=merge_on_read)
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

    def begin(self, timeline: Timeline) -> None:
        """Remember the commits completed when this write starts (after failed writes were rolled back):
        conflict detection at commit looks only at commits completed since."""
        self.completed_at_start = {i.timestamp for i in timeline.completed_commits()}

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

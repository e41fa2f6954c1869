"""Clean, savepoint and restore instants are not writes: conflict detection and failed-write rollback leave
them alone."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.services.savepoint import SavepointService
from hoodpy.services.rollback import rollback_failed_writes
from hoodpy.services.clean.service import CleanService
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, instant_time_of
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import check_conflicts
from hoodpy.transaction.transaction import WriteTransaction

A = "aaaaaaaa-0000-0000-0000-000000000001-0"


def t(n: int) -> str:
    return instant_time_of(datetime(2030, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n))


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def write(storage, n):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), Action.COMMIT))
    path = f"p/{A}_0-1-1_{t(n)}.parquet"
    storage.write_bytes(path, b"x")
    meta = CommitMetadata(OperationType.UPSERT)
    meta.add_write_stat(WriteStat(A, path, "p", num_writes=1))
    transitions.complete(storage, inflight, meta.to_json_bytes())


def test_service_instants_are_neither_conflicts_nor_failed_writes(storage):
    for n in range(1, 5):
        write(storage, n)
    at_start = {i.timestamp for i in Timeline.load(storage).completed_commits()}
    table = SimpleNamespace(storage=storage, config=HoodieConfig.of({}), name="t")
    SavepointService.of(table).create(t(2))
    plan = CleanService.of(storage).schedule(HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"}))
    assert plan is not None  # a requested clean stays pending
    timeline = Timeline.load(storage)
    # A write that touched the same file group, started before the savepoint and the clean: no conflict.
    check_conflicts(storage, timeline, t(9), [("p", A)], at_start)
    after = rollback_failed_writes(WriteTransaction(storage, HoodieConfig.of({})), timeline)
    kinds = {(i.action, i.state.value) for i in after.instants if i.action in (Action.CLEAN, Action.SAVEPOINT)}
    assert kinds == {(Action.CLEAN, "REQUESTED"), (Action.SAVEPOINT, "COMPLETED")}
    assert [i for i in after.instants if i.action == Action.ROLLBACK] == []


def test_a_restore_is_not_a_conflicting_write(storage):
    for n in range(1, 4):
        write(storage, n)
    at_start = {i.timestamp for i in Timeline.load(storage).completed_commits()}
    table = SimpleNamespace(storage=storage, config=HoodieConfig.of({}), name="t")
    SavepointService.of(table).create(t(1))
    restore = SavepointService.of(table).rollback_to(t(1))
    timeline = Timeline.load(storage)
    check_conflicts(storage, timeline, t(9), [("p", A)], at_start)
    after = rollback_failed_writes(WriteTransaction(storage, HoodieConfig.of({})), timeline)
    assert after.find(restore.timestamp, Action.RESTORE).is_completed
    assert [i.timestamp for i in after.completed_commits()] == [t(1)]

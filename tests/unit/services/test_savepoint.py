"""Savepoints and restore without Spark: metadata as Hudi writes it, protection from cleaning, restore and
its recovery from a crash."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import SavepointError
from hoodpy.services import restore as rs
from hoodpy.services import savepoint as sp
from hoodpy.services.restore import RestoreService
from hoodpy.services.savepoint import SavepointService
from hoodpy.services.clean.service import CleanService
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, State, instant_time_of
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

A = "aaaaaaaa-0000-0000-0000-000000000001-0"


def t(n: int) -> str:
    return instant_time_of(datetime(2030, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n))


@pytest.fixture
def table(tmp_path):
    storage = Storage(str(tmp_path))
    storage.mkdirs(".hoodie")
    return SimpleNamespace(storage=storage, config=HoodieConfig.of({}), name="t")


def write(storage, n, *, complete=True):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), Action.COMMIT))
    path = f"p/{A}_0-1-1_{t(n)}.parquet"
    storage.write_bytes(path, b"x")
    meta = CommitMetadata(OperationType.UPSERT)
    meta.add_write_stat(WriteStat(A, path, "p", num_writes=1))
    if complete:
        transitions.complete(storage, inflight, meta.to_json_bytes())


def test_savepoint_metadata_and_protection(table):
    s = table.storage
    for n in range(1, 5):
        write(s, n)
    point = SavepointService.of(table).create(t(2), user="me", comment="why")
    assert s.exists(f".hoodie/{t(2)}.savepoint.inflight") and s.exists(f".hoodie/{t(2)}.savepoint")
    meta = deserialize(AvroModel.SAVEPOINT_METADATA, s.read_bytes(f".hoodie/{t(2)}.savepoint"))
    assert meta["savepointedBy"] == "me" and meta["comments"] == "why" and meta["version"] == 1
    assert meta["partitionMetadata"] == {"p": {"partitionPath": "p", "savepointDataFile": [f"{A}_0-1-1_{t(2)}.parquet"]}}
    assert point.files == {"p": [f"{A}_0-1-1_{t(2)}.parquet"]}
    result = CleanService.of(s).run(HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"}))
    assert result.deleted_files == {"p": [f"p/{A}_0-1-1_{t(1)}.parquet"]}  # t2 pinned, t3 before t4
    assert [x.instant_time for x in SavepointService.of(s).list()] == [t(2)]
    with pytest.raises(SavepointError, match="beyond|no longer|Cannot savepoint"):
        SavepointService.of(table).create(t(1))  # its files are cleaned
    SavepointService.of(table).delete(t(2))
    assert SavepointService.of(s).list() == [] and not s.exists(f".hoodie/{t(2)}.savepoint.inflight")
    assert sp.partitions_of_deleted_savepoints(s) == {"p"}


def test_default_savepoint_is_the_latest_commit(table):
    write(table.storage, 1)
    write(table.storage, 2)
    assert SavepointService.of(table).create().instant_time == t(2)


def test_restore_rolls_back_later_writes(table):
    s = table.storage
    for n in range(1, 4):
        write(s, n)
    write(s, 4, complete=False)  # a failed write after the savepoint goes too
    SavepointService.of(table).create(t(2))
    restore = SavepointService.of(table).rollback_to(t(2))
    timeline = Timeline.load(s)
    assert [i.timestamp for i in timeline.completed_commits()] == [t(1), t(2)]
    assert timeline.pending_writes() == []
    assert sorted(f.path for f in s.list_files("p")) == [f"p/{A}_0-1-1_{t(1)}.parquet", f"p/{A}_0-1-1_{t(2)}.parquet"]
    plan = deserialize(AvroModel.RESTORE_PLAN, s.read_bytes(f".hoodie/{restore.timestamp}.restore.requested"))
    assert plan["savepointToRestoreTimestamp"] == t(2) and plan["version"] == 2
    assert [i["commitTime"] for i in plan["instantsToRollback"]] == [t(4), t(3)]
    meta = rs.read_restore_metadata(s, restore.timestamp)
    assert meta["instantsToRollback"] == [t(4), t(3)]
    assert meta["hoodieRestoreMetadata"][t(3)][0]["totalFilesDeleted"] == 1
    assert [i.action for i in timeline.instants if i.action in (Action.ROLLBACK, Action.RESTORE)] == [Action.RESTORE]


def test_restore_interrupted_by_a_crash_is_finished(table, monkeypatch):
    s = table.storage
    for n in range(1, 5):
        write(s, n)
    SavepointService.of(table).create(t(1))
    real = rs._rollback_one
    calls = []

    def crash_after_first(*args):
        if calls:
            raise KeyboardInterrupt("crash")
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(rs, "_rollback_one", crash_after_first)
    with pytest.raises(KeyboardInterrupt):
        SavepointService.of(table).rollback_to(t(1))
    monkeypatch.setattr(rs, "_rollback_one", real)
    pending = [i for i in Timeline.load(s).instants if i.action == Action.RESTORE]
    assert [i.state for i in pending] == [State.INFLIGHT]
    [done] = RestoreService.of(s).finish_pending()
    assert done.is_completed and [i.timestamp for i in Timeline.load(s).completed_commits()] == [t(1)]


def test_restore_errors(table):
    s = table.storage
    for n in range(1, 4):
        write(s, n)
    with pytest.raises(SavepointError, match="No savepoint"):
        SavepointService.of(table).rollback_to(t(1))
    SavepointService.of(table).create(t(1))
    SavepointService.of(table).create(t(2))
    with pytest.raises(SavepointError, match="later savepoints"):
        SavepointService.of(table).rollback_to(t(1))
    with pytest.raises(SavepointError, match="not a completed commit"):
        SavepointService.of(table).create(t(9))
    assert [i.action for i in Timeline.load(s).instants if i.action == Action.RESTORE] == []

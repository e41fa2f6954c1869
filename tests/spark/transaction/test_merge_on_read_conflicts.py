"""Optimistic concurrency on merge-on-read tables (Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy):
a deltacommit that appended log files to a file group conflicts with a write that completed on the same file
group after it started, and with a compaction of that file group scheduled after it started; on other file
groups both land. The loser commits nothing: its log files are removed and the table reads the winner's rows.

The second writer runs inside the first one's commit step (after its log files are written, before its
conflict check), as another process would.
"""

from __future__ import annotations

import pytest

from hoodpy import HoodieTable, WriteConflictError
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.transaction.transaction import WriteTransaction

pytestmark = [pytest.mark.spark]

SCHEMA = "id int, part string, ts long, val string"
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.wait_time_ms_between_retry": "50", "hoodie.index.bloom.num_entries": "100",
       "hoodie.parquet.small.file.limit": "0"}


def _table(spark, path):
    t = HoodieTable.create(spark, path, table_name="mor_occ", record_key_fields=["id"], partition_fields=["part"],
                           precombine_field="ts", options=OCC, table_type="MERGE_ON_READ")
    t.upsert(spark.createDataFrame([(i, f"p{i % 2}", 1, "init") for i in range(6)], SCHEMA))
    return t


def _rows(table) -> dict[int, tuple]:
    return {r.id: (r.part, r.val) for r in table.read().select("id", "part", "val").collect()}


def _interleaved(monkeypatch, table, rows: list[tuple], meanwhile) -> None:
    """Upsert ``rows``; ``meanwhile`` runs after its files are written, before it commits."""
    real_commit = WriteTransaction.commit
    calls = []

    def commit(self, inflight, metadata, publish):
        if not calls:
            calls.append(inflight.timestamp)
            meanwhile()
        return real_commit(self, inflight, metadata, publish)

    monkeypatch.setattr(WriteTransaction, "commit", commit)
    try:
        table.upsert(table.spark.createDataFrame(rows, SCHEMA))
    finally:
        monkeypatch.setattr(WriteTransaction, "commit", real_commit)


def _unlisted_log_files(table) -> list[str]:
    """Log files on storage that no completed instant's write stats name."""
    written = {s.path for i in table.timeline.completed_commits() for s in table.timeline.commit_metadata(i).write_stats}
    return [f.path for f in list_group_files(table.storage) if ".log." in f.path and f.path not in written]


def test_log_appends_to_the_same_file_group_conflict(spark, tmp_path, monkeypatch):
    table = _table(spark, str(tmp_path / "t"))
    other = HoodieTable.for_path(spark, table.base_path, options=OCC)
    winner = []
    with pytest.raises(WriteConflictError) as e:
        _interleaved(monkeypatch, table, [(0, "p0", 2, "loser")],
                     lambda: winner.append(other.upsert(spark.createDataFrame([(2, "p0", 2, "winner")], SCHEMA))))
    assert e.value.conflicting_instant == winner[0].instant_time
    assert _rows(table) == {**{i: (f"p{i % 2}", "init") for i in range(6)}, 2: ("p0", "winner")}
    assert table.timeline.pending_writes() == []
    assert _unlisted_log_files(table) == []  # the loser's log file is gone


def test_log_appends_to_other_file_groups_both_land(spark, tmp_path, monkeypatch):
    table = _table(spark, str(tmp_path / "t"))
    other = HoodieTable.for_path(spark, table.base_path, options=OCC)
    _interleaved(monkeypatch, table, [(0, "p0", 2, "first")],
                 lambda: other.upsert(spark.createDataFrame([(1, "p1", 2, "second")], SCHEMA)))
    assert _rows(table) == {**{i: (f"p{i % 2}", "init") for i in range(6)}, 0: ("p0", "first"), 1: ("p1", "second")}
    assert len([i for i in table.timeline.completed_commits() if i.action.value == "deltacommit"]) == 3


def test_a_compaction_scheduled_meanwhile_on_the_same_file_group_conflicts(spark, tmp_path, monkeypatch):
    table = _table(spark, str(tmp_path / "t"))
    table.upsert(spark.createDataFrame([(4, "p0", 2, "log")], SCHEMA))  # a log file to compact in p0
    other = HoodieTable.for_path(spark, table.base_path, options=OCC)
    plans = []
    with pytest.raises(WriteConflictError) as e:
        _interleaved(monkeypatch, table, [(0, "p0", 3, "loser")],
                     lambda: plans.append(other.compaction.schedule()))
    assert plans[0] is not None and e.value.conflicting_instant == f"{plans[0].instant_time} (pending compaction)"
    other.compaction.execute(plans[0])
    assert _rows(table) == {**{i: (f"p{i % 2}", "init") for i in range(6)}, 4: ("p0", "log")}
    assert table.timeline.pending_writes() == []


def test_a_compaction_planned_before_the_write_and_completed_meanwhile_does_not_conflict(spark, tmp_path,
                                                                                       monkeypatch):
    table = _table(spark, str(tmp_path / "t"))
    table.upsert(spark.createDataFrame([(4, "p0", 2, "log")], SCHEMA))
    plan = table.compaction.schedule()
    assert plan is not None
    other = HoodieTable.for_path(spark, table.base_path, options=OCC)
    # The write sees the pending plan and appends to the slice it creates: both land (Hudi resolves a
    # compaction older than the write in the write's favour).
    _interleaved(monkeypatch, table, [(0, "p0", 3, "after")], lambda: other.compaction.execute(plan))
    expected = {**{i: (f"p{i % 2}", "init") for i in range(6)}, 4: ("p0", "log"), 0: ("p0", "after")}
    assert _rows(table) == expected
    assert table.compaction.pending_instant_times() == []

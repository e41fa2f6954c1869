"""Archival of merge-on-read timelines (table version 6) without Spark: deltacommits and compactions move as
Java's HoodieTimelineArchiver moves them, a pending compaction bounds them, the NUM_COMMITS trigger's
deltacommits stay, and the compaction plan's copy in .hoodie/.aux goes with its commit."""

from __future__ import annotations

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.services.archive import ArchiveService
from hoodpy.timeline.archived import read_archived_entries
from hoodpy.services.compaction.trigger import oldest_instant_to_retain_for_compaction
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.compaction_plan import AUX_FOLDER, CompactionOperation, CompactionPlan, save_compaction_plan
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

from test_archive import FID, t  # the copy-on-write archival tests' instants


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie/archived")
    s.write_bytes(".hoodie/hoodie.properties",
                  b"hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=6\n")
    return s


def deltacommit(storage, n):
    inflight = transitions.transition_to_inflight(
        storage, transitions.create_requested(storage, t(n), Action.DELTACOMMIT))
    meta = CommitMetadata(OperationType.UPSERT)
    meta.add_write_stat(WriteStat(FID, f"p/.{FID}_{t(1)}.log.{n}_0-1-1", "p", num_writes=1))
    transitions.complete(storage, inflight, meta.to_json_bytes())


def compaction(storage, n, *, complete=True):
    op = CompactionOperation("p", FID, t(1), f"{FID}_0-1-1_{t(1)}.parquet", (f".{FID}_{t(1)}.log.1_0-1-1",))
    requested = save_compaction_plan(storage, CompactionPlan((op,), instant_time=t(n)))
    if complete:
        inflight = transitions.transition_to_inflight(storage, requested)
        meta = CommitMetadata(OperationType.COMPACT)
        meta.add_write_stat(WriteStat(FID, f"p/{FID}_0-1-1_{t(n)}.parquet", "p", num_writes=1))
        transitions.complete(storage, inflight, meta.to_json_bytes())  # <t>.commit


def names(storage) -> set[str]:
    return {f.path.rsplit("/", 1)[-1] for f in storage.list_files(".hoodie")}


def archive(storage, **options):
    config = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", **options}
    return ArchiveService.of(storage).run(HoodieConfig.of(config))


def archived(result) -> list[tuple[str, str]]:
    return [(i.timestamp, i.action.value) for i in result.archived]


def test_compaction_goes_with_its_commit_and_its_aux_copy(storage):
    """t1, t2 deltacommits, t3 compaction, t4..t8 deltacommits. The NUM_COMMITS trigger (5) counts t4..t8:
    t4 on stay; t1..t3 go, the compaction as three entries (plan, inflight, commit)."""
    deltacommit(storage, 1)
    deltacommit(storage, 2)
    compaction(storage, 3)
    for n in range(4, 9):
        deltacommit(storage, n)
    assert f"{t(3)}.compaction.requested" in {f.path.rsplit("/", 1)[-1] for f in storage.list_files(AUX_FOLDER)}
    result = archive(storage)
    assert archived(result) == [(t(1), "deltacommit"), (t(2), "deltacommit"), (t(3), "commit")]
    left = names(storage)
    assert not {n for n in left if n.startswith((t(1), t(2), t(3)))}
    assert list(storage.list_files(AUX_FOLDER)) == []
    entries = [(e["commitTime"], e["actionType"], e["actionState"]) for e in read_archived_entries(storage)]
    assert [e for e in entries if e[0] == t(3)] == [
        (t(3), "commit", "COMPLETED"), (t(3), "compaction", "INFLIGHT"), (t(3), "compaction", "REQUESTED")]
    [plan_entry] = [e for e in read_archived_entries(storage)
                    if e["commitTime"] == t(3) and e["actionState"] == "REQUESTED"]
    [op] = plan_entry["hoodieCompactionPlan"]["operations"]
    assert (op["fileId"], op["baseInstantTime"]) == (FID, t(1))
    [done] = [e for e in read_archived_entries(storage) if e["commitTime"] == t(3) and e["actionState"] == "COMPLETED"]
    assert done["hoodieCommitMetadata"]["operationType"] == "COMPACT"
    assert [i.timestamp for i in Timeline.load(storage).completed_commits()] == [t(n) for n in range(4, 9)]


def test_the_trigger_keeps_the_deltacommits_it_counts(storage):
    deltacommit(storage, 1)
    deltacommit(storage, 2)
    compaction(storage, 3)
    for n in range(4, 9):
        deltacommit(storage, n)
    timeline = Timeline.load(storage)
    assert oldest_instant_to_retain_for_compaction(timeline, 5) == t(4)
    assert oldest_instant_to_retain_for_compaction(timeline, 2) == t(7)
    assert oldest_instant_to_retain_for_compaction(timeline, 9) == t(3)  # fewer: from the compaction on
    # max.delta.commits 2: t7 on stay, min.commits (2) allows t1..t6.
    result = archive(storage, **{"hoodie.compact.inline.max.delta.commits": "2"})
    assert [i.timestamp for i in result.archived] == [t(n) for n in range(1, 7)]


def test_time_trigger_does_not_hold_deltacommits(storage):
    for n in range(1, 8):
        deltacommit(storage, n)
    def chosen(**options):
        config = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", **options}
        return [i.timestamp for i in ArchiveService.of(storage).schedule(HoodieConfig.of(config)).instants]

    assert chosen() == [t(1), t(2)]  # NUM_COMMITS (5) counts the newest five deltacommits, t3..t7
    assert chosen(**{"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}) == [t(n) for n in range(1, 6)]


def test_a_pending_compaction_bounds_archival(storage):
    for n in range(1, 5):
        deltacommit(storage, n)
    compaction(storage, 5, complete=False)
    for n in range(6, 10):
        deltacommit(storage, n)
    result = archive(storage, **{"hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"})
    assert [i.timestamp for i in result.archived] == [t(n) for n in range(1, 5)]
    assert f"{t(5)}.compaction.requested" in names(storage)
    assert [i.timestamp for i in Timeline.load(storage).pending([Action.COMPACTION])] == [t(5)]
    # The pending plan's aux copy stays: no archived commit is at or after it.
    assert [f.path.rsplit("/", 1)[-1] for f in storage.list_files(AUX_FOLDER)] == [f"{t(5)}.compaction.requested"]

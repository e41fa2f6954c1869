"""Archival of tables of version 8 and 9 into the LSM history, as Hudi 1.x's TimelineArchiverV2 does: which
instants go, the rows written for them (bytes of their instant files), what stays on the active timeline, and
the archived instants read back by the inspection rows."""

from __future__ import annotations

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.inspect.timeline import timeline_rows
from hoodpy.services.archive import ArchiveService, archive_after_commit, instants_to_archive
from hoodpy.timeline.archived import read_archived_entries
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, serialize
from hoodpy.timeline.history import read_history
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import CommitMetadata
from hoodpy.timeline.timeline import Timeline
from timeline_fixtures import write_commit

KEEP = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
HISTORY = ".hoodie/timeline/history"


def t(n: int) -> str:
    return f"202401010000000{n:02d}"


def _names(storage, folder=".hoodie/timeline"):
    return sorted(f.path.rsplit("/", 1)[-1] for f in storage.list_files(folder))


def _clean(storage, n):
    plan = serialize(AvroModel.CLEANER_PLAN, {"policy": "KEEP_LATEST_COMMITS", "version": 2})
    requested = transitions.create_requested(storage, t(n), Action.CLEAN, plan)
    inflight = transitions.transition_to_inflight(storage, requested, plan)
    return transitions.complete(storage, inflight, serialize(AvroModel.CLEAN_METADATA, {
        "startCleanTime": t(n), "timeTakenInMillis": 1, "totalFilesDeleted": 0, "earliestCommitToRetain": "",
        "partitionMetadata": {}, "version": 2})), plan


def test_commits_and_the_cleans_before_them_go_into_the_history(v8_storage):
    storage = v8_storage
    done = {}
    for n in (1, 2, 4, 5, 6):
        done[n] = write_commit(storage, t(n), f"f{n}")[0]
    clean, clean_plan = _clean(storage, 3)
    files = {name: storage.read_bytes(f".hoodie/timeline/{name}") for name in _names(storage)}
    result = ArchiveService.of(storage).run(HoodieConfig.of(KEEP))
    # 5 commits, max 3, min 2: the 3 oldest go, and the clean older than the newest of them.
    assert [(i.timestamp, i.action) for i in result.archived] == [
        (t(1), Action.COMMIT), (t(2), Action.COMMIT), (t(3), Action.CLEAN), (t(4), Action.COMMIT)]
    assert result.archive_file == f"{HISTORY}/{t(1)}_{t(4)}_0.parquet"
    assert _names(storage) == sorted(n for n in files if n.startswith((t(5), t(6))))
    assert _names(storage, HISTORY) == [f"{t(1)}_{t(4)}_0.parquet", "_version_", "manifest_1"]
    rows = read_history(storage, HISTORY)
    assert [(r.instant_time, r.action) for r in rows] == [(t(1), "commit"), (t(2), "commit"), (t(3), "clean"),
                                                         (t(4), "commit")]
    for row, instant in zip(rows, [done[1], done[2], clean, done[4]]):
        assert row.completion_time == instant.completion_time
        assert row.metadata == files[instant.file_name]  # the completed file's bytes, as Java copies them
    assert rows[2].plan == clean_plan and rows[0].plan is None  # a clean's plan; a commit has none
    tl = Timeline.load(storage)
    assert [i.timestamp for i in tl.completed_commits()] == [t(5), t(6)]
    assert tl.completion_time(t(2)) == done[2].completion_time  # known from the history
    assert ArchiveService.of(storage).run(HoodieConfig.of(KEEP)).archived == []


def test_the_newest_commit_before_a_pending_write_stays(v8_storage):
    for n in range(1, 7):
        write_commit(v8_storage, t(n), f"f{n}", complete=n != 4)
    write_commit(v8_storage, t(7), "f7")
    chosen = instants_to_archive(v8_storage, Timeline.load(v8_storage), HoodieConfig.of(KEEP))
    # Hudi 1.x keeps the newest completed commit before the pending 04 (03); version 6 would archive it.
    assert [i.timestamp for i in chosen] == [t(1), t(2)]


def test_a_replacecommit_keeps_its_plan_bytes(v8_storage):
    storage = v8_storage
    for n in (1, 2, 3, 4):
        write_commit(storage, t(n), f"f{n}")
    # An insert overwrite at 05: requested metadata empty of a plan, inflight commit metadata not empty.
    requested = transitions.create_requested(storage, t(5), Action.REPLACECOMMIT, serialize(
        AvroModel.REQUESTED_REPLACE_METADATA, {"operationType": "INSERT_OVERWRITE"}))
    inflight_bytes = CommitMetadata("INSERT_OVERWRITE").to_avro_bytes()
    inflight = transitions.transition_to_inflight(storage, requested, inflight_bytes)
    meta = CommitMetadata("INSERT_OVERWRITE", partition_to_replace_file_ids={"p": ["fx"]})
    transitions.complete(storage, inflight, meta.to_avro_bytes())
    write_commit(storage, t(6), "f6")
    ArchiveService.of(storage).run(HoodieConfig.of({**KEEP, "hoodie.keep.min.commits": "1"}))
    [row] = [r for r in read_history(storage, HISTORY) if r.instant_time == t(5)]
    assert row.action == "replacecommit" and row.plan == inflight_bytes  # Java: inflight wins when not empty


def test_archived_instants_show_as_archived_rows(v8_storage):
    for n in range(1, 6):
        write_commit(v8_storage, t(n), f"f{n}")
    ArchiveService.of(v8_storage).run(HoodieConfig.of(KEEP))
    entries = read_archived_entries(v8_storage)
    assert [(e["commitTime"], e["actionState"]) for e in entries] == [
        (t(n), s) for n in (1, 2, 3) for s in ("REQUESTED", "COMPLETED")]
    completed = entries[1]
    assert completed["stateTransitionTime"] > t(1)
    assert completed["hoodieCommitMetadata"]["partitionToWriteStats"]["p"][0]["fileId"] == "f1"
    rows = timeline_rows(v8_storage, archived=True, limit=None).rows
    assert [(r[0], r[2], r[6]) for r in rows] == [
        (t(5), "COMPLETED", "ACTIVE"), (t(4), "COMPLETED", "ACTIVE"),
        (t(3), "COMPLETED", "ARCHIVED"), (t(2), "COMPLETED", "ARCHIVED"), (t(1), "COMPLETED", "ARCHIVED")]
    archived = rows[-1]
    assert archived[3] == "01-01 00:00:00" and archived[4] is None and archived[5] is not None


def test_automatic_archival_archives_layout_2(v8_storage):
    for n in range(1, 6):
        write_commit(v8_storage, t(n), f"f{n}")
    table = type("T", (), {"storage": v8_storage, "config": None})()
    result = archive_after_commit(table, {**KEEP, "hoodie.cleaner.commits.retained": "1"})
    assert [i.timestamp for i in result.archived] == [t(1), t(2), t(3)]
    assert [i.timestamp for i in Timeline.load(v8_storage).completed_commits()] == [t(4), t(5)]


def test_a_bad_option_is_refused_and_nothing_moves(v8_storage):
    for n in range(1, 6):
        write_commit(v8_storage, t(n), f"f{n}")
    before = _names(v8_storage)
    with pytest.raises(InvalidConfigError, match="hoodie.timeline.compaction.batch.size"):
        ArchiveService.of(v8_storage).run(HoodieConfig.of({**KEEP, "hoodie.timeline.compaction.batch.size": "0"}))
    assert _names(v8_storage) == before and _names(v8_storage, HISTORY) == []


def test_an_archival_interrupted_before_the_instants_went_is_finished(v8_storage, monkeypatch):
    for n in range(1, 6):
        write_commit(v8_storage, t(n), f"f{n}")
    real_delete = type(v8_storage).delete

    def crash(self, rel):
        if rel.startswith(".hoodie/timeline/"):
            raise OSError("crash")
        return real_delete(self, rel)

    monkeypatch.setattr(type(v8_storage), "delete", crash)
    with pytest.raises(OSError, match="crash"):
        ArchiveService.of(v8_storage).run(HoodieConfig.of(KEEP))
    monkeypatch.setattr(type(v8_storage), "delete", real_delete)
    assert len(Timeline.load(v8_storage).completed_commits()) == 5  # the history has them, so do the files
    result = ArchiveService.of(v8_storage).run(HoodieConfig.of(KEEP))  # the same selection: the file is reused
    assert [i.timestamp for i in result.archived] == [t(1), t(2), t(3)]
    assert v8_storage.read_bytes(f"{HISTORY}/_version_") == b"1"
    assert [r.instant_time for r in read_history(v8_storage, HISTORY)] == [t(1), t(2), t(3)]
    assert [i.timestamp for i in Timeline.load(v8_storage).completed_commits()] == [t(4), t(5)]

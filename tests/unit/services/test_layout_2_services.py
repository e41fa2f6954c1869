"""Table services on a table of version 8 (timeline layout 2): rollback, clean, savepoints and restore run,
writing layout-2 instants (archival and clustering have their own tests: test_lsm_archival.py,
tests/spark/test_v1x_table_services.py)."""

import pytest

from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import new_file_id
from hoodpy.services.clean.service import CleanService
from hoodpy.services.restore import RestoreService, read_restore_metadata
from hoodpy.services.rollback import RollbackService, read_rollback_metadata
from hoodpy.services.savepoint import SavepointService
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import LAYOUT_2, Action, State
from hoodpy.timeline.timeline import Timeline
from timeline_fixtures import write_commit as _write


@pytest.fixture
def storage(v8_storage):
    return v8_storage


def _names(storage):
    return sorted(f.path.rsplit("/", 1)[-1] for f in storage.list_files(".hoodie/timeline"))


def test_rollback_of_a_failed_write_in_layout_2(storage):
    fid = new_file_id()
    first, _ = _write(storage, "20240101000000001", fid)
    failed, failed_path = _write(storage, "20240101000000002", fid, complete=False)
    done = RollbackService.of(storage).run(target=failed)
    assert done.is_completed and done.layout == LAYOUT_2 and done.completion_time > done.timestamp
    assert not storage.exists(failed_path)
    assert _names(storage) == sorted([
        first.file_name, "20240101000000001.commit.requested", "20240101000000001.inflight",
        done.file_name, f"{done.timestamp}.rollback.requested", f"{done.timestamp}.rollback.inflight"])
    assert read_rollback_metadata(storage, done)["commitsRollback"] == ["20240101000000002"]
    assert not [f for f in storage.list_files(".hoodie") if f.path.rsplit("/", 1)[-1][:1].isdigit()]


def test_rollback_of_the_latest_completed_commit_in_layout_2(storage):
    fid = new_file_id()
    _write(storage, "20240101000000001", fid)
    second, second_path = _write(storage, "20240101000000002", fid)
    RollbackService.of(storage).run(target=second)
    tl = Timeline.load(storage)
    assert [i.timestamp for i in tl.completed_commits()] == ["20240101000000001"]
    assert not storage.exists(second.path) and not storage.exists(second_path)
    view = FileSystemView.load(storage, tl)
    assert [b.instant_time for b in view.latest_base_files()] == ["20240101000000001"]


def test_clean_runs_in_layout_2(storage):
    fid = new_file_id()
    old = [_write(storage, f"2024010100000000{i}", fid)[1] for i in range(1, 5)]
    result = CleanService.of(storage).run({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                           "hoodie.cleaner.fileversions.retained": "1"})
    assert result.total_files_deleted == 3
    assert [storage.exists(p) for p in old] == [False, False, False, True]
    [clean] = Timeline.load(storage).filter(actions=[Action.CLEAN])
    assert clean.state == State.COMPLETED and clean.completion_time is not None
    assert f"{clean.timestamp}.clean.requested" in _names(storage)


def test_savepoint_and_restore_in_layout_2(storage):
    fids = [new_file_id() for _ in range(4)]
    commits = [_write(storage, f"2024010100000000{n}", fid) for n, fid in enumerate(fids, start=1)]
    savepoints = SavepointService.of(storage)
    savepoints.create("20240101000000002", user="me")
    names = _names(storage)
    [saved] = [n for n in names if n.endswith(".savepoint")]
    assert saved.startswith("20240101000000002_") and "20240101000000002.savepoint.inflight" in names
    assert [s.instant_time for s in savepoints.list()] == ["20240101000000002"]
    done = savepoints.rollback_to("20240101000000002")
    assert done.layout == LAYOUT_2 and done.completion_time is not None
    tl = Timeline.load(storage)
    assert [i.timestamp for i in tl.completed_commits()] == ["20240101000000001", "20240101000000002"]
    assert [storage.exists(path) for _, path in commits] == [True, True, False, False]
    assert read_restore_metadata(storage, done.timestamp)["instantsToRollback"] == [
        "20240101000000004", "20240101000000003"]  # newest completion first
    assert f"{done.timestamp}.restore.requested" in _names(storage)
    assert not [f for f in storage.list_files(".hoodie") if f.path.rsplit("/", 1)[-1][:1].isdigit()]
    savepoints.delete("20240101000000002")
    assert savepoints.list() == [] and not [n for n in _names(storage) if ".savepoint" in n]


def test_restore_rolls_back_a_pending_clustering_by_its_layout_2_name(storage):
    fid = new_file_id()
    _write(storage, "20240101000000001", fid)
    SavepointService.of(storage).create("20240101000000001")
    _write(storage, "20240101000000002", fid)
    # A clustering planned after the savepoint, left pending (as .clustering.requested / .inflight).
    requested = transitions.create_requested(storage, "20240101000000003", Action.REPLACECOMMIT,
                                             serialize(AvroModel.REQUESTED_REPLACE_METADATA,
                                                       {"operationType": "CLUSTER"}), clustering=True)
    transitions.transition_to_inflight(storage, requested)
    plan = RestoreService.of(storage).schedule(savepoint_time="20240101000000001")
    assert [(i.timestamp, i.clustering) for i in plan.instants] == [("20240101000000003", True),
                                                                     ("20240101000000002", False)]
    body = deserialize(AvroModel.RESTORE_PLAN, storage.read_bytes(f".hoodie/timeline/{plan.instant_time}"
                                                                   ".restore.requested"))
    assert [i["action"] for i in body["instantsToRollback"]] == ["clustering", "commit"]
    RestoreService.of(storage).execute(plan)
    assert not [n for n in _names(storage) if n.startswith(("20240101000000002", "20240101000000003"))]

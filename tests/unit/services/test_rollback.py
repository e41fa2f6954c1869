import pytest

from hoodpy.errors import RollbackError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import new_file_id
from hoodpy.services.rollback import RollbackService, read_rollback_metadata
from hoodpy.storage import Storage
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.timeline import Timeline
from timeline_fixtures import write_commit as _write


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s




def test_rollback_of_a_failed_write_removes_its_files_and_records_a_rollback(storage):
    fid = new_file_id()
    _write(storage, "20240101000000001", fid)
    failed, failed_path = _write(storage, "20240101000000002", fid, complete=False)
    done = RollbackService.of(storage).run(target=failed)
    assert done.action == Action.ROLLBACK and done.is_completed
    assert not storage.exists(failed_path)
    tl = Timeline.load(storage)
    assert [(i.timestamp, i.action, i.state) for i in tl.instants] == [
        ("20240101000000001", Action.COMMIT, State.COMPLETED), (done.timestamp, Action.ROLLBACK, State.COMPLETED)]
    meta = read_rollback_metadata(storage, done)
    assert meta["commitsRollback"] == ["20240101000000002"] and meta["totalFilesDeleted"] == 1
    assert meta["partitionMetadata"]["p"]["successDeleteFiles"] == [storage.full_path(failed_path)]
    plan = deserialize(AvroModel.ROLLBACK_PLAN, storage.read_bytes(f".hoodie/{done.timestamp}.rollback.requested"))
    assert plan["instantToRollback"] == {"commitTime": "20240101000000002", "action": "commit"}


def test_rollback_to_latest_completed_commit_restores_previous_view(storage):
    fid = new_file_id()
    _write(storage, "20240101000000001", fid)
    _, second = _write(storage, "20240101000000002", fid)
    tl = Timeline.load(storage)
    with pytest.raises(RollbackError, match="Only the latest completed commit"):
        RollbackService.of(storage).schedule(target=tl.completed_commits()[0])
    RollbackService.of(storage).run(target=tl.completed_commits()[1])
    view = FileSystemView.load(storage, Timeline.load(storage))
    assert [b.instant_time for b in view.latest_base_files()] == ["20240101000000001"]
    assert not storage.exists(second)


def test_crashed_rollback_is_finished_from_its_plan(storage):
    fid = new_file_id()
    failed, path = _write(storage, "20240101000000003", fid, complete=False)
    plan = RollbackService.of(storage).schedule(target=failed)  # crash right after planning
    assert storage.exists(path)
    finished = RollbackService.of(storage).finish_pending()
    assert [i.timestamp for i in finished] == [plan.instant_time]
    assert not storage.exists(path)
    assert Timeline.load(storage).pending_writes() == []
    # Re-running a completed plan's execution is refused by the timeline, not silently repeated.
    with pytest.raises(Exception):
        RollbackService.of(storage).execute(plan)

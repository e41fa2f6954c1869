"""Table services on a table of version 8 (timeline layout 2): rollback and clean run, in layout 2; the
others refuse the table, naming its version, before touching it."""

import pytest

from hoodpy.errors import UnsupportedServiceError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import new_file_id
from hoodpy.services.archive import ArchiveService, archive_after_commit
from hoodpy.services.clean.service import CleanService
from hoodpy.services.clustering.service import ClusteringService
from hoodpy.services.restore import RestoreService
from hoodpy.services.rollback import RollbackService, read_rollback_metadata
from hoodpy.services.savepoint import SavepointService
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


@pytest.mark.parametrize("service", [ClusteringService, ArchiveService, RestoreService, SavepointService])
def test_other_services_refuse_naming_the_version(storage, service):
    before = _names(storage)
    with pytest.raises(UnsupportedServiceError, match=r"is not supported on table version 8 \(Hudi 1.x timeline "
                                                      r"layout 2\) at .*: hoodpy does it on table version 6 only"):
        service.of(storage)
    assert _names(storage) == before


def test_automatic_archival_skips_layout_2(storage):
    for i in range(1, 6):
        _write(storage, f"2024010100000000{i}", new_file_id())
    before = _names(storage)
    table = type("T", (), {"storage": storage, "config": None})()
    assert archive_after_commit(table, {"hoodie.keep.max.commits": "3", "hoodie.keep.min.commits": "2",
                                        "hoodie.cleaner.commits.retained": "1"}) is None
    assert _names(storage) == before

import pytest

from hoodpy.file_group.file_group import BaseFile, LogFile
from hoodpy.file_group.fs_view import FileSystemView, list_base_files
from hoodpy.file_group.naming import BaseFileName, LogFileName, new_file_id, parse_base_file_name
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, State
from hoodpy.timeline.metadata import CommitMetadata, OperationType
from hoodpy.timeline.timeline import Timeline
from tests.conftest import unzip_sample


def test_base_file_names():
    parsed = parse_base_file_name("a079bdb3-731c-4894-b855-abfcd6921007-0_0-182-253_20240418173550988.parquet")
    assert parsed.file_id == "a079bdb3-731c-4894-b855-abfcd6921007-0"
    assert parsed.write_token == "0-182-253" and parsed.instant_time == "20240418173550988"
    assert parse_base_file_name("part-0000.parquet") is None
    fid = new_file_id()
    assert fid.endswith("-0") and "_" not in fid


def test_sample_view_honours_replacecommit(tmp_path):
    base = unzip_sample("v6_simplekeygen_nonhivestyle_overwritetable", tmp_path)
    storage = Storage(str(base))
    tl = Timeline.load(storage)
    latest = FileSystemView.load(storage, tl).latest_base_files()
    # insert_overwrite_table replaced all three earlier groups: one new group in partition 30 remains.
    assert [(b.partition_path, b.instant_time) for b in latest] == [("30", "20240707001303088")]
    before = FileSystemView.load(storage, tl, as_of="20240707001302376")
    assert sorted((b.partition_path, b.instant_time) for b in before.latest_base_files()) == [
        ("10", "20240707001302376"), ("20", "20240707001301554"), ("30", "20240707001302376")]
    first = FileSystemView.load(storage, tl, as_of="20240707001301554")
    assert len(first.latest_base_files()) == 2


def test_uncommitted_files_are_invisible(tmp_path):
    storage = Storage(str(tmp_path))
    storage.mkdirs(".hoodie")
    done = transitions.transition_to_inflight(storage, transitions.create_requested(
        storage, "20240101000000001", Action.COMMIT))
    transitions.complete(storage, done, CommitMetadata(OperationType.INSERT).to_json_bytes())
    transitions.transition_to_inflight(storage, transitions.create_requested(
        storage, "20240101000000002", Action.COMMIT))
    fid = new_file_id()
    storage.write_bytes(f"p/{fid}_0-1-1_20240101000000001.parquet", b"x")
    storage.write_bytes(f"p/{fid}_0-2-2_20240101000000002.parquet", b"xy")  # pending write
    storage.write_bytes("p/.hidden_0-1-1_20240101000000001.parquet", b"x")
    assert len(list_base_files(storage)) == 2
    view = FileSystemView.load(storage, Timeline.load(storage))
    assert [b.instant_time for b in view.latest_base_files()] == ["20240101000000001"]
    assert view.partitions() == ["p"]


@pytest.mark.parametrize("as_of,expected", [(None, "20240101000000002"), ("20240101000000001", "20240101000000001")])
def test_slice_as_of(tmp_path, as_of, expected):
    storage = Storage(str(tmp_path))
    storage.mkdirs(".hoodie")
    fid = new_file_id()
    for t in ("20240101000000001", "20240101000000002"):
        inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, Action.COMMIT))
        transitions.complete(storage, inflight, CommitMetadata(OperationType.UPSERT).to_json_bytes())
        storage.write_bytes(f"{fid}_0-1-1_{t}.parquet", b"x")
    view = FileSystemView.load(storage, Timeline.load(storage), as_of=as_of)
    assert [b.instant_time for b in view.latest_base_files()] == [expected]
    assert view.latest_base_files()[0].partition_path == ""


def _t(n: int) -> str:
    return f"202401010000000{n:02d}"


def _slices_by_completion(tmp_path, as_of: str | None) -> dict[str, list[tuple[str, str | None, list[str]]]]:
    """A layout-2 merge-on-read file group: base t1; deltacommits t10 (completed t11), t20 (requested before
    the compaction t30, completed t40 after it), t60; compaction t30 completed t50; t70 still inflight. A second
    group has logs only (t10, t60)."""
    done = [(_t(1), Action.COMMIT, _t(2)), (_t(10), Action.DELTACOMMIT, _t(11)),
            (_t(20), Action.DELTACOMMIT, _t(40)), (_t(30), Action.COMMIT, _t(50)),
            (_t(60), Action.DELTACOMMIT, _t(61))]
    instants = [Instant(t, a, State.COMPLETED, completion_time=c, layout=LAYOUT_2) for t, a, c in done]
    instants.append(Instant(_t(70), Action.DELTACOMMIT, State.INFLIGHT, layout=LAYOUT_2))
    timeline = Timeline(Storage(str(tmp_path)), instants, LAYOUT_2)
    base = [BaseFile("p", BaseFileName("fg", "0-1-1", t), 1) for t in (_t(1), _t(30))]
    logs = [LogFile("p", LogFileName("fg", t, 1, "0-1-1"), 1) for t in (_t(60), _t(20), _t(10), _t(70))]
    logs += [LogFile("p", LogFileName("lg", t, 1, "0-1-1"), 1) for t in (_t(60), _t(10))]
    view = FileSystemView(timeline, base, as_of, logs)
    return {g.file_id: [(s.base_instant_time, s.base_file and s.base_file.instant_time,
                         [lf.name.base_instant_time for lf in s.log_files]) for s in g.slices]
            for g in view.file_groups()}


def test_layout_2_logs_join_slices_by_completion_time(tmp_path):
    # t20 completed after the compaction t30 was requested: it extends the compaction's slice (Hudi 1.x's
    # HoodieFileGroup.getBaseInstantTime); t70 has not completed and is left out.
    assert _slices_by_completion(tmp_path, None) == {
        "fg": [(_t(1), _t(1), [_t(10)]), (_t(30), _t(30), [_t(20), _t(60)])],
        "lg": [(_t(10), None, [_t(10), _t(60)])],  # a group of logs only starts at its first log's instant
    }


@pytest.mark.parametrize("as_of,fg_logs", [(_t(45), [_t(10), _t(20)]), (_t(35), [_t(10)])])
def test_layout_2_slicing_as_of(tmp_path, as_of, fg_logs):
    # Before the compaction completed its slice does not exist: the logs that completed by then extend the
    # slice of t1.
    assert _slices_by_completion(tmp_path, as_of) == {"fg": [(_t(1), _t(1), fg_logs)], "lg": [(_t(10), None, [_t(10)])]}

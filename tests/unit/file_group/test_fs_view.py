import pytest

from hoodpy.file_group.fs_view import FileSystemView, list_base_files
from hoodpy.file_group.naming import new_file_id, parse_base_file_name
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
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

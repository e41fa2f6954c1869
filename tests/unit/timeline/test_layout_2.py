"""Timeline layout 2 (table versions 8 and 9): instant file names, completion times and their semantics."""

import io

import fastavro
import pytest

from hoodpy.errors import IllegalInstantTransitionError
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, State, parse_instant_file_name
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline


@pytest.fixture
def storage(v8_storage):
    return v8_storage


def _write(storage, name, data=b""):
    storage.write_atomic(f".hoodie/timeline/{name}", data)


def _metadata(file_id, partition="p", replaced=None):
    m = CommitMetadata(OperationType.INSERT, extra_metadata={"schema": "{}"}, partition_to_replace_file_ids=replaced)
    m.add_write_stat(WriteStat(file_id, f"{partition}/{file_id}_0-1-1_x.parquet", partition, num_writes=1))
    return m


@pytest.mark.parametrize("name, expected", [
    ("20250713010139392_20250713010140981.commit",
     ("20250713010139392", Action.COMMIT, State.COMPLETED, "20250713010140981", False)),
    ("20250713010139392.inflight", ("20250713010139392", Action.COMMIT, State.INFLIGHT, None, False)),
    ("20250713010139392.commit.requested", ("20250713010139392", Action.COMMIT, State.REQUESTED, None, False)),
    ("20260307162524292.clustering.requested",
     ("20260307162524292", Action.REPLACECOMMIT, State.REQUESTED, None, True)),
    ("20260307162524292.clustering.inflight",
     ("20260307162524292", Action.REPLACECOMMIT, State.INFLIGHT, None, True)),
    ("20260307162524292_20260307162525707.replacecommit",
     ("20260307162524292", Action.REPLACECOMMIT, State.COMPLETED, "20260307162525707", False)),
    ("20260307162527184_20260307162528033.indexing", None),  # an action hoodpy does not model
    ("20260307162527184.commit", None),  # a layout-1 name is no layout-2 instant
    ("history", None),
])
def test_file_names_parse_and_round_trip(name, expected):
    instant = parse_instant_file_name(name, LAYOUT_2)
    if expected is None:
        assert instant is None
        return
    assert (instant.timestamp, instant.action, instant.state, instant.completion_time, instant.clustering) == expected
    assert instant.file_name == name
    assert instant.path == f".hoodie/timeline/{name}"


def test_a_clustering_completes_as_a_replacecommit_and_the_timeline_keeps_one_entry(storage):
    _write(storage, "20260307162524292.clustering.requested")
    _write(storage, "20260307162524292.clustering.inflight")
    assert Timeline.load(storage).pending() == [Instant("20260307162524292", Action.REPLACECOMMIT, State.INFLIGHT)]
    _write(storage, "20260307162524292_20260307162525707.replacecommit", _metadata("f1", replaced={}).to_avro_bytes())
    tl = Timeline.load(storage)
    assert [(i.action, i.state, i.completion_time) for i in tl.instants] == [
        (Action.REPLACECOMMIT, State.COMPLETED, "20260307162525707")]


def test_transitions_write_layout_2_names_and_avro_metadata(storage):
    requested = transitions.create_requested(storage, "20250101000000000", Action.COMMIT)
    inflight = transitions.transition_to_inflight(storage, requested)
    completed = transitions.complete(storage, inflight, _metadata("f1").to_bytes(LAYOUT_2))
    assert completed.completion_time > "20250101000000000"
    names = sorted(f.path.rsplit("/", 1)[-1] for f in storage.list_files(".hoodie/timeline"))
    assert names == sorted([f"20250101000000000_{completed.completion_time}.commit",
                            "20250101000000000.commit.requested", "20250101000000000.inflight"])
    assert not [f for f in storage.list_files(".hoodie") if "2025" in f.path and "/timeline/" not in f.path]
    data = storage.read_bytes(completed.path)
    record = next(fastavro.reader(io.BytesIO(data)))
    assert record["partitionToWriteStats"]["p"][0]["fileId"] == "f1" and record["compacted"] is False
    tl = Timeline.load(storage)
    assert tl.completed_commits() == [completed]
    assert tl.commit_metadata(completed).write_stats[0].file_id == "f1"
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        transitions.create_requested(storage, "20250101000000000", Action.COMMIT)
    with pytest.raises(IllegalInstantTransitionError, match="completed instant cannot be deleted"):
        transitions.delete_pending(storage, inflight)


def test_visibility_and_incremental_windows_follow_completion_time(storage):
    # Writer A starts first but completes last: as of B's completion only B is visible.
    _write(storage, "20250101000000000_20250101000009000.commit", _metadata("a").to_avro_bytes())
    _write(storage, "20250101000001000_20250101000002000.commit", _metadata("b").to_avro_bytes())
    tl = Timeline.load(storage)
    assert tl.visible_as_of("20250101000001000", "20250101000002000")
    assert not tl.visible_as_of("20250101000000000", "20250101000002000")
    assert tl.visible_as_of("20250101000000000", "20250101000009000")
    assert tl.visible_as_of("20240101000000000", "20240101000000000")  # older than the timeline: archived
    window = tl.completed_commits_in_range("20250101000002000", None)
    assert [i.timestamp for i in window] == ["20250101000000000"]
    assert [i.timestamp for i in tl.completed_commits_in_range(None, "20250101000009000")] == [
        "20250101000001000", "20250101000000000"]  # completion order
    assert tl.latest_instant_time() == "20250101000009000"  # new instants come after every completion


def test_commit_metadata_round_trips_through_avro():
    m = _metadata("f1", replaced={"p": ["f0"]})
    back = CommitMetadata.from_bytes(m.to_avro_bytes())
    assert back.to_json_bytes() == m.to_json_bytes()
    assert back.replaced_file_ids() == {("p", "f0")}
    assert CommitMetadata.from_bytes(m.to_json_bytes()).to_json_bytes() == m.to_json_bytes()


def test_hudi_1x_write_stat_fields_only_in_avro():
    """prevBaseFile and totalLogReadTimeMs (Hudi 1.x's HoodieWriteStat, set by its compaction: the v9 samples'
    compaction commits) are written in the Avro metadata of versions 8 and 9; version 6's JSON keeps 0.14's
    fields."""
    m = CommitMetadata(OperationType.COMPACT, compacted=True)
    m.add_write_stat(WriteStat("f1", "p/f1_0-1-1_2.parquet", "p", prev_commit="1", num_writes=1,
                               prev_base_file="f1_0-1-1_1.parquet", total_log_read_time_ms=15))
    m.add_write_stat(WriteStat("f2", "p/f2_0-1-1_2.parquet", "p", num_writes=1))
    [record] = fastavro.reader(io.BytesIO(m.to_avro_bytes()))
    assert [(s["prevBaseFile"], s["totalLogReadTimeMs"]) for s in record["partitionToWriteStats"]["p"]] == [
        ("f1_0-1-1_1.parquet", 15), (None, 0)]
    assert b"prevBaseFile" not in m.to_json_bytes() and b"totalLogReadTimeMs" not in m.to_json_bytes()
    back = CommitMetadata.from_bytes(m.to_avro_bytes()).write_stats
    assert [(s.prev_base_file, s.total_log_read_time_ms) for s in back] == [("f1_0-1-1_1.parquet", 15), (None, 0)]


def test_state_transition_times_are_listed_from_the_layout_2_folder(storage):
    from hoodpy.inspect.instant_times import completed_time, state_file_times

    _write(storage, "20250101000000000_20250101000009000.commit", _metadata("a").to_avro_bytes())
    _write(storage, "20250101000000000.commit.requested")
    times = state_file_times(storage)
    assert set(times[("20250101000000000", "commit")]) == {"COMPLETED", "REQUESTED"}
    [instant] = Timeline.load(storage).completed_commits()
    assert completed_time(times, instant) is not None

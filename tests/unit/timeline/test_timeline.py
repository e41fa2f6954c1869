import json

import pytest

from hoodpy.errors import IllegalInstantTransitionError, InvalidInstantError
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def _commit(storage, t, action=Action.COMMIT, metadata=None):
    requested = transitions.create_requested(storage, t, action)
    inflight = transitions.transition_to_inflight(storage, requested)
    metadata = metadata or CommitMetadata(OperationType.UPSERT, extra_metadata={"schema": "{}"})
    return transitions.complete(storage, inflight, metadata.to_json_bytes())


def test_states_advance_and_the_timeline_shows_the_latest(storage):
    requested = transitions.create_requested(storage, "20240101000000001", Action.COMMIT)
    assert [i.state for i in Timeline.load(storage).instants] == [State.REQUESTED]
    inflight = transitions.transition_to_inflight(storage, requested)
    tl = Timeline.load(storage)
    assert [i.state for i in tl.instants] == [State.INFLIGHT]
    assert tl.completed_commits() == [] and tl.pending_writes() == [inflight]
    transitions.complete(storage, inflight, CommitMetadata(OperationType.INSERT).to_json_bytes())
    tl = Timeline.load(storage)
    assert [i.state for i in tl.instants] == [State.COMPLETED]
    assert tl.last_completed_commit().timestamp == "20240101000000001"
    names = sorted(f.path for f in storage.list_files(".hoodie"))
    assert names == [".hoodie/20240101000000001.commit", ".hoodie/20240101000000001.commit.requested",
                     ".hoodie/20240101000000001.inflight"]


def test_illegal_transitions_are_refused(storage):
    requested = transitions.create_requested(storage, "20240101000000001", Action.COMMIT)
    with pytest.raises(IllegalInstantTransitionError, match="only an inflight instant can complete"):
        transitions.complete(storage, requested, b"{}")
    inflight = transitions.transition_to_inflight(storage, requested)
    transitions.complete(storage, inflight, b'{"operationType":"INSERT"}')
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        transitions.complete(storage, inflight, b"{}")
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        transitions.create_requested(storage, "20240101000000001", Action.COMMIT)


def test_delete_pending_removes_requested_and_inflight(storage):
    inflight = transitions.transition_to_inflight(
        storage, transitions.create_requested(storage, "20240101000000002", Action.REPLACECOMMIT))
    transitions.delete_pending(storage, inflight)
    assert Timeline.load(storage).instants == []


def test_commit_metadata_round_trips_with_integer_stats(storage):
    meta = CommitMetadata(OperationType.INSERT_OVERWRITE, extra_metadata={"schema": "s"},
                          partition_to_replace_file_ids={"p=1": ["f1-0"]})
    meta.add_write_stat(WriteStat("f2-0", "p=1/f2-0_0-1-2_20240101000000003.parquet", "p=1",
                                  num_writes=3, num_inserts=3, total_write_bytes=100, file_size_in_bytes=100))
    completed = _commit(storage, "20240101000000003", Action.REPLACECOMMIT, meta)
    raw = json.loads(storage.read_bytes(f".hoodie/{completed.file_name}"))
    assert raw["operationType"] == "INSERT_OVERWRITE"
    stat = raw["partitionToWriteStats"]["p=1"][0]
    assert stat["prevCommit"] == "null" and stat["numWrites"] == 3 and isinstance(stat["fileSizeInBytes"], int)
    tl = Timeline.load(storage)
    loaded = tl.commit_metadata(tl.completed_replacecommits()[0])
    assert loaded.replaced_file_ids() == {("p=1", "f1-0")}
    assert loaded.write_stats[0].num_inserts == 3 and loaded.schema == "s"


@pytest.mark.parametrize("content,problem", [(b"", "is empty"), (b"{not json", "not valid JSON")])
def test_corrupt_completed_instant_names_the_file(storage, content, problem):
    storage.write_bytes(".hoodie/20240101000000004.commit", content)
    tl = Timeline.load(storage)
    with pytest.raises(InvalidInstantError, match=problem) as err:
        tl.commit_metadata(tl.completed_commits()[0])
    assert "20240101000000004.commit" in str(err.value)


def test_ranges_and_latest_schema(storage):
    for i, schema in enumerate(["a", "", "c"], start=1):
        _commit(storage, f"2024010100000000{i}",
                metadata=CommitMetadata(OperationType.UPSERT, extra_metadata={"schema": schema} if schema else {}))
    tl = Timeline.load(storage)
    assert [i.timestamp for i in tl.completed_commits_in_range("20240101000000001", None)] == [
        "20240101000000002", "20240101000000003"]
    assert [i.timestamp for i in tl.completed_commits_in_range(None, "20240101000000002")] == [
        "20240101000000001", "20240101000000002"]
    assert tl.latest_schema() == "c"

import pytest

from hoodpy.errors import WriteConflictError
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, serialize
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.conflict import check_conflicts, pending_clustering_file_groups


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def _commit(storage, t, groups, replaced=None):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, Action.COMMIT))
    meta = CommitMetadata(OperationType.UPSERT, partition_to_replace_file_ids=replaced)
    for p, f in groups:
        meta.add_write_stat(WriteStat(f, f"{p}/{f}_0-1-1_{t}.parquet", p))
    transitions.complete(storage, inflight, meta.to_json_bytes())


def test_overlap_with_a_commit_completed_since_start_is_a_conflict(storage):
    _commit(storage, "20240101000000001", [("p", "f1-0")])
    at_start = {"20240101000000001"}
    _commit(storage, "20240101000000003", [("p", "f2-0")])
    tl = Timeline.load(storage)
    check_conflicts(storage, tl, "20240101000000002", [("p", "f1-0"), ("p", "f3-0")], at_start)
    with pytest.raises(WriteConflictError, match="20240101000000003") as err:
        check_conflicts(storage, tl, "20240101000000002", [("p", "f2-0")], at_start)
    assert err.value.file_ids == ["f2-0"]


def test_replaced_groups_and_pending_clustering_conflict(storage):
    _commit(storage, "20240101000000004", [], replaced={"p": ["f9-0"]})
    with pytest.raises(WriteConflictError, match="f9-0"):
        check_conflicts(storage, Timeline.load(storage), "20240101000000005", [("p", "f9-0")], set())
    plan = {"operationType": "CLUSTER", "version": 1, "clusteringPlan": {
        "inputGroups": [{"slices": [{"fileId": "f7-0", "partitionPath": "p",
                                      "dataFilePath": "p/f7-0_0-1-1_20240101000000001.parquet"}],
                         "numOutputFileGroups": 1}], "version": 1}}
    transitions.create_requested(storage, "20240101000000006", Action.REPLACECOMMIT,
                                 serialize(AvroModel.REQUESTED_REPLACE_METADATA, plan))
    tl = Timeline.load(storage)
    assert pending_clustering_file_groups(storage, tl) == {"20240101000000006": {("p", "f7-0")}}
    with pytest.raises(WriteConflictError, match="pending clustering"):
        check_conflicts(storage, tl, "20240101000000007", [("p", "f7-0")], {"20240101000000004"})

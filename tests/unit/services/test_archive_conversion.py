"""Archived entries of version 6 <-> LSM history instants of version 8 (what upgrade_table / downgrade_table
convert): the completed metadata, the plan and the completion time survive both ways."""

from __future__ import annotations

from hoodpy.services.archive_conversion import history_instant_of, legacy_entry
from hoodpy.timeline.avro_models import AvroModel, decode_record, deserialize, encode_record
from hoodpy.timeline.metadata import AVRO_MAGIC, CommitMetadata

T, DONE = "20240101000000000", "20240101000002500"
STAT = {"fileId": "f1", "path": "p/f1_1-0-1_20240101000000000.parquet", "prevCommit": "null", "numWrites": 3,
        "numDeletes": 0, "numUpdateWrites": 0, "totalWriteBytes": 400, "totalWriteErrors": 0, "partitionPath": "p",
        "numInserts": 3}


def _entry(action: str, state: str, **fields) -> dict:
    return {"commitTime": T, "actionType": action, "actionState": state, "version": 1,
            "stateTransitionTime": DONE if state == "COMPLETED" else T, **fields}


def _round_trip(entry: dict) -> dict:
    """Encoded as the archive log holds it and read back."""
    return decode_record(AvroModel.ARCHIVED_META_ENTRY, encode_record(AvroModel.ARCHIVED_META_ENTRY, entry))


def test_a_clustering_replacecommit_keeps_its_replaced_groups_and_plan():
    requested = _entry("replacecommit", "REQUESTED", hoodieRequestedReplaceMetadata={
        "operationType": "CLUSTER", "extraMetadata": {}, "version": 1})
    done = _entry("replacecommit", "COMPLETED", hoodieReplaceCommitMetadata={
        "partitionToWriteStats": {"p": [STAT]}, "partitionToReplaceFileIds": {"p": ["f0"]},
        "extraMetadata": {"schema": "{}"}, "operationType": "CLUSTER", "version": 1})
    h = history_instant_of([_round_trip(done), _round_trip(requested)])
    assert (h.instant_time, h.completion_time, h.action) == (T, DONE, "replacecommit")
    assert h.metadata.startswith(AVRO_MAGIC)
    metadata = CommitMetadata.from_bytes(h.metadata)
    assert metadata.replaced_file_ids() == {("p", "f0")} and metadata.operation_type == "CLUSTER"
    assert [(s.file_id, s.num_writes) for s in metadata.write_stats] == [("f1", 3)]
    assert deserialize(AvroModel.REQUESTED_REPLACE_METADATA, h.plan)["operationType"] == "CLUSTER"
    back = _round_trip(legacy_entry(h))
    assert (back["actionState"], back["stateTransitionTime"]) == ("COMPLETED", DONE)
    assert back["hoodieReplaceCommitMetadata"]["partitionToReplaceFileIds"] == {"p": ["f0"]}
    assert back["hoodieReplaceCommitMetadata"]["partitionToWriteStats"]["p"][0]["numWrites"] == 3


def test_a_compaction_goes_with_the_commit_it_completed_as():
    plan = {"operations": [{"baseInstantTime": "20231231000000000", "deltaFilePaths": ["p/.f1_x.log.1_0-1-1"],
                            "dataFilePath": "p/f1_0-1-1_20231231000000000.parquet", "fileId": "f1",
                            "partitionPath": "p", "metrics": {}}], "version": 2}
    requested = _entry("compaction", "REQUESTED", hoodieCompactionPlan=plan)
    done = _entry("commit", "COMPLETED", hoodieCommitMetadata={
        "partitionToWriteStats": {"p": [STAT]}, "extraMetadata": {}, "operationType": "COMPACT", "version": 1})
    h = history_instant_of([_round_trip(requested), _round_trip(done)])
    assert h.action == "commit"
    assert deserialize(AvroModel.COMPACTION_PLAN, h.plan)["operations"][0]["fileId"] == "f1"
    back = _round_trip(legacy_entry(h))
    assert back["hoodieCompactionPlan"]["operations"][0]["deltaFilePaths"] == ["p/.f1_x.log.1_0-1-1"]
    assert back["hoodieCommitMetadata"]["operationType"] == "COMPACT"


def test_an_instant_archived_without_its_completed_entry_is_left_out():
    assert history_instant_of([_entry("commit", "REQUESTED"), _entry("commit", "INFLIGHT")]) is None


def test_an_old_archive_without_state_transition_times_completes_at_the_instant_time():
    done = _entry("clean", "COMPLETED", stateTransitionTime=None)
    h = history_instant_of([done])
    assert (h.completion_time, h.metadata) == (T, None)

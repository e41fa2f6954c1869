"""Archival without Spark: which instants move, the log-block bytes, reading the archive back."""

from __future__ import annotations

import struct
from datetime import datetime, timedelta, timezone

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.services.archive import ArchiveService, instants_to_archive
from hoodpy.timeline.archived import archived_instants, read_archived_entries
from hoodpy.storage import Storage
from hoodpy.timeline import log_format, transitions
from hoodpy.timeline.avro_models import AvroModel, decode_record, encode_record, schema_json, serialize
from hoodpy.timeline.instant import Action, instant_time_of
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

FID = "aaaaaaaa-0000-0000-0000-000000000001-0"
KEEP = {"hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "5"}


def t(n: int) -> str:
    return instant_time_of(datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=n))


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie/archived")
    return s


def commit(storage, n, *, action=Action.COMMIT, replaced=None, complete=True, fid=FID):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), action))
    path = f"p/{fid}_0-1-1_{t(n)}.parquet"
    storage.write_bytes(path, b"x")
    meta = CommitMetadata(OperationType.UPSERT, partition_to_replace_file_ids=replaced)
    meta.add_write_stat(WriteStat(fid, path, "p", num_writes=3, num_inserts=1))
    if complete:
        transitions.complete(storage, inflight, meta.to_json_bytes())


def clean(storage, n, earliest):
    plan = serialize(AvroModel.CLEANER_PLAN, {"policy": "KEEP_LATEST_COMMITS", "version": 2})
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), Action.CLEAN,
                                                                                       plan))
    transitions.complete(storage, inflight, serialize(AvroModel.CLEAN_METADATA, {
        "startCleanTime": t(n), "timeTakenInMillis": 1, "totalFilesDeleted": 0, "earliestCommitToRetain": earliest,
        "partitionMetadata": {}, "version": 2}))


def test_commits_beyond_max_are_archived_down_to_min(storage):
    for n in range(1, 8):
        commit(storage, n)
    result = ArchiveService.of(storage).run(HoodieConfig.of(KEEP))
    assert [i.timestamp for i in result.archived] == [t(n) for n in range(1, 5)]
    assert [i.timestamp for i in Timeline.load(storage).completed_commits()] == [t(5), t(6), t(7)]
    assert [i.timestamp for i in archived_instants(storage)] == [t(n) for n in range(1, 5)]
    entries = read_archived_entries(storage)
    assert len(entries) == 4 * 3  # requested, inflight and completed of each
    done = [e for e in entries if e["actionState"] == "COMPLETED"]
    assert done[0]["actionType"] == "commit" and done[0]["commitTime"] == t(1)
    stats = done[0]["hoodieCommitMetadata"]["partitionToWriteStats"]["p"][0]
    assert stats["fileId"] == FID and stats["numWrites"] == 3 and stats["numInserts"] == 1
    assert ArchiveService.of(storage).run(HoodieConfig.of(KEEP)).archived == []  # nothing more to do


def test_archival_stops_at_pending_instant_savepoint_and_clean_boundary(storage):
    for n in range(1, 8):
        commit(storage, n, complete=n != 3)
    commit(storage, 8)
    assert [i.timestamp for i in instants_to_archive(storage, Timeline.load(storage), HoodieConfig.of(KEEP))] == \
        [t(1), t(2)]
    storage.delete(f".hoodie/{t(3)}.inflight")
    storage.delete(f".hoodie/{t(3)}.commit.requested")
    clean(storage, 9, t(2))
    assert [i.timestamp for i in instants_to_archive(storage, Timeline.load(storage), HoodieConfig.of(KEEP))] == \
        [t(1)]


def test_replacecommit_with_replaced_files_on_storage_is_not_archived(storage):
    commit(storage, 1, fid="old")
    commit(storage, 2, action=Action.REPLACECOMMIT, replaced={"p": ["old"]})
    for n in range(3, 9):
        commit(storage, n)
    chosen = instants_to_archive(storage, Timeline.load(storage), HoodieConfig.of(KEEP))
    assert [i.timestamp for i in chosen] == [t(1)]
    storage.delete(f"p/old_0-1-1_{t(1)}.parquet")  # the cleaner removed the replaced group
    chosen = instants_to_archive(storage, Timeline.load(storage), HoodieConfig.of(KEEP))
    assert [i.timestamp for i in chosen] == [t(1), t(2), t(3), t(4), t(5)]


def test_bad_archival_config():
    with pytest.raises(InvalidConfigError, match="hoodie.keep.max.commits"):
        instants_to_archive(None, None, HoodieConfig.of({"hoodie.keep.min.commits": "5",
                                                         "hoodie.keep.max.commits": "5"}))


def test_log_block_bytes():
    schema = schema_json(AvroModel.ARCHIVED_META_ENTRY)
    rec = encode_record(AvroModel.ARCHIVED_META_ENTRY, {"commitTime": t(1), "actionType": "commit",
                                                        "actionState": "COMPLETED"})
    block = log_format.avro_data_block([rec], schema)
    assert block[:6] == b"#HUDI#"
    (length,) = struct.unpack(">q", block[6:14])
    assert length == len(block) - 14  # everything after the magic and this field
    assert struct.unpack(">ii", block[14:22]) == (1, 3)  # log format version, AVRO_DATA_BLOCK
    assert struct.unpack(">iii", block[22:34]) == (1, 2, len(schema.encode()))  # one header: SCHEMA
    (total,) = struct.unpack(">q", block[-8:])
    assert total == len(block) - 8  # what Java wrote before this field
    assert total - len(b"#HUDI#") == length  # HoodieLogFileReader.isBlockCorrupted's check
    [parsed] = list(log_format.read_blocks(block + b""))
    [raw] = log_format.avro_records(parsed)
    assert decode_record(AvroModel.ARCHIVED_META_ENTRY, raw, parsed.header[log_format.SCHEMA])["commitTime"] == t(1)
    assert log_format.archive_file_name(1) == ".commits_.archive.1_1-0-1"
    assert log_format.archive_file_version(".commits_.archive.12_1-0-1") == 12

"""Files a task writes while its write is aborted (no Spark): a base file is marked before it exists; a task
that closes a file after the markers went (the write was aborted or rolled back) deletes it and fails; a file
marked after the abort is removed by the next write (remove_abandoned_files), never one of an instant the
timeline holds or, once instants were archived, one older than the active timeline."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodpy.errors import WriteAbortedError
from hoodpy.file_group import log_writer
from hoodpy.file_group.markers import marked_files, marker_folders
from hoodpy.file_group.naming import base_file_name
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.schema.avro import avro_schema_from_arrow, avro_schema_to_json
from hoodpy.services.rollback import remove_abandoned_files
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.archived import ARCHIVE_FOLDER
from hoodpy.timeline.instant import Action
from hoodpy.timeline.timeline import Timeline, instant_temp_dir
from hoodpy.write import commit as commit_step
from hoodpy.write import log_append
from hoodpy.write.base_file import BaseFileOptions, BaseFileWriter, write_base_file
from hoodpy.write.log_append import AppendContext, LogSlice, append_file_group
from hoodpy.write.merge import OP, OP_UPSERT, TARGET_FILE_ID, MergeContext
from timeline_fixtures import write_commit

T1, T2, T3 = "20261128010000001", "20261128010000002", "20261128010000003"


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def _rows(instant: str, keys: list[str]) -> pa.Table:
    n = len(keys)
    return pa.table({COMMIT_TIME: [instant] * n, COMMIT_SEQNO: [f"{instant}_0_{i}" for i in range(n)],
                     RECORD_KEY: keys, PARTITION_PATH: ["p"] * n, FILE_NAME: ["f"] * n, "v": list(range(n))})


def _path(instant: str, file_id: str = "fg1") -> str:
    return f"p/{base_file_name(file_id, '0-1-0', instant)}"


def test_a_base_file_is_marked_before_it_is_written_and_kept_while_its_write_goes_on(storage):
    rel = _path(T1)
    size = write_base_file(storage, rel, _rows(T1, ["a", "b"]), BaseFileOptions())
    assert size == storage.fs.get_file_info(storage.full_path(rel)).size > 0
    assert marked_files(storage, T1) == [rel]
    assert storage.exists(f"{instant_temp_dir(T1)}/{rel}.marker.CREATE")  # Java's direct marker of a new file


def test_a_base_file_closed_after_its_write_was_aborted_is_deleted_and_the_task_fails(storage):
    rel = _path(T1)
    writer = BaseFileWriter(storage, rel, BaseFileOptions())
    writer.write(_rows(T1, ["a", "b"]))
    storage.delete_dir(instant_temp_dir(T1))  # the driver aborted the instant meanwhile
    with pytest.raises(WriteAbortedError, match="aborted or rolled back"):
        writer.close()
    assert not storage.exists(rel)


def test_abort_removes_a_file_closed_before_it_and_one_closed_after_it(storage):
    pending = transitions.transition_to_inflight(storage, transitions.create_requested(storage, T1, Action.COMMIT))
    early, late = _path(T1, "fg1"), _path(T1, "fg2")
    write_base_file(storage, early, _rows(T1, ["a"]), BaseFileOptions())
    writer = BaseFileWriter(storage, late, BaseFileOptions())  # a task still writing when the job failed
    writer.write(_rows(T1, ["b"]))
    commit_step.abort(storage, pending)
    with pytest.raises(WriteAbortedError):
        writer.close()
    assert not storage.exists(early) and not storage.exists(late)
    assert Timeline.load(storage).instants == [] and marker_folders(storage) == []


def test_a_log_file_closed_after_its_write_was_aborted_is_deleted(tmp_path, monkeypatch):
    data = pa.schema([pa.field("id", pa.string()), pa.field("v", pa.int64())])
    schema_json = avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(data, "t")))
    ctx = AppendContext(merge=MergeContext(base_uri=str(tmp_path), instant_time=T2, data_schema=data),
                        schema_json=schema_json)
    close = log_append._LogFiles.close

    def aborted_meanwhile(self):
        close(self)
        Storage(str(tmp_path)).delete_dir(instant_temp_dir(T2))

    monkeypatch.setattr(log_append._LogFiles, "close", aborted_meanwhile)
    incoming = pa.table({"id": ["a"], "v": [1], RECORD_KEY: ["a"], PARTITION_PATH: ["p"],
                         OP: pa.array([OP_UPSERT], pa.int8()), TARGET_FILE_ID: ["fg"]})
    with pytest.raises(WriteAbortedError):
        append_file_group(ctx, "p", "fg", LogSlice(T1), incoming)
    assert list((tmp_path / "p").glob(".fg_*")) == []


def _late_file(storage: Storage, instant: str, file_id: str) -> str:
    """A file a task marked and wrote after its write (``instant``) was aborted."""
    rel = _path(instant, file_id)
    write_base_file(storage, rel, _rows(instant, ["z"]), BaseFileOptions())
    return rel


def test_the_next_write_removes_files_marked_after_their_write_was_aborted(storage):
    _, committed = write_commit(storage, T1, "fg1")
    abandoned = _late_file(storage, T2, "fg2")
    transitions.create_requested(storage, T3, Action.COMMIT)  # another writer's write, going on
    running = _late_file(storage, T3, "fg3")
    folders = marker_folders(storage)
    assert folders == [T2, T3]
    assert remove_abandoned_files(storage, folders, Timeline.load(storage)) == 1
    assert not storage.exists(abandoned) and not storage.is_dir(instant_temp_dir(T2))
    assert storage.exists(committed) and storage.exists(running) and marked_files(storage, T3) == [running]


def test_once_instants_were_archived_a_folder_older_than_the_active_timeline_is_left_alone(storage):
    old = _late_file(storage, T1, "fg1")  # e.g. a completed write's folder a crash kept, since archived
    write_commit(storage, T2, "fg2")
    newer = _late_file(storage, T3, "fg3")
    storage.write_bytes(f"{ARCHIVE_FOLDER}/.commits_.archive.1_1-0-1", b"archived instants")
    assert remove_abandoned_files(storage, marker_folders(storage), Timeline.load(storage)) == 1
    assert storage.exists(old) and not storage.exists(newer)

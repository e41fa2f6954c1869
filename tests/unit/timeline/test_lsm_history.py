"""The LSM history of table versions 8 and 9 (.hoodie/timeline/history): files, manifests and snapshots as
Java's LSMTimelineWriter writes them, compaction into layers, cleaning, and the timeline's use of the
completion times it keeps."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.errors import InvalidInstantError
from hoodpy.timeline.history import (
    HistoryInstant, HistoryWriter, latest_version, manifest_json, read_history, read_manifest,
)
from hoodpy.timeline.instant import LAYOUT_2, Action, State
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline
from timeline_fixtures import write_commit

FOLDER = ".hoodie/timeline/history"


def _entry(n: int, action: str = "commit") -> HistoryInstant:
    t = f"2024010100000{n:04d}"
    meta = CommitMetadata(OperationType.UPSERT)
    meta.add_write_stat(WriteStat(f"f{n}", f"p/f{n}_0-1-1_{t}.parquet", "p", num_writes=n))
    return HistoryInstant(t, f"2024010100001{n:04d}", action, meta.to_avro_bytes())


def _names(storage):
    return sorted(f.path.rsplit("/", 1)[-1] for f in storage.list_files(FOLDER))


def test_manifest_json_is_jacksons_pretty_print():
    assert manifest_json([]) == '{\n  "files" : [ ]\n}'
    assert manifest_json([("a_b_0.parquet", 12), ("c_d_1.parquet", 3456)]) == (
        '{\n  "files" : [ {\n    "fileName" : "a_b_0.parquet",\n    "fileLen" : 12\n  }, {\n'
        '    "fileName" : "c_d_1.parquet",\n    "fileLen" : 3456\n  } ]\n}')
    assert json.loads(manifest_json([("x", 1)])) == {"files": [{"fileName": "x", "fileLen": 1}]}


def test_a_first_archival_writes_a_layer_0_file_and_snapshot_1(v8_storage):
    entries = [_entry(1), _entry(2), _entry(3, "replacecommit")]
    name = HistoryWriter(v8_storage, FOLDER).append(entries)
    assert name == "20240101000000001_20240101000000003_0.parquet"
    assert _names(v8_storage) == [name, "_version_", "manifest_1"]
    assert v8_storage.read_bytes(f"{FOLDER}/_version_") == b"1"
    [size] = [f.size for f in v8_storage.list_files(FOLDER) if f.path.endswith(name)]
    assert read_manifest(v8_storage, FOLDER, 1) == [(name, size)]
    assert read_history(v8_storage, FOLDER) == entries
    # The columns and footer parquet-avro writes for HoodieLSMTimelineInstant.
    f = pq.ParquetFile(pa.BufferReader(v8_storage.read_bytes(f"{FOLDER}/{name}")))
    schema = f.schema_arrow
    assert schema.names == ["instantTime", "completionTime", "action", "metadata", "plan", "version"]
    assert [str(t) for t in schema.types] == ["string", "string", "string", "binary", "binary", "int32"]
    assert not schema.field("version").nullable and schema.field("plan").nullable
    footer = f.metadata.metadata
    assert footer[b"writer.model.name"] == b"avro"
    avro = json.loads(footer[b"parquet.avro.schema"])
    assert avro["name"] == "HoodieLSMTimelineInstant" and avro["namespace"] == "org.apache.hudi.avro.model"
    assert [fld["name"] for fld in avro["fields"]] == schema.names
    assert f.metadata.row_group(0).column(0).compression == "GZIP"  # Java's default codec


def test_layers_compact_and_old_snapshots_are_cleaned(v8_storage):
    writer = HistoryWriter(v8_storage, FOLDER, batch_size=3)
    all_entries = []
    for batch in range(7):  # two instants per archival
        entries = [_entry(2 * batch + 1), _entry(2 * batch + 2)]
        all_entries += entries
        writer.append(entries)
        writer.compact_and_clean()
        assert read_history(v8_storage, FOLDER) == all_entries  # every snapshot holds the whole history
    files = [n for n, _ in read_manifest(v8_storage, FOLDER, latest_version(v8_storage, FOLDER))]
    # Archivals 1-3 and 4-6 merged into layer-1 files, the 7th still in layer 0.
    assert sorted(files) == ["20240101000000001_20240101000000006_1.parquet",
                             "20240101000000007_20240101000000012_1.parquet",
                             "20240101000000013_20240101000000014_0.parquet"]
    names = _names(v8_storage)
    manifests = sorted(int(n.split("_")[1]) for n in names if n.startswith("manifest_"))
    # 7 archivals + 2 compactions = 9 snapshots; the last archival compacted nothing: the newest 3 stay.
    assert manifests == [7, 8, 9] and v8_storage.read_bytes(f"{FOLDER}/_version_") == b"9"
    kept = {n for v in manifests for n, _ in read_manifest(v8_storage, FOLDER, v)}
    assert {n for n in names if n.endswith(".parquet")} == kept  # no file outside a kept snapshot


def test_a_missing_version_file_falls_back_to_the_newest_manifest(v8_storage):
    writer = HistoryWriter(v8_storage, FOLDER)
    writer.append([_entry(1)])
    writer.append([_entry(2)])
    v8_storage.delete(f"{FOLDER}/_version_")
    assert latest_version(v8_storage, FOLDER) == 2
    assert [e.instant_time for e in read_history(v8_storage, FOLDER)] == [_entry(1).instant_time,
                                                                          _entry(2).instant_time]
    v8_storage.write_bytes(f"{FOLDER}/manifest_2", b"not json")
    with pytest.raises(InvalidInstantError, match="manifest_2 is not readable"):
        read_history(v8_storage, FOLDER)


def test_an_archival_rerun_after_a_crash_reuses_the_published_file(v8_storage):
    writer = HistoryWriter(v8_storage, FOLDER)
    name = writer.append([_entry(1), _entry(2)])
    assert writer.append([_entry(1), _entry(2)]) == name  # published already: no second snapshot
    assert latest_version(v8_storage, FOLDER) == 1
    # A file no snapshot names (the crash came before the manifest) is written again and published.
    v8_storage.write_bytes(f"{FOLDER}/20240101000000003_20240101000000003_0.parquet", b"torn")
    writer.append([_entry(3)])
    assert [e.instant_time for e in read_history(v8_storage, FOLDER)][-1] == _entry(3).instant_time


def test_the_timeline_answers_completion_time_questions_from_the_history(v8_storage):
    # Archived: 001 completed late (after 002 did) and 002. Active: 003.
    late = HistoryInstant("20240101000000001", "20240101000000050", "commit", _entry(1).metadata)
    early = HistoryInstant("20240101000000002", "20240101000000010", "commit", _entry(2).metadata)
    HistoryWriter(v8_storage, FOLDER).append([late, early])
    write_commit(v8_storage, "20240101000000060", "f3")
    tl = Timeline.load(v8_storage)
    assert tl.layout == LAYOUT_2 and [i.timestamp for i in tl.completed_commits()] == ["20240101000000060"]
    assert tl.completion_time("20240101000000001") == "20240101000000050"
    as_of = tl.committed("20240101000000020")  # 002 completed by then, 001 not yet
    assert "20240101000000002" in as_of and "20240101000000001" not in as_of
    assert "20240101000000001" in tl.committed("20240101000000050")
    assert "20240101000000001" in tl.committed()  # now: everything older than the active timeline
    window = tl.completed_commits_in_range("20240101000000010", None, archived=True)
    assert [(i.timestamp, i.completion_time) for i in window] == [
        ("20240101000000001", "20240101000000050"), ("20240101000000060", window[1].completion_time)]
    assert tl.commit_metadata(window[0]).write_stats[0].file_id == "f1"  # read from the history
    assert tl.earliest_recorded_write() == "20240101000000001"
    [archived] = [i for i in window if i.timestamp == "20240101000000001"]
    assert archived.action == Action.COMMIT and archived.state == State.COMPLETED

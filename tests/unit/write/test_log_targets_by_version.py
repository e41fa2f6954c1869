"""Where a merge-on-read deltacommit puts its log files, by table version (no Spark): version 6 appends the
next log version of the slice's base instant; versions 8 and 9 start version 1 of a log named after the write,
reporting no earlier file. And the 1.x compaction plan bytes, read back."""

from __future__ import annotations

import io

import fastavro

from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.compaction_plan import CompactionOperation, CompactionPlan, load_compaction_plan, \
    save_compaction_plan
from hoodpy.timeline.instant import Action, new_instant_time
from hoodpy.timeline.metadata import CommitMetadata, OperationType
from hoodpy.timeline.timeline import Timeline
from hoodpy.write.log_append import LogSlice, log_slices

A = "a1b2c3d4-0000-0000-0000-000000000000-0"


def _table(tmp_path, version: int) -> Storage:
    storage = Storage(str(tmp_path))
    layout = 1 if version == 6 else 2
    storage.mkdirs(".hoodie/timeline" if layout == 2 else ".hoodie")
    storage.write_bytes(".hoodie/hoodie.properties", f"hoodie.table.type=MERGE_ON_READ\nhoodie.table.version="
                        f"{version}\nhoodie.timeline.layout.version={layout}\n".encode())
    return storage


def _write(storage: Storage, after: str | None, files) -> str:
    instant = new_instant_time(after=after)
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, instant,
                                                                                        Action.DELTACOMMIT))
    for path in files(instant):
        storage.write_bytes(path, b"x")
    transitions.complete(storage, inflight, CommitMetadata(OperationType.UPSERT).to_json_bytes())
    return instant


def _history(storage: Storage) -> tuple[str, str, str]:
    """A base file, then two log writes on it (named as the table version names them)."""
    first = _write(storage, None, lambda i: [f"p/{A}_0-1-1_{i}.parquet"])
    named_by_write = Timeline.load(storage).layout == 2
    second = _write(storage, first, lambda i: [f"p/.{A}_{i if named_by_write else first}.log.1_0-1-1"])
    third = _write(storage, second, lambda i: [f"p/.{A}_{i if named_by_write else first}.log."
                                               f"{1 if named_by_write else 2}_0-1-1"])
    return first, second, third


def test_version_6_appends_the_next_log_version_of_the_slice(tmp_path):
    storage = _table(tmp_path, 6)
    first, _, third = _history(storage)
    view = FileSystemView.load(storage, Timeline.load(storage))
    now = new_instant_time(after=third)
    [(key, target)] = log_slices(view, instant_time=now, base_file_groups=set()).items()
    assert key == ("p", A)
    assert target == LogSlice(first, f"{A}_0-1-1_{first}.parquet",
                              (f".{A}_{first}.log.1_0-1-1", f".{A}_{first}.log.2_0-1-1"), 3)


def test_versions_8_and_9_name_the_log_after_the_write(tmp_path):
    storage = _table(tmp_path, 9)
    _, _, third = _history(storage)
    view = FileSystemView.load(storage, Timeline.load(storage))
    [latest] = view.latest_file_slices()
    assert len(latest.log_files) == 2  # both logs joined the base file's slice by completion time
    now = new_instant_time(after=third)
    new = "f0f0f0f0-0000-0000-0000-000000000000-0"
    targets = log_slices(view, instant_time=now, base_file_groups=set(), new_groups={("p", new)},
                         named_by_write=True)
    assert targets == {("p", A): LogSlice(now), ("p", new): LogSlice(now, new_group=True)}


def test_layout_2_compaction_plan_has_hudi_1x_fields(tmp_path):
    storage = _table(tmp_path, 9)
    op = CompactionOperation("p", A, "20250101000000000", f"{A}_0-1-1_20250101000000000.parquet",
                             (f".{A}_20250101000000001.log.1_0-1-1",), {"TOTAL_LOG_FILES": 1.0})
    save_compaction_plan(storage, CompactionPlan((op,), instant_time="20250101000000002"))
    data = storage.read_bytes(".hoodie/timeline/20250101000000002.compaction.requested")
    reader = fastavro.reader(io.BytesIO(data))
    [record] = list(reader)
    assert reader.writer_schema["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    assert record["missingSchedulePartitions"] == [] and record["version"] == 2
    assert load_compaction_plan(storage, "20250101000000002").operations == (op,)
    assert not storage.exists(".hoodie/.aux/20250101000000002.compaction.requested")

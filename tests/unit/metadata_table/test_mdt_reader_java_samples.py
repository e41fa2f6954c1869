"""The files partition of every Java-written metadata table in the samples (13 tables of Hudi 1.1, copy-on-write
and merge-on-read, partitioned or not, compacted, with insert overwrite, clustering and a rollback) reads back to the listing its timeline implies:
the base and log files of the completed instants on storage. A deltacommit whose data instant did not complete
is left out, and the file-system view lists through the metadata table, not storage."""

from __future__ import annotations

import pytest

from hoodpy.file_group import fs_view
from hoodpy.file_group.fs_view import FileSystemView, table_listing
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Instant
from hoodpy.timeline.timeline import Timeline
from java_samples import MOR_V9, unzip_sample

# Every sample whose hoodie.properties lists the files partition (Hudi 1.1).
META_SAMPLES = [f"hudi-rs/sample_table/cow/v9_{n}" for n in (
    "timebasedkeygen_epochmillis", "timebasedkeygen_nonhivestyle", "timebasedkeygen_unixtimestamp",
    "txns_complex_meta", "txns_nonpart_meta", "txns_simple_meta", "txns_simple_overwrite")] + [
    f"{MOR_V9}/v9_{n}" for n in ("nonpartitioned_rollback", "timebasedkeygen_nonhivestyle", "txns_complex_meta",
                                 "txns_nonpart_meta", "txns_simple_meta", "txns_simple_overwrite")]


def committed_on_storage(storage: Storage, timeline: Timeline) -> set[str]:
    committed = timeline.committed()
    out = set()
    for path in (f.path for f in fs_view._list(storage, None)):
        name = path.rsplit("/", 1)[-1]
        base, log = parse_base_file_name(name), parse_log_file_name(name)
        stamp = base.instant_time if base else log.base_instant_time if log else None
        if stamp is not None and stamp in committed:
            out.add(path)
    return out


@pytest.mark.parametrize("sample", META_SAMPLES)
def test_the_files_partition_lists_the_committed_files(sample, tmp_path):
    storage = Storage(str(unzip_sample(sample, tmp_path)))
    timeline = Timeline.load(storage)
    listed = {f.path for f in table_listing(storage, timeline)}
    assert listed and listed == committed_on_storage(storage, timeline)
    sizes = {f.path: f.size for f in fs_view._list(storage, None)}
    assert all(sizes[f.path] == f.size for f in table_listing(storage, timeline))


def test_a_compacted_slice_merges_its_later_log_blocks(tmp_path):
    storage = Storage(str(unzip_sample("hudi-rs/sample_table/cow/v9_txns_simple_meta", tmp_path)))
    file_slice = MetadataTable(storage).latest_slice()
    # The compaction at 449278 left out the log of 449244 (completed after it was planned): by completion
    # time that log belongs to the new slice.
    assert file_slice.base_file.name == "files-0000-0_13-170-402_20260307162449278.hfile"
    assert [lf.instant_time for lf in file_slice.log_files][:2] == ["20260307162449244", "20260307162450901"]


def test_a_deltacommit_whose_data_instant_is_not_completed_is_left_out(tmp_path):
    storage = Storage(str(unzip_sample("hudi-rs/sample_table/cow/v9_txns_simple_meta", tmp_path)))
    timeline = Timeline.load(storage)
    last = timeline.completed_commits()[-1]
    storage.delete(last.path)  # as if the process died between the metadata deltacommit and the commit
    pending = Timeline.load(storage)
    assert isinstance(pending.find(last.timestamp), Instant) and not pending.find(last.timestamp).is_completed
    listed = {f.path for f in table_listing(storage, pending)}
    assert not any(last.timestamp in p for p in listed)
    assert listed == committed_on_storage(storage, pending)


def test_the_view_lists_through_the_metadata_table(tmp_path, monkeypatch):
    storage = Storage(str(unzip_sample("hudi-rs/sample_table/cow/v9_txns_simple_meta", tmp_path)))
    timeline = Timeline.load(storage)
    expected = {(g.partition_path, g.file_id, s.base_file.name)
                for g in FileSystemView(timeline, fs_view._base_files(fs_view._list(storage, None))).file_groups()
                for s in [g.latest_slice()]}
    listed: list[str] = []
    real = Storage.list_files

    def spy(self, rel="", *, recursive=False):
        listed.append(rel)
        return real(self, rel, recursive=recursive)

    monkeypatch.setattr(Storage, "list_files", spy)
    view = FileSystemView.load(storage, timeline)
    assert {(g.partition_path, g.file_id, g.latest_slice().base_file.name) for g in view.file_groups()} == expected
    # The metadata table's own timeline and its files partition (below .hoodie/metadata); no data partition.
    assert listed == [".hoodie/timeline", "files"]

"""Removing a metadata table hoodpy does not maintain: properties cleared first (checksum intact), then the
folder; idempotent, so the next completion finishes what a crash interrupted; logged naming the table."""

from __future__ import annotations

import logging

import pytest

from hoodpy.config.metadata import METADATA_TABLE_FOLDER
from hoodpy.config.properties import load_table_properties, save_table_properties, table_checksum
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
from hoodpy.timeline.metadata_table import remove_stale_metadata_table

MDT_FILES = (".hoodie/hoodie.properties", "files/.hoodie_partition_metadata",
             "files/files-0000-0_0-5-4_00000000000000000.hfile")


def make_table(root, *, partitions: str | None = "files", inflight: str | None = "", folder: bool = True) -> Storage:
    storage = Storage(str(root))
    props = {"hoodie.table.name": "trips", "hoodie.database.name": "default", "hoodie.table.version": "6"}
    if partitions is not None:
        props["hoodie.table.metadata.partitions"] = partitions
    if inflight is not None:
        props["hoodie.table.metadata.partitions.inflight"] = inflight
    props["hoodie.table.checksum"] = str(table_checksum("default", "trips"))
    save_table_properties(storage, props)
    if folder:
        for rel in MDT_FILES:
            storage.write_bytes(f"{METADATA_TABLE_FOLDER}/{rel}", b"x")
    return storage


def test_removal_clears_the_partitions_keeps_the_checksum_and_deletes_the_folder(tmp_path, caplog):
    storage = make_table(tmp_path, partitions="column_stats,files", inflight="record_index")
    with caplog.at_level(logging.WARNING, logger="hoodpy.timeline.metadata_table"):
        assert remove_stale_metadata_table(storage) is True
    props = load_table_properties(storage)
    assert props["hoodie.table.metadata.partitions"] == ""
    assert props["hoodie.table.metadata.partitions.inflight"] == ""
    assert props["hoodie.table.checksum"] == str(table_checksum("default", "trips"))
    assert props["hoodie.table.name"] == "trips"
    assert not storage.exists(METADATA_TABLE_FOLDER)
    assert "trips" in caplog.text and "metadata table" in caplog.text
    assert remove_stale_metadata_table(storage) is False  # nothing left to do


def test_a_crash_after_the_properties_were_cleared_is_finished_by_the_next_removal(tmp_path):
    # What the first step leaves: empty partitions, the folder (partly) still there.
    storage = make_table(tmp_path, partitions="")
    storage.delete(f"{METADATA_TABLE_FOLDER}/files/.hoodie_partition_metadata")
    before = storage.read_bytes(".hoodie/hoodie.properties")
    assert remove_stale_metadata_table(storage) is True
    assert not storage.exists(METADATA_TABLE_FOLDER)
    assert storage.read_bytes(".hoodie/hoodie.properties") == before  # nothing to clear: not rewritten


def test_properties_naming_partitions_without_a_folder_are_cleared(tmp_path):
    storage = make_table(tmp_path, partitions="files", inflight=None, folder=False)
    assert remove_stale_metadata_table(storage) is True
    props = load_table_properties(storage)
    assert props["hoodie.table.metadata.partitions"] == ""
    assert "hoodie.table.metadata.partitions.inflight" not in props  # absent keys stay absent


def test_a_table_without_a_metadata_table_is_left_alone(tmp_path):
    storage = make_table(tmp_path, partitions=None, inflight=None, folder=False)
    before = storage.read_bytes(".hoodie/hoodie.properties")
    assert remove_stale_metadata_table(storage) is False
    assert storage.read_bytes(".hoodie/hoodie.properties") == before


@pytest.mark.parametrize("action", [Action.COMMIT, Action.CLEAN, Action.ROLLBACK])
def test_completing_any_instant_removes_the_metadata_table_first(tmp_path, action):
    storage = make_table(tmp_path)
    requested = transitions.create_requested(storage, "20260101000000000", action)
    inflight = transitions.transition_to_inflight(storage, requested)
    assert storage.exists(METADATA_TABLE_FOLDER)  # requested and inflight instants leave it
    transitions.complete(storage, inflight, b"{}")
    assert not storage.exists(METADATA_TABLE_FOLDER)
    assert load_table_properties(storage)["hoodie.table.metadata.partitions"] == ""

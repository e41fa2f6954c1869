"""The files partition's records and names (no Spark): HoodieMetadataPayload's merge, the records an instant's
change writes, the metadata table's instant times and hoodie.properties, and the bytes Java writes for them
(the v9 samples)."""

from __future__ import annotations

import io
import json
import zipfile

import fastavro
import pytest

from hoodpy.config.properties import parse_properties
from hoodpy.hfile import HFileReader, read_records
from hoodpy.metadata_table import layout
from hoodpy.metadata_table.records import (
    ALL_PARTITIONS_KEY, SCHEMA, FileListing, FilesChange, combine, new_record, partition_key,
)
from hoodpy.metadata_table.writer import _delete_block
from hoodpy.timeline.instant import LAYOUT_1, LAYOUT_2, Action, State, parse_instant_file_name
from java_samples import MDT_SAMPLES, SAMPLES_DIR, metadata_table_files


def test_a_tombstone_removes_the_older_entry_and_itself():
    older = {"a.parquet": (10, False), "b.parquet": (20, False)}
    assert combine(older, {"a.parquet": (0, True)}) == {"b.parquet": (20, False)}


def test_a_tombstone_with_nothing_older_is_kept_for_a_base_file_merged_later():
    assert combine(None, {"a.parquet": (0, True)}) == {"a.parquet": (0, True)}
    assert combine({"a.parquet": (0, True)}, {"a.parquet": (0, True)}) == {"a.parquet": (0, True)}


def test_two_live_entries_keep_the_larger_size_whatever_their_order():
    # A log file appended to by two deltacommits: sizes only grow, so the merge is order-free.
    assert combine({".f_1.log.1_0-1-0": (300, False)}, {".f_1.log.1_0-1-0": (100, False)}) == \
        {".f_1.log.1_0-1-0": (300, False)}
    assert combine({".f_1.log.1_0-1-0": (100, False)}, {".f_1.log.1_0-1-0": (300, False)}) == \
        {".f_1.log.1_0-1-0": (300, False)}


def test_a_change_writes_the_partition_list_and_one_record_per_touched_partition():
    change = FilesChange()
    change.partitions_added |= {"p=1", ""}
    change.add("p=1", "f1_0-1-0_1.parquet", 100)
    change.add("p=1", "f1_0-1-0_1.parquet", 90)  # two stats of one file: the larger size
    change.add("", "g1_0-1-0_1.parquet", 5)
    change.delete("p=1", ["old.parquet"])
    records = dict(change.records())
    assert list(records) == [ALL_PARTITIONS_KEY, ".", "p=1"]  # the non-partitioned partition is "."
    assert records[ALL_PARTITIONS_KEY]["type"] == 1
    assert records[ALL_PARTITIONS_KEY]["filesystemMetadata"] == {
        ".": {"size": 0, "isDeleted": False}, "p=1": {"size": 0, "isDeleted": False}}
    assert records["p=1"]["type"] == 2 and records["p=1"]["filesystemMetadata"] == {
        "f1_0-1-0_1.parquet": {"size": 100, "isDeleted": False}, "old.parquet": {"size": 0, "isDeleted": True}}
    clean = FilesChange(deleted={"p=1": {"x.parquet"}})
    assert [k for k, _ in clean.records()] == ["p=1"]  # a clean lists no partitions unless it deletes one


def test_records_encode_under_javas_schema():
    buf = io.BytesIO()
    schema = fastavro.parse_schema(json.loads(SCHEMA))
    record = new_record("p=1", 2, {"a.parquet": (7, False)})
    fastavro.schemaless_writer(buf, schema, record)
    buf.seek(0)
    assert fastavro.schemaless_reader(buf, schema, None) == record
    assert len(SCHEMA) == 8910 and '"name":"HoodieMetadataRecord"' in SCHEMA


def test_a_listing_names_live_files_and_becomes_a_base_file_without_tombstones():
    listing = FileListing()
    listing.merge(ALL_PARTITIONS_KEY, {partition_key("p=1"): (0, False), partition_key("p=2"): (0, False)})
    listing.merge("p=1", {"a.parquet": (1, False), "gone.parquet": (0, True)})
    listing.merge(ALL_PARTITIONS_KEY, {"p=2": (0, True)})
    assert listing.partitions() == ["p=1"]
    assert listing.files("p=1") == {"a.parquet": 1}
    base = dict(listing.records("files-0000-0_0-1-0_20240101000000000001.hfile"))
    assert base["p=1"]["filesystemMetadata"] == {"a.parquet": {"size": 1, "isDeleted": False}}
    assert base["p=1"]["_hoodie_file_name"] == "files-0000-0_0-1-0_20240101000000000001.hfile"


@pytest.mark.parametrize("sample", MDT_SAMPLES)
def test_java_base_files_merge_like_the_listing_they_hold(sample):
    """Reading a Java base file's records into a listing and back gives the same entries."""
    for path, data in metadata_table_files(sample, logs=False).items():
        if "/files/" not in path:
            continue
        records = list(read_records(HFileReader(data)))
        listing = FileListing()
        for r in records:
            listing.merge(r["key"], {n: (i["size"], i["isDeleted"]) for n, i in r["filesystemMetadata"].items()})
        ours = dict(listing.records())
        assert {k: v["filesystemMetadata"] for k, v in ours.items()} == \
            {r["key"]: r["filesystemMetadata"] for r in records}, path


# -- names and instants ---------------------------------------------------------------------------------
def test_instant_times_of_the_metadata_table():
    assert layout.partition_init_instant(LAYOUT_1, None) == "00000000000000010"
    assert layout.partition_init_instant(LAYOUT_1, "20240101120000123") == "20240101120000123010"
    assert layout.partition_init_instant(LAYOUT_2, "20240101120000123") == "00000000000000000"
    # 20-digit times sort after the data instant they extend and before the next one.
    assert "20240101120000123" < "20240101120000123001" < "20240101120000124"


def test_the_version_6_timeline_reads_suffixed_instants():
    assert parse_instant_file_name("20240101120000123010.deltacommit") is not None
    compaction = parse_instant_file_name("20240101120000123001.compaction.requested")
    assert (compaction.timestamp, compaction.action, compaction.state) == \
        ("20240101120000123001", Action.COMPACTION, State.REQUESTED)
    assert parse_instant_file_name("2024010112000012301.deltacommit") is None  # not 14 + 3k digits


def test_file_names_round_trip():
    base = layout.base_file_name("20240101120000123001")
    assert base == "files-0000-0_0-1-0_20240101120000123001.hfile"
    assert layout.parse_base_file(base, 9).instant_time == "20240101120000123001"
    log = layout.log_file_name("00000000000000010", 3)
    parsed = layout.parse_log_file(log)
    assert (parsed.file_id, parsed.instant_time, parsed.version, parsed.token) == \
        ("files-0000-0", "00000000000000010", 3, "0-1-0")
    assert layout.parse_log_file(".files-0000-0_20260307162434124.log.1_3-34-96").version == 1


def _sample_member(sample: str, suffix: str) -> bytes:
    zip_path = SAMPLES_DIR / f"{sample}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        name = next(n for n in z.namelist() if n.endswith(suffix))
        return z.read(name)


def test_the_log_file_that_creates_the_file_group_is_javas_bytes():
    java = _sample_member(MDT_SAMPLES[0], "metadata/files/.files-0000-0_00000000000000000.log.1_0-0-0")
    assert _delete_block("00000000000000000") == java  # 80 bytes: an empty delete block of version 3


@pytest.mark.parametrize("sample", MDT_SAMPLES)
def test_metadata_table_properties_match_javas_for_version_9(sample):
    java = parse_properties(_sample_member(sample, ".hoodie/metadata/.hoodie/hoodie.properties").decode())
    data = parse_properties(_sample_member(sample, f"{sample.rsplit('/', 1)[1]}/.hoodie/hoodie.properties").decode())
    ours = layout.metadata_table_properties(data, data["hoodie.table.name"])
    assert ours == java  # keys, values and the checksum of '.<name>_metadata'



def test_version_6_metadata_table_properties():
    props = layout.metadata_table_properties({"hoodie.table.version": "6"}, "trips")
    assert props["hoodie.table.version"] == "6" and props["hoodie.timeline.layout.version"] == "1"
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
    assert props["hoodie.table.base.file.format"] == "HFILE" and props["hoodie.table.type"] == "MERGE_ON_READ"

"""The record_index partition as Java Hudi 1.1 writes it (every sample that has one, copy-on-write and
merge-on-read): it reads back to exactly the keys of the table's live file slices, each at the file group that
holds it; every key sits in the shard Java's String.hashCode picks; hoodpy's records, data blocks and delete
blocks encode as Java's do. Plus the sizing rule and the hash on its edge cases."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hoodpy.hfile import HFileReader, decode_record, parsed_schema
from hoodpy.metadata_table.reader import ValidInstants
from hoodpy.metadata_table.record_index import (
    IndexChange, Location, RecordIndex, data_block, file_group_count, index_info, java_string_hash, location_of,
    removal_block, shard_of,
)
from hoodpy.metadata_table.record_index_writer import table_keys
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.timeline import Timeline
from java_samples import MOR_V9, unzip_sample

RLI_SAMPLES = [f"hudi-rs/sample_table/cow/v9_txns_{n}" for n in (
    "complex_meta", "nonpart_meta", "simple_meta", "simple_overwrite")] + [
    f"{MOR_V9}/v9_txns_{n}" for n in ("complex_meta", "nonpart_meta", "simple_meta", "simple_overwrite")]


@pytest.fixture
def chicago_time():
    """The samples were written at UTC-6: Java reads instant times in the local time zone."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/Chicago"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def _record_blocks(base: Path):
    """(file name, HFile reader, schema) of every record_index base file and HFile log block."""
    folder = base / ".hoodie" / "metadata" / "record_index"
    for f in sorted(folder.iterdir()):
        data = f.read_bytes()
        if f.name.endswith(".hfile"):
            reader = HFileReader(data, f.name)
            yield f.name, reader, parsed_schema(reader.schema)
        elif ".log." in f.name:
            for block in log_format.scan_blocks(data, f.name):
                if block.block_type == log_format.HFILE_DATA_BLOCK:
                    yield f.name, HFileReader(block.content, f.name), parsed_schema(block.header[log_format.SCHEMA])


@pytest.mark.parametrize("sample", RLI_SAMPLES)
def test_the_record_index_holds_the_keys_of_the_live_file_slices(sample, tmp_path):
    storage = Storage(str(unzip_sample(sample, tmp_path)))
    timeline = Timeline.load(storage)
    index = RecordIndex(storage)
    assert index.file_group_count == 10  # hoodie.metadata.record.index.min.filegroup.count
    everything = index.read_all(timeline)
    live = table_keys(storage, timeline)
    assert live and {k: (v.partition_path, v.file_id) for k, v in everything.items()} == \
        {k: (v.partition_path, v.file_id) for k, v in live.items()}
    # Each file group holds only the keys its shard function sends there; a lookup reads those back.
    valid = ValidInstants.of(index.table.timeline, timeline)
    for shard, group in enumerate(index.groups):
        assert group.file_id == f"record-index-{shard:04d}-0"
        assert all(shard_of(k, 10) == shard for k in index._read_group(group, None, valid))
    some = sorted(live)[::3] + ["no-such-key"]
    assert index.lookup(some, timeline) == {k: everything[k] for k in some if k in everything}


@pytest.mark.parametrize("sample", RLI_SAMPLES[:1] + RLI_SAMPLES[4:5])
def test_records_encode_as_java_writes_them(sample, tmp_path, chicago_time):
    base = unzip_sample(sample, tmp_path)
    seen = 0
    for name, reader, schema in _record_blocks(base):
        for key, value in reader:
            record = decode_record(key, value, schema, name)
            assert record["type"] == 5
            info = record["recordIndexMetadata"]
            loc = location_of(info, utc=False)  # the samples' tables keep Java's LOCAL timeline time zone
            assert index_info(loc.partition_path, loc.file_id, loc.instant_time, utc=False) == info
            seen += 1
    assert seen > 10


def test_blocks_match_java_bytes(tmp_path, chicago_time):
    base = unzip_sample(RLI_SAMPLES[2], tmp_path) / ".hoodie" / "metadata" / "record_index"
    # A delete block (TXN-009 deleted at 20260307162450901): byte for byte.
    java = (base / ".record-index-0000-0_20260307162450901.log.1_0-203-483").read_bytes()
    assert removal_block(["TXN-009"], "20260307162450901") == java
    # A data block of two keys moved by clustering: same header, same record bytes.
    java = next(log_format.scan_blocks(
        (base / ".record-index-0002-0_20260307162454799.log.1_3-237-594").read_bytes(), "java"))
    java_rows = list(HFileReader(java.content, "java"))
    schema = parsed_schema(java.header[log_format.SCHEMA])
    locations = {k: location_of(decode_record(k, v, schema, "java")["recordIndexMetadata"], utc=False)
                 for k, v in java_rows}
    mine = next(log_format.scan_blocks(data_block(locations, "20260307162454799", 2, utc=False), "mine"))
    assert mine.header == java.header
    assert list(HFileReader(mine.content, "mine")) == java_rows


def test_java_string_hash_and_shard():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("TXN-001") == sum(ord(c) * 31 ** i for i, c in enumerate(reversed("TXN-001"))) % 2**32 \
        - (2**32 if sum(ord(c) * 31 ** i for i, c in enumerate(reversed("TXN-001"))) % 2**32 >= 2**31 else 0)
    assert java_string_hash("polygenelubricants") == -(2**31)  # Math.abs of it stays negative in Java
    assert shard_of("polygenelubricants", 10) == 2**31 % 10
    assert java_string_hash("é𝄞") == ((0xE9 * 31 + 0xD834) * 31 + 0xDD1E)  # UTF-16 code units
    assert all(0 <= shard_of(f"key-{i}", 7) < 7 for i in range(200))


def test_file_group_count_follows_hudi_sizing():
    size = 1024 * 1024 * 1024
    assert file_group_count(18, 10, 10000, 2.0, size) == 10
    # 1e9 keys x 2 growth / (1 GiB / 48 bytes per key) = 89 file groups.
    assert file_group_count(1_000_000_000, 10, 10000, 2.0, size) == 89
    assert file_group_count(10**13, 10, 10000, 2.0, size) == 10000
    assert file_group_count(10**9, 4, 4, 2.0, size) == 4  # min == max: fixed


def test_index_info_keeps_file_ids_that_are_no_uuid_whole():
    info = index_info("p", "my-file-id-0", "20240101000000000")
    assert info["fileIdEncoding"] == 1 and info["fileId"] == "my-file-id-0"
    assert location_of(info).file_id == "my-file-id-0"
    uuid_id = "6d0f5b25-276e-4c1b-8ed0-c74a7d393fc9-0"
    assert location_of(index_info("p", uuid_id, "20240101000000000")) == Location("p", uuid_id, "20240101000000000")
    # hoodpy's tables keep UTC instant times (hoodie.table.timeline.timezone=UTC).
    assert index_info("p", uuid_id, "19700101000001002")["instantTime"] == 1002


def test_change_splits_by_shard():
    change = IndexChange({"a": Location("p", "f"), "b": Location("p", "f")}, {"c"})
    shards = change.by_shard(3)
    assert {k for ups, _ in shards.values() for k in ups} == {"a", "b"}
    assert shards[shard_of("c", 3)][1] == {"c"}

"""HFile data blocks (HoodieLogBlockType 4) in log files: the metadata-table log files Hudi 1.1 wrote read
through hoodpy.file_group.log_file (the ``files`` partition's blocks list exactly the files each data-table
commit wrote), and the blocks hoodpy writes read back, count or not as other data blocks do, and equal
Java's bytes."""

from __future__ import annotations

import json

import pytest

from hoodpy.file_group.log_file import data_rows, effective_blocks
from hoodpy.hfile import HFileReader, read_records
from hoodpy.hfile import file_info
from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema
from hoodpy.storage import Storage
from hoodpy.timeline import log_format as lf
from hoodpy.timeline.timeline import Timeline
from java_samples import MDT_SAMPLES, metadata_table_files, unzip_sample

T1, T2 = "20250101000000001", "20250101000000002"
SCHEMA = json.dumps({"type": "record", "name": "R", "namespace": "t", "fields": [
    {"name": "key", "type": "string"}, {"name": "type", "type": "int"},
    {"name": "sizes", "type": ["null", {"type": "map", "values": "long"}], "default": None}]})


def _hfile_blocks(sample: str) -> list[tuple[str, lf.LogBlock]]:
    return [(path, b) for path, data in metadata_table_files(sample, logs=True).items()
            for b in lf.scan_blocks(data, path) if getattr(b, "block_type", None) == lf.HFILE_DATA_BLOCK]


def _arrow(block: lf.LogBlock):
    return arrow_schema_from_avro(parse_avro_schema(block.header[lf.SCHEMA]))


@pytest.mark.parametrize("sample", MDT_SAMPLES)
def test_every_java_hfile_log_block_reads_as_records(sample):
    blocks = _hfile_blocks(sample)
    assert blocks
    for path, block in blocks:
        rows = data_rows(block, _arrow(block)).to_pylist()
        hfile = HFileReader(block.content, path)
        assert [r["key"] for r in rows] == [k for k, _ in hfile]  # the key put back from the row, in key order
        assert all(r["key"] and r["type"] in (1, 2, 3, 4, 5, 6, 7) for r in rows)
        assert hfile.schema == block.header[lf.SCHEMA] and hfile.meta_block_names == []


def test_files_partition_log_blocks_list_the_files_each_commit_wrote(tmp_path):
    """Each deltacommit of the metadata table's ``files`` partition has the data table's instant time; its
    records for the touched partitions name exactly the files (and sizes) that commit's write stats list."""
    base = unzip_sample(MDT_SAMPLES[0], tmp_path)
    timeline = Timeline.load(Storage(str(base)))
    written = {i.timestamp: sorted((s.partition_path, s.path.rsplit("/", 1)[1], s.file_size_in_bytes)
                                   for s in timeline.commit_metadata(i).write_stats)
               for i in timeline.completed_commits()}
    logs = sorted((p, (base.parent / p).read_bytes()) for p in metadata_table_files(MDT_SAMPLES[0], logs=True)
                  if "/metadata/files/" in p)
    seen = set()
    for path, data in logs:
        for block in effective_blocks([(path, data)], set(written)).blocks:
            if block.block_type != lf.HFILE_DATA_BLOCK:
                continue
            rows = data_rows(block, _arrow(block)).to_pylist()
            assert rows[0]["key"] == "__all_partitions__" and rows[0]["type"] == 1
            listed = sorted((r["key"], name, info["size"]) for r in rows[1:] for name, info in r["filesystemMetadata"])
            assert all(r["type"] == 2 for r in rows[1:])
            assert listed == written[block.instant_time], block.instant_time
            seen.add(block.instant_time)
    assert seen == set(written)


def _records(*keys: str) -> list[tuple[str, dict]]:
    return [(k, {"key": k, "type": 2, "sizes": {f"{k}.parquet": len(k)}}) for k in keys]


def test_hoodpy_hfile_block_reads_back_and_counts_like_other_data_blocks():
    log = lf.hfile_data_block(_records("b", "a", "c"), SCHEMA, T1) + lf.hfile_data_block(_records("d"), SCHEMA, T2)
    blocks = effective_blocks([("log", log)], {T1, T2}).blocks
    assert [b.header for b in blocks] == [{lf.INSTANT_TIME: t, lf.SCHEMA: SCHEMA} for t in (T1, T2)]
    first = data_rows(blocks[0], arrow_schema_from_avro(parse_avro_schema(SCHEMA))).to_pylist()
    assert first == [{"key": k, "type": 2, "sizes": [(f"{k}.parquet", 1)]} for k in "abc"]
    # a block of an uncommitted instant does not count; a rollback command drops its target's blocks
    assert [b.instant_time for b in effective_blocks([("log", log)], {T2}).blocks] == [T2]
    rollback = lf.encode_block(lf.COMMAND_BLOCK, {lf.INSTANT_TIME: T2, lf.TARGET_INSTANT_TIME: T1,
                                                  lf.COMMAND_BLOCK_TYPE: "0"}, b"")
    assert [b.instant_time for b in effective_blocks([("log", log + rollback)], {T1, T2}).blocks] == [T2]


def test_java_hfile_log_files_rewritten_from_their_records():
    """Single-block metadata-table log files written again from their decoded records: the same header and the
    very HFile bytes (with Hudi 1.1's bare index keys and the block's creation time); whole-file equality
    where Java happened to write INSTANT_TIME before SCHEMA."""
    compared = identical = 0
    for sample in MDT_SAMPLES:
        for path, data in metadata_table_files(sample, logs=True).items():
            blocks = list(lf.scan_blocks(data, path))
            if [getattr(b, "block_type", None) for b in blocks] != [lf.HFILE_DATA_BLOCK]:
                continue
            java = blocks[0]
            hfile = HFileReader(java.content, path)
            ours = lf.hfile_data_block(
                [(r["key"], r) for r in read_records(hfile)], java.header[lf.SCHEMA], java.instant_time,
                create_time_ms=file_info.int_value(hfile.file_info[file_info.CREATE_TIME_TS]), full_index_keys=False)
            [block] = lf.scan_blocks(ours)
            assert (block.header, block.footer, block.content) == (java.header, java.footer, java.content), path
            compared += 1
            if list(java.header) == [lf.INSTANT_TIME, lf.SCHEMA]:
                assert ours == data, path
                identical += 1
    assert compared >= 80 and identical >= 4

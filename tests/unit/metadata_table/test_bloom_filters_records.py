"""bloom_filters records: the key is the column_stats key without its column part (PartitionIndexID +
FileIndexID, the hashing checked on the Java v9 sample's column_stats keys), a record survives an HFile data
block, the newer record (a tombstone too) wins, and the option is not ignored silently with the metadata
table off."""

from __future__ import annotations

import io
import logging

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.config import HoodieConfig
from hoodpy.hfile import HFileReader, parsed_schema
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.metadata_table import bloom_filters as bf
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.records import SCHEMA
from hoodpy.metadata_table.writer import MetadataTableWriter
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.write.base_file import footer_entries

SAMPLE_FILE = "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_1-27-53_20260307162434124.parquet"


def test_key_is_the_column_stats_key_without_the_column():
    # "/m6lxu4Dh5w=" is b64(xxh64("currency")) in the v9 sample's key /m6lxu4Dh5w=431THTTwO5Q=W7RhzS2IFnrW7FlqIkFJUw==
    assert bf.bloom_filter_key("region=us", SAMPLE_FILE) == "431THTTwO5Q=W7RhzS2IFnrW7FlqIkFJUw=="
    assert bf.bloom_filter_key("", "f.parquet") == cs.column_stats_key("x", "", "f.parquet")[12:]
    assert bf.bloom_filter_key("", "f.parquet") == bf.bloom_filter_key(".", "f.parquet")
    assert [bf.file_group_id(i) for i in (0, 3)] == ["bloom-filters-0000-0", "bloom-filters-0003-0"]


def test_footer_filter_round_trips_through_a_data_block(tmp_path):
    bloom = BloomFilter.create(100)
    bloom.add_all(["k1", "k2"])
    table = pa.table({"k": ["k1", "k2"]}).replace_schema_metadata(footer_entries(bloom, "k1", "k2"))
    pq.write_table(table, tmp_path / "f1_0-1-0_001.parquet")
    storage = Storage(str(tmp_path))
    records = bf.file_records(storage, {"": ["f1_0-1-0_001.parquet", ".f1_001.log.1_0-1-0"]},
                              {"": ["f0_0-1-0_000.parquet"]}, "002")
    key1, key0 = bf.bloom_filter_key("", "f1_0-1-0_001.parquet"), bf.bloom_filter_key("", "f0_0-1-0_000.parquet")
    assert set(records) == {key1, key0}  # the log file has no record
    block = log_format.hfile_data_block(sorted(records.items()), SCHEMA, "002")
    [parsed] = list(log_format.read_blocks(block))
    schema = parsed_schema(parsed.header[log_format.SCHEMA])
    decoded = {k: bf.decode_filter(v, schema) for k, v in HFileReader(parsed.content)}
    assert decoded[key1] == {"type": "DYNAMIC_V0", "timestamp": "002", "bloomFilter": bloom.serialize().encode(),
                             "isDeleted": False}
    assert decoded[key0] == {"type": "", "timestamp": "002", "bloomFilter": b"", "isDeleted": True}
    assert BloomFilter.deserialize(decoded[key1]["bloomFilter"].decode()).might_contain("k2")
    merged: dict = {}
    bf.BloomFiltersPartition._merge_all(
        merged, [(key1, block_value(decoded[key1])), (key1, block_value(bf.tombstone("003")))],
        parsed_schema(SCHEMA), "test")
    assert merged[key1]["isDeleted"] and bf.live_filters(merged) == {}


def block_value(metadata: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed_schema(SCHEMA), bf.filter_record("k", metadata))
    return out.getvalue()


def test_the_option_with_the_metadata_table_off_is_warned(tmp_path, caplog):
    options = {"hoodie.metadata.enable": "false", "hoodie.metadata.index.bloom.filter.enable": "true"}
    with caplog.at_level(logging.WARNING, logger="hoodpy.metadata_table.writer"):
        ignored = MetadataTableWriter(Storage(str(tmp_path)), HoodieConfig.of(options)).warn_ignored_indexes()
    assert ignored == ["hoodie.metadata.index.bloom.filter.enable"]
    assert "hoodie.metadata.index.bloom.filter.enable=true" in caplog.text

"""column_stats records as Hudi 1.1 wrote them in the v9_txns_simple_meta sample: keys recomputed from column,
partition and file name, the file group each key is in, every record equal to the statistics recomputed from the
data file's footer; value wrapping for table versions 6 and 9, the merge of two records, XXHash64."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.hfile import HFileReader, parsed_schema
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.records import SCHEMA
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.timeline import Timeline
from tests.java_samples import unzip_sample

SAMPLE = "hudi-rs/sample_table/cow/v9_txns_simple_meta"


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return unzip_sample(SAMPLE, tmp_path_factory.mktemp("colstats"))


def test_xxh64_reference_values():
    assert cs.xxh64(b"", 0) == 0xEF46DB3751D8E999
    assert cs.xxh64(b"abc", 0) == 0x44BC2CF5AD770999
    assert cs.xxh64(b"Nobody inspects the spammish repetition", 0) == 0xFBCEA83C8A378BF1


def test_java_string_hash():
    assert cs.java_string_hash("") == 0
    assert cs.java_string_hash("hello") == 99162322
    assert cs.java_string_hash("polygenelubricants") == -2147483648  # abs() of it stays negative in Java
    assert cs.shard_of("polygenelubricants", 2) == 0


def test_sample_keys_shards_and_values_are_recomputed_from_the_data_files(sample):
    storage = Storage(str(sample))
    part = cs.ColumnStatsPartition(MetadataTable(storage))
    assert part.file_ids == ["col-stats-0000-0", "col-stats-0001-0"]
    # Every key sits in the file group Java's shard function names.
    for s in part.latest_slices():
        index = int(s.file_id.split("-")[2])
        keys = [k for k, _ in HFileReader(part.storage.read_bytes(part.path(s.base_file.name)))]
        for lf in s.log_files:
            for block in log_format.read_blocks(part.storage.read_bytes(part.path(lf.name))):
                if block.block_type == log_format.HFILE_DATA_BLOCK:
                    keys += [k for k, _ in HFileReader(block.content)]
        assert keys and all(cs.shard_of(k, 2) == index for k in keys)
    merged = cs.read_column_stats(storage, Timeline.load(storage))
    files = {p.name: p.parent.name for p in sample.glob("*/*.parquet")}
    compared = 0
    for path in sample.glob("*/*.parquet"):
        for stats in cs.footer_stats(pq.read_metadata(path), path.name, None, versioned=True):
            if stats["columnName"] in ("_hoodie_commit_seqno", "_hoodie_file_name"):
                continue  # Hudi 1.x does not index them
            key = cs.column_stats_key(stats["columnName"], files[path.name], path.name)
            if key not in merged:
                continue  # a file the sample replaced and cleaned
            assert merged[key] == stats, (path.name, stats["columnName"])
            compared += 1
    # 17 files x 16 columns: decimals as BytesWrapper with valueType 10 "p,s", dates IntWrapper, timestamps
    # LongWrapper of micros, strings, booleans and longs.
    assert compared == len(merged) == 272
    key = cs.column_stats_key("currency", "region=us",
                              "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_1-27-53_20260307162434124.parquet")
    assert key == "/m6lxu4Dh5w=431THTTwO5Q=W7RhzS2IFnrW7FlqIkFJUw=="
    amount = merged[cs.column_stats_key("amount", "region=us",
                                        "c7bbe63e-fa43-40ba-94a9-03158165edc6-0_1-27-53_20260307162434124.parquet")]
    assert amount["minValue"]["-type"].endswith("BytesWrapper")
    assert amount["valueType"] == {"typeOrdinal": 10, "additionalInfo": "15,2"}
    assert cs.unwrap_value(amount["minValue"], amount["valueType"], None) == Decimal("89.99")


def test_columns_to_index():
    fields = [("_hoodie_commit_time", True), ("_hoodie_commit_seqno", True), ("_hoodie_record_key", True),
              ("_hoodie_partition_path", True), ("_hoodie_file_name", True), ("a", True), ("s", False), ("b", True)]
    assert cs.columns_to_index(fields) == ["_hoodie_commit_time", "_hoodie_record_key", "_hoodie_partition_path",
                                           "a", "b"]
    assert cs.columns_to_index(fields, ["b", "s", "missing"]) == ["b"]


@pytest.mark.parametrize("arrow_type, value, v9, v6", [
    (pa.int32(), 7, ("IntWrapper", 7, 3), ("IntWrapper", 7)),
    (pa.int64(), 7, ("LongWrapper", 7, 4), ("LongWrapper", 7)),
    (pa.string(), "x", ("StringWrapper", "x", 7), ("StringWrapper", "x")),
    (pa.date32(), dt.date(2024, 1, 15), ("IntWrapper", 19737, 12), ("DateWrapper", 19737)),
    (pa.decimal128(10, 2), Decimal("-1.28"), ("BytesWrapper", b"\xff\x80", 10),
     ("DecimalWrapper", Decimal("-1.280000000000000"))),
    (pa.timestamp("us", "UTC"), dt.datetime(2024, 1, 15, 16, 30, tzinfo=dt.timezone.utc),
     ("LongWrapper", 1705336200000000, 16), ("LongWrapper", 1705336200000000)),
])
def test_values_wrap_per_table_version_and_read_back(arrow_type, value, v9, v6):
    wrapped, value_type = cs.wrap_value(value, arrow_type, versioned=True)
    assert (wrapped["-type"].rsplit(".", 1)[1], wrapped["value"], value_type["typeOrdinal"]) == v9
    assert cs.unwrap_value(wrapped, value_type, None) == value
    wrapped, value_type = cs.wrap_value(value, arrow_type, versioned=False)
    assert (wrapped["-type"].rsplit(".", 1)[1], wrapped["value"]) == v6 and value_type is None
    assert cs.unwrap_value(wrapped, None, arrow_type) == value


def test_a_record_keeps_its_wrapper_through_an_hfile_block():
    """Table version 6's DateWrapper must not come back as the IntWrapper before it in the union."""
    wrapped, _ = cs.wrap_value(dt.date(2024, 1, 15), pa.date32(), versioned=False)
    stats = {"fileName": "f.parquet", "columnName": "d", "minValue": wrapped, "maxValue": wrapped, "valueCount": 3,
             "nullCount": 1, "totalSize": 10, "totalUncompressedSize": 9, "isDeleted": False,
             "isTightBound": False, "valueType": None}
    key = cs.column_stats_key("d", "", "f.parquet")
    block = log_format.hfile_data_block([(key, cs.stats_record(key, stats))], SCHEMA, "20240101000000000")
    [parsed] = list(log_format.read_blocks(block))
    hfile = HFileReader(parsed.content)
    [(row, value)] = list(hfile)
    assert row == key
    decoded = cs.decode_stats(value, parsed_schema(parsed.header[log_format.SCHEMA]))
    assert decoded == {**stats, "minValue": {**wrapped}, "maxValue": {**wrapped}}
    raw = fastavro.schemaless_reader(io.BytesIO(value), parsed_schema(SCHEMA), None, return_record_name=True)
    assert raw["ColumnStatsMetadata"][1]["minValue"][0].endswith("DateWrapper")


def test_merge_sums_counts_and_widens_the_range_and_a_tombstone_wins():
    def stats(lo, hi, nulls, values, deleted=False):
        return {"fileName": "f", "columnName": "c", "minValue": cs.wrap_value(lo, pa.int64(), True)[0],
                "maxValue": cs.wrap_value(hi, pa.int64(), True)[0], "valueCount": values, "nullCount": nulls,
                "totalSize": 1, "totalUncompressedSize": 2, "isDeleted": deleted, "isTightBound": False,
                "valueType": {"typeOrdinal": 4, "additionalInfo": None}}
    merged = cs.merge_stats(stats(5, 9, 1, 3), stats(2, 7, 0, 2))
    assert (merged["minValue"]["value"], merged["maxValue"]["value"], merged["nullCount"], merged["valueCount"],
            merged["totalSize"]) == (2, 9, 1, 5, 2)
    tomb = cs.tombstone("f", "c")
    assert cs.merge_stats(stats(5, 9, 1, 3), tomb) is tomb
    assert cs.merge_stats(tomb, stats(5, 9, 1, 3))["minValue"]["value"] == 5


@pytest.mark.parametrize("filters", [
    [("amount", ">=", Decimal("1000"))],
    [("txn_date", "=", dt.date(2024, 1, 15))],
    [("txn_datetime", "<", dt.datetime(2024, 1, 16, tzinfo=dt.timezone.utc))],
    [("currency", "in", ["EUR"])],
    [("merchant_name", "is null", None)],
    [("txn_ts", ">", 1700100000000), ("is_international", "=", True)],
])
def test_pruning_the_sample_from_javas_column_stats_equals_pruning_from_footers(sample, filters, monkeypatch):
    from hoodpy.file_group.fs_view import FileSystemView
    from hoodpy.read import data_skipping
    from hoodpy.schema.avro import arrow_schema_from_avro

    storage = Storage(str(sample))
    timeline = Timeline.load(storage)
    files = FileSystemView.load(storage, timeline).latest_base_files()
    schema = arrow_schema_from_avro(timeline.latest_schema())
    data_skipping.clear_cache()
    by_footers = data_skipping.prune_by_column_stats(storage, files, filters, schema)
    opened = []
    real = data_skipping.column_ranges
    monkeypatch.setattr(data_skipping, "column_ranges", lambda s, f: opened.extend(f) or real(s, f))
    by_index = data_skipping.prune_by_column_stats(storage, files, filters, schema, timeline)
    assert opened == []
    assert by_index == by_footers and 0 < len(by_index) < len(files)


def test_base_file_stats_follow_the_column_list(tmp_path):
    storage = Storage(str(tmp_path))
    table = pa.table({"_hoodie_commit_time": ["1", "2"], "_hoodie_commit_seqno": ["a", "b"], "a": [3, None],
                      "s": [{"x": 1}, {"x": 2}], "b": ["q", "r"]})
    storage.write_bytes("p/f1_0-1-0_1.parquet", b"")
    pq.write_table(table, storage.full_path("p/f1_0-1-0_1.parquet"))
    every = cs.base_file_stats(storage, "p", ["f1_0-1-0_1.parquet"], (), versioned=False)
    assert [s["columnName"] for s in every] == ["_hoodie_commit_time", "a", "b"]
    [a] = cs.base_file_stats(storage, "p", ["f1_0-1-0_1.parquet"], ("a", "s"), versioned=False)
    assert (a["columnName"], a["minValue"]["value"], a["maxValue"]["value"], a["nullCount"], a["valueCount"]) == \
        ("a", 3, 3, 1, 2)
    schema = ('{"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", "long"]}, '
              '{"name": "s", "type": ["null", {"type": "record", "name": "s", "fields": []}]}]}')
    assert cs.indexed_columns(schema) == ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "a"]
    assert cs.indexed_columns(schema, ["a"]) == ["a"]


def test_reading_some_columns_gives_exactly_their_records(sample):
    """Keys start with their column's hash: reading by column scans those key ranges of the base files and
    skips the other records of the log blocks, with the same merged records as a full read."""
    storage = Storage(str(sample))
    timeline = Timeline.load(storage)
    everything = cs.read_column_stats(storage, timeline)
    names = {v["columnName"] for v in everything.values()}
    for columns in (["currency"], ["amount", "txn_date"], ["no_such_column"]):
        some = cs.read_column_stats(storage, timeline, columns)
        assert some == {k: v for k, v in everything.items() if v["columnName"] in columns}
        assert bool(some) == (columns[0] in names)
    assert len(cs.read_column_stats(storage, timeline, ["currency"])) == 17

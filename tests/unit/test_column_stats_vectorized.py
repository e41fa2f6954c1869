"""column_stats records decoded all at once equal fastavro's record-by-record decode: every wrapper of tables
versions 6 and 9, tombstones, records of other types, the Java sample's records; bytes that are not records
are an error, never a wrong answer."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest

from hoodpy.hfile import HFileReader, parsed_schema
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.column_stats_vectorized import decode_stats_batch
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.records import SCHEMA, new_record
from hoodpy.storage import Storage
from tests.java_samples import unzip_sample

VALUES = [
    (pa.bool_(), True), (pa.int32(), -5), (pa.int64(), 1 << 40), (pa.float32(), 1.5), (pa.float64(), -2.25),
    (pa.string(), "zürich"), (pa.binary(), b"\x00\xff"), (pa.date32(), dt.date(2024, 1, 15)),
    (pa.decimal128(10, 2), Decimal("-1.28")), (pa.timestamp("us", "UTC"), dt.datetime(2024, 1, 15, 16, 30)),
    (pa.int64(), None),
]


def _encoded(record: dict) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed_schema(SCHEMA), record)
    return out.getvalue()


def _stats_records(versioned: bool) -> list[bytes]:
    out = []
    for i, (arrow_type, value) in enumerate(VALUES):
        stats = cs._stats_datum(f"f{i}.parquet", f"c{i}", arrow_type, value, value, 10 + i, i, 100, 200, versioned)
        out.append(_encoded(cs.stats_record(cs.column_stats_key(f"c{i}", "p", f"f{i}.parquet"), stats)))
    out.append(_encoded(cs.stats_record("k", cs.tombstone("gone.parquet", "c0"))))
    return out


@pytest.mark.parametrize("versioned", [True, False])
def test_every_wrapper_decodes_as_fastavro_does(versioned):
    values = _stats_records(versioned)
    schema = parsed_schema(SCHEMA)
    expected = [cs.decode_stats(v, schema) for v in values]
    assert decode_stats_batch(values, schema, cs.decode_stats) == expected
    assert expected[-1]["isDeleted"] and expected[0]["minValue"]["-type"].endswith("BooleanWrapper")


def test_records_of_other_types_are_none_or_left_to_the_per_record_decoder():
    schema = parsed_schema(SCHEMA)
    bloom = {**cs.stats_record("b", cs.tombstone("f.parquet", "c")), "type": 4, "ColumnStatsMetadata": None,
             "BloomFilterMetadata": {"type": "t", "timestamp": "1", "bloomFilter": b"\x01", "isDeleted": False}}
    values = [*_stats_records(True), _encoded(bloom)]
    decoded = decode_stats_batch(values, schema, cs.decode_stats)
    assert decoded[-1] is None and decoded[:-1] == [cs.decode_stats(v, schema) for v in values[:-1]]
    # A files-partition record has a map before the stats: the whole batch goes record by record.
    listing = _encoded(new_record("p", 2, {"a.parquet": (5, False)}))
    assert decode_stats_batch([values[0], listing], schema, cs.decode_stats) is None
    assert decode_stats_batch([], schema, cs.decode_stats) == []


def test_bytes_that_are_not_a_record_raise():
    schema = parsed_schema(SCHEMA)
    good = _stats_records(True)[1]
    with pytest.raises(ValueError):
        decode_stats_batch([good, good[:len(good) // 2]], schema, cs.decode_stats)
    with pytest.raises(ValueError):
        decode_stats_batch([b"\x7f" * 3], schema, cs.decode_stats)  # union branch -64


def test_the_java_sample_decodes_as_fastavro_does(tmp_path):
    storage = Storage(str(unzip_sample("hudi-rs/sample_table/cow/v9_txns_simple_meta", tmp_path)))
    part = cs.ColumnStatsPartition(MetadataTable(storage))
    checked = 0
    for s in part.latest_slices():
        reader = HFileReader(part.storage.read_bytes(part.path(s.base_file.name)))
        schema = parsed_schema(reader.schema)
        values = [v for _, v in reader]
        assert decode_stats_batch(values, schema, cs.decode_stats) == [cs.decode_stats(v, schema) for v in values]
        checked += len(values)
    assert checked > 0

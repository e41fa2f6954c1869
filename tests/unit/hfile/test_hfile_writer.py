"""Writing HFiles: hoodpy's files read back through the same reader (0, 1 and many entries, large keys, a large
root index, GZ and NONE), their block layout as Hudi's writer lays it out, and every HFile Hudi 1.1 wrote in
the v9 sample tables' metadata tables rewritten from its entries byte for byte."""

from __future__ import annotations

import struct

import pytest

from hoodpy.errors import InvalidRecordError
from hoodpy.hfile import Compression, HFileReader, HFileWriter, read_records, write_records
from hoodpy.hfile import block, file_info
from hoodpy.hfile.cell import bare_key, full_key, row_of
from hoodpy.hfile.trailer import HUDI_COMPARATOR, TRAILER_SIZE
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.timeline import log_format
from java_samples import MDT_SAMPLES, metadata_table_files

# HFile's own file info entries: the writer adds them, a rewrite passes on only the others.
OWN_FILE_INFO = {file_info.LAST_KEY, file_info.AVG_KEY_LEN, file_info.AVG_VALUE_LEN, file_info.CREATE_TIME_TS,
                 file_info.KEY_VALUE_VERSION, file_info.MAX_MEMSTORE_TS_KEY}


def _write(entries, **options) -> bytes:
    writer = HFileWriter(create_time_ms=1_700_000_000_000, **options)
    for key, value in entries:
        writer.append(key, value)
    return writer.finish()


def _blocks(data: bytes) -> list[block.BlockHeader]:
    """Every block header from the first byte to the trailer, in file order."""
    headers, offset = [], 0
    while offset < len(data) - TRAILER_SIZE:
        header = block.parse_header(data, offset)
        headers.append(header)
        offset += header.on_disk_size
    assert offset == len(data) - TRAILER_SIZE
    return headers


@pytest.mark.parametrize("codec", [Compression.GZ, Compression.NONE])
@pytest.mark.parametrize("count", [0, 1, 3000])
def test_round_trip(codec, count):
    entries = [("key-%06d" % i, b"value-%d" % i * (i % 5)) for i in range(count)]
    data = _write(entries, compression=codec, block_size=4096)
    reader = HFileReader(data)
    assert (reader.entry_count, reader.codec, list(reader)) == (count, codec, entries)
    for key, value in entries[::97]:
        assert reader.get(key) == value
    assert reader.get("key-") is None and reader.get("key-%06d" % count) is None
    assert [k for k, _ in reader.scan("key-0001")] == [k for k, _ in entries if k.startswith("key-0001")]
    t = reader.trailer
    assert (t.num_data_index_levels, t.comparator_class_name, t.compression_codec, t.minor_version) == \
        (1, HUDI_COMPARATOR, int(codec), 0)
    assert t.uncompressed_data_index_size == sum(len(k) + len(v) + 21 for k, v in entries)
    assert reader.last_key == (entries[-1][0] if entries else None)
    assert file_info.int_value(reader.file_info[file_info.AVG_KEY_LEN]) == (10 if count else 0)
    assert file_info.int_value(reader.file_info[file_info.CREATE_TIME_TS]) == 1_700_000_000_000
    if count == 0:
        assert (t.first_data_block_offset, t.last_data_block_offset, t.data_index_count) == (-1, 0, 0)
        assert reader.file_info[file_info.LAST_KEY] == b""
        assert len(data) > TRAILER_SIZE  # still an index, a meta index and a file info block


def test_data_blocks_split_at_the_block_size_and_chain_to_the_previous_block():
    entries = [("k%05d" % i, bytes(50)) for i in range(1000)]  # 77-byte cells
    data = _write(entries, block_size=1024, compression=Compression.NONE)
    headers = _blocks(data)
    data_blocks = [h for h in headers if h.magic == block.DATA]
    assert [h.magic for h in headers[len(data_blocks):]] == [block.ROOT_INDEX, block.ROOT_INDEX, block.FILE_INFO]
    assert all(h.uncompressed_size <= 1024 for h in data_blocks)
    assert all(h.uncompressed_size > 1024 - 77 for h in data_blocks[:-1])  # filled up to the next cell
    reader = HFileReader(data)
    index = reader.data_block_index
    assert len(index) == len(data_blocks) == reader.trailer.data_index_count == 77  # 13 cells a block
    offsets = [e.offset for e in index]
    assert [h.prev_block_offset for h in data_blocks] == [-1] + offsets[:-1]
    assert [e.size for e in index] == [h.on_disk_size for h in data_blocks]
    assert (reader.trailer.first_data_block_offset, reader.trailer.last_data_block_offset) == (0, offsets[-1])
    # index keys are full cell keys of each block's first row
    assert [e.key for e in index] == [full_key(row_of(e.key)) for e in index]
    assert [row_of(e.key).decode() for e in index] == [k for k, _ in entries[::13]]
    for h in headers:
        assert (h.checksum_type, h.bytes_per_checksum) == (0, 16384)
        checksums = 4 * -(-h.on_disk_data_size_with_header // 16384)  # 4 bytes per started 16 KiB
        assert h.on_disk_size_without_header == h.on_disk_data_size_with_header - 33 + checksums


def test_one_cell_larger_than_a_block_gets_its_own_block():
    entries = [("a", b"x"), ("b", bytes(5000)), ("c", b"y")]
    reader = HFileReader(_write(entries, block_size=100))
    assert len(reader.data_block_index) == 3 and list(reader) == entries


def test_large_keys_and_a_large_single_level_root_index():
    """Keys from 200 bytes to the 32,767-byte limit (index key lengths take multi-byte vlongs); 10,000
    200-byte keys in 1 KiB blocks make a root index of ~2,500 entries, which Hudi's writer (and so hoodpy's)
    keeps on one level."""
    prefix = "hudi-key-" + "a" * 190
    entries = [(prefix + "%06d" % i, b"hudi-value-%06d" % i) for i in range(10000)]
    reader = HFileReader(_write(entries, block_size=1024))
    assert reader.trailer.num_data_index_levels == 1 and len(reader.data_block_index) > 2000
    assert list(reader) == entries
    assert reader.get(prefix + "004321") == b"hudi-value-004321" and reader.get(prefix) is None
    huge = [("b" * 32767, b"1"), ("c" * 32767, b"2")]
    assert list(HFileReader(_write(huge))) == huge
    with pytest.raises(InvalidRecordError, match="longer than 32767 bytes"):
        HFileWriter().append("d" * 32768, b"")


def test_keys_must_ascend_without_duplicates():
    writer = HFileWriter()
    writer.append("b", b"1")
    with pytest.raises(InvalidRecordError, match="ascending order without duplicates"):
        writer.append("b", b"2")
    with pytest.raises(InvalidRecordError, match="ascending order"):
        writer.append("a", b"2")
    writer.append("é", b"3")  # UTF-8 bytes order: after every ASCII key
    assert list(HFileReader(writer.finish())) == [("b", b"1"), ("é", b"3")]


def test_meta_blocks_and_file_info():
    writer = HFileWriter(create_time_ms=5)
    writer.append("k", b"v")
    writer.append_file_info("schema", b"{}")
    writer.append_meta_block("zeta", b"z" * 100)
    writer.append_meta_block("bloomFilter", b"bits")
    reader = HFileReader(writer.finish())
    assert reader.meta_block_names == ["bloomFilter", "zeta"]  # sorted, as HBase's meta index needs
    assert (reader.meta_block("bloomFilter"), reader.meta_block("zeta")) == (b"bits", b"z" * 100)
    assert reader.trailer.meta_index_count == 2
    assert reader.file_info == {
        "schema": b"{}", "hfile.LASTKEY": bare_key(b"k"), "hfile.AVG_VALUE_LEN": struct.pack(">i", 1),
        "hfile.AVG_KEY_LEN": struct.pack(">i", 1), "KEY_VALUE_VERSION": struct.pack(">i", 1),
        "MAX_MEMSTORE_TS_KEY": bytes(8), "hfile.CREATE_TIME_TS": struct.pack(">q", 5)}
    assert list(reader.file_info) == file_info.java_hash_map_order(list(reader.file_info))


def test_java_hash_map_order():
    # the order Hudi 1.1 wrote these keys in the metadata table's base files (one 16-bucket HashMap)
    java = ["schema", "bloomFilterTypeCode", "hfile.LASTKEY", "hfile.AVG_VALUE_LEN", "minRecordKey",
            "hfile.AVG_KEY_LEN", "maxRecordKey", "KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY", "hfile.CREATE_TIME_TS"]
    inserted = ["MAX_MEMSTORE_TS_KEY", "schema", "minRecordKey", "maxRecordKey", "bloomFilterTypeCode",
                "hfile.LASTKEY", "hfile.AVG_KEY_LEN", "hfile.CREATE_TIME_TS", "hfile.AVG_VALUE_LEN",
                "KEY_VALUE_VERSION"]
    assert file_info.java_hash_map_order(inserted) == java
    many = ["k%d" % i for i in range(13)]  # past 12 entries the table has 32 buckets
    assert file_info.java_hash_map_order(many) == sorted(many, key=lambda k: (_bucket(k, 32), many.index(k)))


def _bucket(key: str, size: int) -> int:
    h = 0
    for c in key:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (size - 1)


def _java_hfiles() -> list[tuple[str, bytes]]:
    """The base HFiles and the HFiles inside the log blocks of the v9 samples' metadata tables."""
    found = []
    for sample in MDT_SAMPLES:
        found += metadata_table_files(sample, logs=False).items()
        for path, data in metadata_table_files(sample, logs=True).items():
            found += [(path, b.content) for b in log_format.scan_blocks(data, path)
                      if getattr(b, "block_type", None) == log_format.HFILE_DATA_BLOCK]
    return found


def _rewrite(data: bytes, *, full_index_keys: bool) -> bytes:
    """The entries, meta blocks and caller file info of an HFile written again with its settings."""
    reader = HFileReader(data)
    writer = HFileWriter(compression=reader.codec, full_index_keys=full_index_keys,
                         create_time_ms=file_info.int_value(reader.file_info[file_info.CREATE_TIME_TS]))
    for name, value in reader.file_info.items():
        if name not in OWN_FILE_INFO:
            writer.append_file_info(name, value)
    for name in reader.meta_block_names:
        writer.append_meta_block(name, reader.meta_block(name))
    for key, value in reader:
        writer.append(key, value)
    return writer.finish()


def test_every_hudi_1_1_hfile_rewritten_byte_for_byte():
    """30 base files (0 to 72 entries, bloom filter meta block) and 84 log-block HFiles: with Hudi 1.1's bare
    index keys hoodpy writes the very bytes Java wrote (blocks, gzip streams, file info order, trailer)."""
    java = _java_hfiles()
    assert len(java) == 114
    for path, data in java:
        assert _rewrite(data, full_index_keys=False) == data, path


def test_full_index_keys_change_only_the_root_index():
    """With full cell keys (hoodpy's default) the data and meta blocks are Java's bytes; the root index entries
    grow by the 10-byte key suffix, moving the blocks after them, and the trailer points at them."""
    for path, data in _java_hfiles()[:40]:
        java, ours = HFileReader(data), HFileReader(_rewrite(data, full_index_keys=True))
        index_start = java.trailer.load_on_open_data_offset
        assert _rewrite(data, full_index_keys=True)[:index_start] == data[:index_start], path
        assert [(e.offset, e.size, row_of(e.key)) for e in ours.data_block_index] == \
            [(e.offset, e.size, row_of(e.key)) for e in java.data_block_index]
        assert [e.key for e in ours.data_block_index] == [full_key(row_of(e.key)) for e in java.data_block_index]
        assert ours.file_info == java.file_info and list(ours) == list(java)
        growth = ours.trailer.file_info_offset - java.trailer.file_info_offset
        assert ours.trailer == java.trailer.__class__(**{
            **java.trailer.__dict__, "file_info_offset": java.trailer.file_info_offset + growth})


def test_avro_records_round_trip_with_the_key_field_blanked():
    schema = '{"type":"record","name":"R","fields":[{"name":"key","type":"string"},{"name":"n","type":"int"}]}'
    data = write_records([("b", {"key": "b", "n": 2}), ("a", {"key": "a", "n": 1})], schema, create_time_ms=0)
    reader = HFileReader(data)
    assert reader.schema == schema
    assert [v for _, v in reader] == [b"\x00\x02", b"\x00\x04"]  # "" and the int: the key lives in the row
    assert list(read_records(reader)) == [{"key": "a", "n": 1}, {"key": "b", "n": 2}]
    with pytest.raises(InvalidRecordError, match="Two records with key 'a'"):
        write_records([("a", {"key": "a", "n": 1}), ("a", {"key": "a", "n": 2})], schema)


def test_metadata_table_base_files_rebuilt_from_their_records():
    """A metadata-table base file is its records, min / max key, the bloom filter type and a DYNAMIC_V0 bloom
    filter of the keys (hoodpy's BloomFilter sized for 10,000 entries at fpp 1e-9, as Hudi sized these):
    rebuilt so, every one of the 30 is Java's file byte for byte."""
    files = {}
    for sample in MDT_SAMPLES:
        files |= metadata_table_files(sample, logs=False)
    assert len(files) == 30
    for path, data in files.items():
        reader = HFileReader(data)
        records = list(read_records(reader))
        keys = [r["key"] for r in records]
        bloom = BloomFilter.create(10000, 1e-9, 100000)
        for key in keys:
            bloom.add(key)
        ours = write_records(
            [(r["key"], r) for r in records], reader.schema, full_index_keys=False,
            create_time_ms=file_info.int_value(reader.file_info[file_info.CREATE_TIME_TS]),
            file_info_entries={file_info.MIN_RECORD_KEY: (keys[0] if keys else "").encode(),
                               file_info.MAX_RECORD_KEY: (keys[-1] if keys else "").encode(),
                               file_info.BLOOM_FILTER_TYPE_CODE: b"DYNAMIC_V0"},
            meta_blocks={file_info.BLOOM_FILTER_META_BLOCK: bloom.serialize().encode()})
        assert ours == data, path

"""Reading Java-written HFiles: hudi-rs's HBase 2.4 fixtures (0 to 20,000 entries, GZ and NONE, 2- and 3-level
indexes, large keys, fake index keys, repeated keys) entry for entry, lookups present and absent, prefix
scans; and the HFiles Hudi 1.1's native writer put in the v9 sample tables' metadata tables. Corrupt bytes
give an HFileFormatError naming the file and the problem."""

from __future__ import annotations

import mmap
import struct

import pytest

from hoodpy.errors import HFileFormatError
from hoodpy.hfile import Compression, HFileReader, HFileWriter, read_records
from hoodpy.hfile import block, file_info
from hoodpy.hfile.trailer import TRAILER_SIZE, Trailer
from java_samples import HFILES, MDT_SAMPLES, metadata_table_files

LARGE = "hudi-key-" + "a" * 100 + "-"
# fixture -> (entries, key pattern, codec, data index levels); values are hudi-value-%09d (hudi-rs's tests).
FIXTURES = {
    "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile": (5000, "hudi-key-{:09d}", Compression.NONE, 1),
    "hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile": (5000, "hudi-key-{:09d}", Compression.NONE, 1),
    "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile": (20000, "hudi-key-{:09d}", Compression.GZ, 1),
    "hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile": (20000, "hudi-key-{:09d}", Compression.GZ, 1),
    "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile":
        (20000, "hudi-key-{:09d}-abcdefghij", Compression.GZ, 1),
    "hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile": (20000, LARGE + "{:09d}", Compression.GZ, 2),
    "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile": (10000, LARGE + "{:09d}", Compression.GZ, 3),
    "hudi_1_0_hbase_2_4_9_no_entry.hfile": (0, "hudi-key-{:09d}", Compression.GZ, 1),
}
NON_UNIQUE = "hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile"


def _reader(name: str) -> HFileReader:
    path = HFILES / name
    if not path.exists():
        pytest.skip(f"{path} not available")
    return HFileReader(path.read_bytes(), source=name)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_java_fixture_reads_back_entry_for_entry(name):
    count, pattern, codec, levels = FIXTURES[name]
    reader = _reader(name)
    assert (reader.entry_count, reader.codec, reader.trailer.index_levels) == (count, codec, levels)
    assert list(reader) == [(pattern.format(i), b"hudi-value-%09d" % i) for i in range(count)]
    assert reader.last_key == (pattern.format(count - 1) if count else None)
    if levels > 1:  # the leaf level is what the lookups bisect: one entry per data block
        assert len(reader.data_block_index) > reader.trailer.data_index_count


@pytest.mark.parametrize("name", sorted(n for n, spec in FIXTURES.items() if spec[0]))
def test_lookups_present_absent_and_by_prefix(name):
    count, pattern, _, _ = FIXTURES[name]
    reader = _reader(name)
    probe = sorted({0, count - 1, *range(0, count, 7)})  # every 7th key: each block's neighbourhood
    for i in probe:
        assert reader.get(pattern.format(i)) == b"hudi-value-%09d" % i
    assert reader.get_many(pattern.format(i) for i in probe) == {pattern.format(i): b"hudi-value-%09d" % i
                                                                for i in probe}
    # absent: before the first key, after the last, between two keys, a prefix of a key
    for key in ("a", "zzz", pattern.format(count) + "~", pattern.format(5)[:-1], pattern.format(5) + "0"):
        assert reader.get(key) is None
        assert key not in reader
    assert reader.get_many(["a", pattern.format(7), "zzz"]) == {pattern.format(7): b"hudi-value-000000007"}
    prefix = pattern.format(120)[:pattern.index("{") + 8]  # "...00000012": keys 120..129
    assert [k for k, _ in reader.scan(prefix)] == [pattern.format(i) for i in range(120, 130)]
    assert list(reader.scan("hudi-key-zzz")) == []


def test_every_key_of_a_fixture_is_found_across_block_boundaries():
    reader = _reader("hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile")
    blocks = reader.data_block_index
    assert any(key.endswith(b"\xff") for key in (e.key for e in blocks[1:]))  # HBase shortened ("fake") keys
    for i in range(20000):
        assert reader.get("hudi-key-{:09d}-abcdefghij".format(i)) == b"hudi-value-%09d" % i
    # between a block's fake index key ("hudi-key-00000047") and its real first row: absent, not an error
    assert reader.get("hudi-key-000000470") is None
    assert reader.get("hudi-key-00000047") is None


def test_repeated_keys_lookup_returns_the_first_and_prefix_scan_all():
    reader = _reader(NON_UNIQUE)
    entries = list(reader)
    assert len(entries) == reader.entry_count == 4200
    expected = [("hudi-key-%09d" % i, v) for i in range(200)
                for v in [b"hudi-value-%09d" % i] + [b"hudi-value-%09d_%d" % (i, j) for j in range(20)]]
    assert entries == expected
    for i in range(200):
        assert reader.get("hudi-key-%09d" % i) == b"hudi-value-%09d" % i
        assert [v for _, v in reader.scan("hudi-key-%09d" % i)] == [v for k, v in expected if k == "hudi-key-%09d" % i]


def test_fixture_file_info_and_meta_blocks():
    reader = _reader("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile")
    assert reader.file_info["hudi_hfile_testing.custom_key"] == b"hudi_custom_value"
    assert reader.meta_block_names == ["bloomFilter"]
    assert reader.meta_block("bloomFilter").startswith(b"/////wAAABQBAAAB")  # a bloom filter's base64 text
    assert reader.meta_block("nope") is None
    assert reader.trailer.comparator_class_name == "org.apache.hadoop.hbase.KeyValue$KVComparator"
    empty = _reader("hudi_1_0_hbase_2_4_9_no_entry.hfile")
    assert (empty.schema or "").startswith("{") and empty.data_block_index == []
    assert (empty.get("x"), list(empty.scan("x"))) == (None, [])


@pytest.mark.parametrize("sample", MDT_SAMPLES)
def test_hudi_1_1_metadata_table_base_files_read(sample):
    """Every base HFile of the sample's metadata table: entries match the trailer's count, Avro values decode
    under the file info's schema with the key put back, lookups find each key, and the bloom filter meta
    block is the base64 text Hudi writes."""
    files = metadata_table_files(sample, logs=False)
    assert files
    for path, data in files.items():
        reader = HFileReader(data, path)
        assert reader.trailer.comparator_class_name == "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
        assert reader.trailer.minor_version == 0 and reader.codec == Compression.GZ
        records = list(read_records(reader))
        assert len(records) == reader.entry_count
        keys = [r["key"] for r in records]
        assert keys == sorted(keys, key=str.encode) and len(set(keys)) == len(keys)
        assert all(reader.get(k) is not None for k in keys)
        if keys:
            assert (reader.file_info[file_info.MIN_RECORD_KEY].decode(),
                    reader.file_info[file_info.MAX_RECORD_KEY].decode()) == (keys[0], keys[-1])
        assert reader.file_info[file_info.BLOOM_FILTER_TYPE_CODE] == b"DYNAMIC_V0"
        assert reader.meta_block_names == ["bloomFilter"]
        assert reader.meta_block("bloomFilter").isascii()
        # base files that build a partition (init, async indexing) leave it unset; compaction fills it in
        assert {r["_hoodie_file_name"] for r in records} <= {None, path.rsplit("/", 1)[1]}


def test_files_partition_base_file_lists_partitions_and_files():
    files = metadata_table_files(MDT_SAMPLES[0], logs=False)
    [path] = [p for p in files if "/files/files-0000-0_13-170-402_" in p]
    records = {r["key"]: r for r in read_records(HFileReader(files[path], path))}
    assert sorted(records) == ["__all_partitions__", "region=apac", "region=eu", "region=us"]
    assert (records["__all_partitions__"]["type"], records["region=eu"]["type"]) == (1, 2)
    assert sorted(records["__all_partitions__"]["filesystemMetadata"]) == ["region=apac", "region=eu", "region=us"]
    eu = records["region=eu"]["filesystemMetadata"]
    assert len(eu) == 3 and all(name.endswith(".parquet") and info["size"] > 400_000 and not info["isDeleted"]
                                for name, info in eu.items())


# ---- corrupt input ------------------------------------------------------------------------------------------

def _small_file() -> bytes:
    writer = HFileWriter(block_size=64, create_time_ms=0)
    for i in range(50):
        writer.append("k%03d" % i, b"v%03d" % i)
    return writer.finish()


def _with_trailer(data: bytes, **changes) -> bytes:
    trailer = Trailer.parse(data)
    fields = {f: getattr(trailer, f) for f in trailer.__dataclass_fields__} | changes
    return data[:-TRAILER_SIZE] + Trailer(**fields).encode()


@pytest.mark.parametrize("mangle, message", [
    (lambda d: d[:-TRAILER_SIZE] + b"XXXXXXXX" + d[-TRAILER_SIZE + 8:], "no trailer magic"),
    (lambda d: d[:2000], "shorter than the 4096-byte trailer"),
    (lambda d: b"", "shorter than the 4096-byte trailer"),
    (lambda d: d[:-1], "no trailer magic"),
    (lambda d: d[:-4] + b"\x00\x00\x00\x02", "major version 2"),
    (lambda d: d[:100] + d[200:], "block"),  # a cut in the middle: the index points at the wrong bytes
    (lambda d: _with_trailer(d, compression_codec=int(Compression.SNAPPY)), "SNAPPY is not supported"),
    (lambda d: _with_trailer(d, compression_codec=42), "unknown compression codec id 42"),
    (lambda d: _with_trailer(d, load_on_open_data_offset=10 ** 9), "load-on-open offset"),
    (lambda d: _with_trailer(d, data_index_count=10 ** 6), "root index entry"),
])
def test_corrupt_file_refused_with_a_clear_error(mangle, message):
    with pytest.raises(HFileFormatError, match=message) as err:
        reader = HFileReader(mangle(_small_file()), source="bad.hfile")
        list(reader)
    assert "bad.hfile" in str(err.value)


def test_corrupt_data_block_is_reported_when_read():
    data = bytearray(_small_file())
    reader = HFileReader(bytes(data))
    second = reader.data_block_index[1]
    data[second.offset + block.HEADER_SIZE + 12] ^= 0xFF  # inside the gzip stream
    reader = HFileReader(bytes(data), source="flipped.hfile")
    assert reader.get("k000") == b"v000"  # other blocks still read
    with pytest.raises(HFileFormatError, match=f"flipped.hfile: data block at byte {second.offset}"):
        list(reader)


def test_mvcc_timestamps_and_encoded_blocks_refused():
    writer = HFileWriter()
    writer.append("k", b"v")
    writer.append_file_info(file_info.MAX_MEMSTORE_TS_KEY, struct.pack(">q", 7))
    with pytest.raises(HFileFormatError, match="MVCC timestamps"):
        HFileReader(writer.finish())
    data = bytearray(_small_file())
    data[0:8] = block.ENCODED_DATA
    with pytest.raises(HFileFormatError, match="DATABLKE"):
        HFileReader(bytes(data)).get("k000")


def test_reads_from_a_memory_map():
    path = HFILES / "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile"
    if not path.exists():
        pytest.skip(f"{path} not available")
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        reader = HFileReader(mapped, source=str(path))
        assert reader.get("hudi-key-000012345") == b"hudi-value-000012345"
        assert sum(1 for _ in reader) == 20000
        del reader  # the reader's memoryview must go before the map closes


def test_a_value_that_is_not_an_avro_record_of_the_schema():
    schema = '{"type":"record","name":"R","fields":[{"name":"key","type":"string"},{"name":"n","type":"long"}]}'
    writer = HFileWriter()
    writer.append_file_info("schema", schema.encode())
    writer.append("k", b"\x00")  # the empty key, then nothing for n
    with pytest.raises(HFileFormatError, match="value of key 'k' is not an Avro record of the file's schema"):
        list(read_records(HFileReader(writer.finish())))


# ---- range reads (HFileReader.open) ----------------------------------------------------------------------

def _opened(name: str):
    import pyarrow as pa

    path = HFILES / name
    if not path.exists():
        pytest.skip(f"{path} not available")
    return HFileReader.open(pa.OSFile(str(path)), source=name), path.stat().st_size


@pytest.mark.parametrize("name", sorted(n for n, spec in FIXTURES.items() if spec[0]))
def test_range_reads_agree_with_a_full_scan_reading_only_the_blocks_asked_for(name):
    count, pattern, _, levels = FIXTURES[name]
    whole = dict(_reader(name))
    reader, size = _opened(name)
    assert reader.trailer.index_levels == levels
    opened = reader.bytes_read  # trailer, load-on-open section, leaf / intermediate index blocks
    # present keys spread over the file, absent ones before, between and after them
    wanted = [pattern.format(i) for i in (0, 1, count // 3, count // 2, count - 1)]
    absent = ["a", pattern.format(count // 2) + "0", pattern.format(7)[:-1], "zzz"]
    assert reader.get_many(wanted + absent) == {k: whole[k] for k in wanted}
    data_blocks = reader.data_block_index
    largest = max(e.size for e in data_blocks)
    # at most the blocks of the five keys and their neighbours (a key equal to a block's first row)
    assert reader.bytes_read - opened <= 10 * largest
    assert reader.bytes_read < size / 2 or len(data_blocks) < 20
    for key in absent:
        assert reader.get(key) is None
    for i in range(0, count, max(1, count // 500)):  # single lookups across the whole file, on demand
        assert reader.get(pattern.format(i)) == whole[pattern.format(i)]
    assert list(reader) == list(whole.items())  # a scan reads every block it has not decoded yet


def test_range_reads_of_an_empty_file_and_of_a_cut_one():
    reader, _ = _opened("hudi_1_0_hbase_2_4_9_no_entry.hfile")
    assert reader.get_many(["hudi-key-000000000"]) == {} and list(reader) == []

    class Cut:
        def __init__(self, data: bytes):
            self.data = data

        def size(self) -> int:
            return len(self.data) + 100  # claims more bytes than it has: reads near the end come back short

        def read_at(self, nbytes: int, offset: int) -> bytes:
            return self.data[offset:offset + nbytes]

    with pytest.raises(HFileFormatError, match="cut.hfile: trailer"):
        HFileReader.open(Cut(_small_file()), source="cut.hfile")


# -- point lookups search a block's bytes for the key's cell instead of locating every cell ------------------
def test_repeated_keys_get_many_returns_each_keys_first_value():
    reader = _reader(NON_UNIQUE)
    keys = ["hudi-key-%09d" % i for i in range(0, 200, 3)] + ["hudi-key-%09d~" % 5, "a"]
    assert reader.get_many(keys) == {"hudi-key-%09d" % i: b"hudi-value-%09d" % i for i in range(0, 200, 3)}


@pytest.mark.parametrize("codec", [Compression.GZ, Compression.NONE])
def test_a_cell_key_inside_a_value_is_not_taken_for_the_cell(codec):
    from hoodpy.hfile.cell import full_key

    # The value of k1 holds k2's cell key (row length, row, family, timestamp, type) without a cell's lengths
    # before it; the value of k3 holds k4's behind a key length that does not match.
    lookalike = b"\x01\x02\x03\x04\x05\x06\x07\x08" + full_key(b"k2") + b"tail"
    wrong_length = struct.pack(">ii", 99, 3) + full_key(b"k4")
    cells = [("k1", lookalike), ("k2", b"real-2"), ("k3", wrong_length), ("k4", b"real-4"),
             *((f"m{i:05d}", b"v%05d" % i) for i in range(3000))]
    writer = HFileWriter(block_size=2048, compression=codec, create_time_ms=1)
    writer.append_all(cells)
    reader = HFileReader(writer.finish())
    assert len(reader.data_block_index) > 10
    assert reader.get("k2") == b"real-2" and reader.get("k4") == b"real-4"
    assert reader.get("k5") is None and reader.get("m") is None
    wanted = ["k1", "k2", "k3", "k4", "k5", *(f"m{i:05d}" for i in range(0, 3000, 13)), "m03000", "zz"]
    expected = {k: v for k, v in cells if k in set(wanted)}
    assert reader.get_many(wanted) == expected
    assert {k: reader.get(k) for k in wanted if reader.get(k) is not None} == expected
    assert list(reader) == cells  # scans still locate every cell


def test_a_lookup_inflates_a_gz_block_only_as_far_as_the_cell_it_finds():
    cells = [(f"key-{i:06d}", b"value-%06d" % i * 3) for i in range(40000)]  # one ~2 MiB block
    writer = HFileWriter(block_size=4 * 1024 * 1024, create_time_ms=1)
    writer.append_all(cells)
    data = bytearray(writer.finish())
    reader = HFileReader(bytes(data), source="one-block.hfile")
    assert len(reader.data_block_index) == 1
    payload = reader._cells(0)._inflating
    assert reader.get_many(["key-000010", "key-000500"]) == dict(cells[i] for i in (10, 500))
    assert payload is not None and not payload.complete and len(payload.data) < 512 * 1024
    assert reader.get("key-000500x") is None and payload.complete  # an absent key: the whole block
    assert list(reader) == cells
    # A block cut short after its first cells: a key before the cut still reads, one past it or absent is refused.
    at = reader.data_block_index[0].offset + block.HEADER_SIZE
    header = block.parse_header(bytes(data), at - block.HEADER_SIZE)
    data[at + header.on_disk_data_size_with_header - block.HEADER_SIZE - 200:at + header.on_disk_size_without_header] = \
        bytes(header.on_disk_size_without_header - header.on_disk_data_size_with_header + block.HEADER_SIZE + 200)
    reader = HFileReader(bytes(data), source="cut-block.hfile")
    assert reader.get("key-000001") == cells[1][1]
    with pytest.raises(HFileFormatError, match="cut-block.hfile: data block at byte"):
        reader.get("key-000001x")

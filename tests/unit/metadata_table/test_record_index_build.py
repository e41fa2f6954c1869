"""Building the record index in bulk gives the bytes the key-at-a-time path gives: the vectorized
String.hashCode (and shard) of every key equals Java's, an HFile of pre-encoded index records equals the one
of the records themselves, and HFileWriter.append_all writes what append does, refusing the same keys."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from hoodpy.errors import InvalidRecordError
from hoodpy.hfile import HFileReader, HFileWriter, write_records
from hoodpy.hfile.block import Compression
from hoodpy.metadata_table import key_hash
from hoodpy.metadata_table.key_hash import java_string_hash, java_string_hashes, shard_of, shards_of
from hoodpy.metadata_table.record_index import Location, ReadCounts, encoded_records, index_record, read_slice
from hoodpy.metadata_table.record_index import data_block, removal_block
from hoodpy.metadata_table.records import SCHEMA
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2

KEYS = ["hello", "TXN-001", "polygenelubricants", "", "é𝄞", "a", "order:17,line:3", "x" * 300,
        *(f"{i}:{i % 7}" for i in range(500))]


def test_vectorized_hash_and_shard_equal_javas_one_key_at_a_time():
    hashes = java_string_hashes(KEYS)
    assert hashes.tolist() == [java_string_hash(k) for k in KEYS]
    assert hashes[0] == 99162322 and hashes[2] == -(2**31)  # Integer.MIN_VALUE: Math.abs stays negative
    for count in (1, 7, 10, 64):
        assert shards_of(KEYS, count).tolist() == [shard_of(k, count) for k in KEYS]
    chunked = pa.chunked_array([pa.array(KEYS[:5]), pa.array(KEYS[5:])])
    assert java_string_hashes(chunked).tolist() == hashes.tolist()
    assert java_string_hashes(pa.array(KEYS).slice(3)).tolist() == hashes[3:].tolist()
    assert java_string_hashes([]).tolist() == []
    with pytest.raises(ValueError, match="null"):
        java_string_hashes(pa.array(["a", None]))


def test_keys_hashed_in_chunks_hash_as_all_at_once(monkeypatch):
    # Large key columns are hashed a chunk at a time (memory); chunk edges, non-ASCII keys and slices included.
    keys = KEYS * 7 + ["caf\u00e9-1", "", "z" * 40]
    whole = [java_string_hash(k) for k in keys]
    monkeypatch.setattr(key_hash, "HASH_CHUNK_KEYS", 5)
    assert java_string_hashes(keys).tolist() == whole
    assert java_string_hashes(pa.array(keys).slice(4)).tolist() == whole[4:]
    assert shards_of(keys, 10).tolist() == [shard_of(k, 10) for k in keys]


def test_encoded_index_records_write_the_same_hfile_as_the_records():
    groups = [f"{uuid.uuid4()}-0", "not-a-uuid", f"{uuid.uuid4()}-3"]
    locations = {f"k{i:04d}": Location(f"p={i % 3}", groups[i % 3], f"20261126{i % 5:06d}123") for i in range(300)}
    encoded = encoded_records(locations, utc=True, file_name="f.hfile")
    assert [k for k, _ in encoded] == sorted(locations)
    assert len({v for _, v in encoded}) == len(set(locations.values()))  # one encoding per location
    records = [(k, index_record(k, locations[k], file_name="f.hfile", utc=True)) for k in sorted(locations)]
    assert write_records(encoded, SCHEMA, create_time_ms=7) == write_records(records, SCHEMA, create_time_ms=7)


def test_index_records_read_back_through_the_decoding_cache(tmp_path):
    groups = [f"{uuid.uuid4()}-0", f"{uuid.uuid4()}-0"]
    locations = {f"k{i:03d}": Location("p", groups[i % 2], "20261126010203004") for i in range(50)}
    storage = Storage(str(tmp_path))
    storage.write_bytes("rli.log", data_block(locations, "20261126010203004", LAYOUT_2))
    assert read_slice(storage, [None, "rli.log"], None, {"20261126010203004"}) == locations
    assert read_slice(storage, [None, "rli.log"], {"k001", "k404"}, {"20261126010203004"}) == {
        "k001": locations["k001"]}


def test_keyed_slice_read_reads_only_the_blocks_of_its_keys_and_agrees_with_a_full_read(tmp_path):
    groups = [f"{uuid.uuid4()}-0", f"{uuid.uuid4()}-0", "raw-file-id"]
    base = {f"k{i:05d}": Location(f"p={i % 3}", groups[i % 3], "20261126010203004") for i in range(0, 6000, 2)}
    storage = Storage(str(tmp_path))
    storage.write_bytes("rli.hfile", write_records(encoded_records(base), SCHEMA, block_size=2048))
    moved = {"k00010": Location("p=9", groups[0], "20261126010203005"),  # present in the base: moved
             "k00011": Location("p=9", groups[1], "20261126010203005")}  # absent from the base: new
    storage.write_bytes("rli.log", data_block(moved, "20261126010203005", LAYOUT_2)
                        + removal_block(["k00020", "k00011"], "20261126010203006")
                        + data_block({"k00030": moved["k00010"]}, "20261126010203099", LAYOUT_2))  # not committed
    valid = {"20261126010203004", "20261126010203005", "20261126010203006"}
    full = read_slice(storage, ["rli.hfile", "rli.log"], None, valid)
    assert len(full) == 3000 - 1 and full["k00010"] == moved["k00010"] and "k00011" not in full
    assert "k00020" not in full and full["k00030"] == base["k00030"]
    wanted = {"k00000", "k00010", "k00011", "k00020", "k00030", "k03001", "k05998", "k05999", "zzz", ""}
    counts = ReadCounts()
    assert read_slice(storage, ["rli.hfile", "rli.log"], wanted, valid, counts=counts) == {
        k: full[k] for k in wanted if k in full}
    size = len(storage.read_bytes("rli.hfile"))
    blocks = HFileReader(storage.read_bytes("rli.hfile")).data_block_index
    assert len(blocks) > 40
    # trailer and load-on-open section, then at most two blocks per key
    assert counts.base_bytes < size - blocks[-1].offset + 4096 + 2 * len(wanted) * max(b.size for b in blocks)
    assert counts.base_bytes < size / 2
    assert counts.log_bytes == len(storage.read_bytes("rli.log")) and counts.files == 2


@pytest.mark.parametrize("codec", [Compression.GZ, Compression.NONE])
def test_append_all_writes_what_append_writes(codec):
    cells = [(f"key-{i:05d}", bytes([i % 251]) * (i % 40)) for i in range(2000)]
    one = HFileWriter(block_size=4096, compression=codec, create_time_ms=1)
    for key, value in cells:
        one.append(key, value)
    bulk = HFileWriter(block_size=4096, compression=codec, create_time_ms=1)
    bulk.append_all(cells[:700])
    bulk.append_all(iter(cells[700:]))
    data = bulk.finish()
    assert data == one.finish()
    reader = HFileReader(data)
    assert reader.trailer.data_index_count > 10 and list(reader) == cells


def test_append_all_refuses_keys_out_of_order_or_too_long():
    writer = HFileWriter()
    with pytest.raises(InvalidRecordError, match="ascending"):
        writer.append_all([("b", b""), ("a", b"")])
    with pytest.raises(InvalidRecordError, match="longer than"):
        HFileWriter().append_all([("k" * 40000, b"")])


def test_record_index_base_files_are_written_with_small_blocks_the_files_partition_with_hudis(tmp_path):
    """A lookup inflates one data block per key: record_index base HFiles use 64 KiB blocks (Java: 1 MiB, any
    size reads alike), the other partitions keep Hudi's default."""
    from hoodpy.config.metadata import FILES_PARTITION, RECORD_INDEX_PARTITION
    from hoodpy.hfile import DEFAULT_BLOCK_SIZE
    from hoodpy.hfile.block import HEADER_SIZE, parse_header
    from hoodpy.metadata_table.record_index import HFILE_BLOCK_SIZE
    from hoodpy.metadata_table.writer import MetadataTableWriter

    group = f"{uuid.uuid4()}-0"
    locations = {f"key-{i:06d}": Location("p=1", group, "20261126010203004") for i in range(20000)}
    writer = MetadataTableWriter(Storage(str(tmp_path)))
    name = "record-index-0000-0_0-0-0_20261126010203004011.hfile"
    base = writer.write_base_hfile(RECORD_INDEX_PARTITION, name, encoded_records(locations), LAYOUT_2)
    data = writer.meta.read_bytes(base.path)
    reader = HFileReader(data)
    sizes = [parse_header(data, e.offset).uncompressed_size for e in reader.data_block_index]
    assert HFILE_BLOCK_SIZE == 64 * 1024 and len(sizes) > 10
    assert max(sizes) <= HFILE_BLOCK_SIZE and min(sizes[:-1]) > HFILE_BLOCK_SIZE - 100  # full, but for the last
    assert read_slice(writer.meta, [base.path], {"key-000000", "key-012345", "key-019999", "key-x"},
                      {"20261126010203004"}) == {k: locations[k] for k in ("key-000000", "key-012345", "key-019999")}
    other = writer.write_base_hfile(FILES_PARTITION, "files-0000-0_0-0-0_20261126010203004010.hfile",
                                    encoded_records(locations), LAYOUT_2)
    data = writer.meta.read_bytes(other.path)
    sizes = [parse_header(data, e.offset).uncompressed_size for e in HFileReader(data).data_block_index]
    assert len(sizes) > 1 and min(sizes[:-1]) > DEFAULT_BLOCK_SIZE - 100 >= HFILE_BLOCK_SIZE + HEADER_SIZE

"""Base files written as their rows stream in (BaseFileWriter, bulk_insert's tasks) are the files the whole-table
path (write_base_file) writes: the same Hudi footer bytes (bloom filter, min/max record key), rows and
dictionaries, with row groups of hoodie.parquet.block.size bytes of rows."""

from __future__ import annotations

import random
from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.index.bloom_filter import (
    FOOTER_BLOOM_FILTER_KEY,
    FOOTER_BLOOM_TYPE_KEY,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
)
from hoodpy.meta_fields import COMMIT_SEQNO, FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, BaseFileWriter, write_base_file
from hoodpy.write.bulk_insert import BULK_FILE, BulkInsertContext, bulk_insert_partition, new_file_groups_partition
from hoodpy.write.merge import OP, OP_UPSERT, TARGET_FILE_ID, MergeContext, merge_file_group

FOOTER_KEYS = [k.encode() for k in (FOOTER_BLOOM_FILTER_KEY, FOOTER_BLOOM_TYPE_KEY, FOOTER_MIN_RECORD_KEY,
                                    FOOTER_MAX_RECORD_KEY)]
# A filter of 500 keys a row, so 12k keys fill many rows: the order keys are added in shows in its bytes.
OPTIONS = BaseFileOptions(compression="zstd", block_size=64 << 10, bloom_num_entries=500, bloom_max_entries=8000)


def _rows(n: int, seed: int = 5) -> pa.Table:
    rng = random.Random(seed)
    keys = sorted(f"key-{rng.randrange(10**9):09d}" for _ in range(n))
    meta = {c: pa.array([f"{c}-{i}" for i in range(n)]) for c in META_COLUMNS}
    meta[RECORD_KEY] = pa.array(keys)
    return pa.table({**meta, "city": [rng.choice(["oslo", "lima", "pune"]) for _ in range(n)],
                     "amount": [rng.random() for _ in range(n)]})


def _footer(path) -> dict[bytes, bytes]:
    meta = pq.ParquetFile(path).metadata.metadata
    return {k: meta[k] for k in FOOTER_KEYS if k in meta}


def _encodings(path) -> list[tuple]:
    meta = pq.ParquetFile(path).metadata
    return [meta.row_group(0).column(c).encodings for c in range(meta.num_columns)]


def _chunks(table: pa.Table, sizes: list[int]):
    start, i = 0, 0
    while start < table.num_rows:
        size = sizes[i % len(sizes)]
        yield table.slice(start, size)
        start, i = start + size, i + 1


def test_streamed_file_has_the_whole_table_footer_rows_and_row_groups_of_the_block_size(tmp_path) -> None:
    rows = _rows(12_000)
    storage = Storage(str(tmp_path))
    writer = BaseFileWriter(storage, "p/streamed.parquet", OPTIONS)
    for chunk in _chunks(rows, [1000, 37, 2500, 4096]):  # chunks cut anywhere, smaller and larger than a group
        writer.write(chunk)
    writer.close()
    write_base_file(storage, "p/whole.parquet", rows, OPTIONS)

    streamed, whole = tmp_path / "p/streamed.parquet", tmp_path / "p/whole.parquet"
    footer = _footer(streamed)
    assert set(footer) == set(FOOTER_KEYS)
    assert footer == _footer(whole)  # bloom filter bytes, type and key range: byte for byte
    assert footer[FOOTER_MIN_RECORD_KEY.encode()] == rows.column(RECORD_KEY)[0].as_py().encode()
    assert footer[FOOTER_MAX_RECORD_KEY.encode()] == rows.column(RECORD_KEY)[-1].as_py().encode()
    assert pq.read_table(streamed).equals(pq.read_table(whole))
    assert _encodings(streamed) == _encodings(whole)  # the same columns dictionary encoded

    meta = pq.ParquetFile(streamed).metadata
    counts = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert meta.num_row_groups >= 4 and sum(counts) == rows.num_rows
    start = 0
    for g, n in enumerate(counts):  # every group holds at most the block size of rows, all but the last nearly
        size = rows.slice(start, n).nbytes
        assert size <= OPTIONS.block_size * 1.05, (g, size)
        assert g == len(counts) - 1 or size >= OPTIONS.block_size * 0.9, (g, size)
        start += n


def test_an_empty_stream_writes_no_file_and_a_discarded_one_is_removed(tmp_path) -> None:
    storage = Storage(str(tmp_path))
    writer = BaseFileWriter(storage, "p/f.parquet", OPTIONS)
    with pytest.raises(ValueError, match="at least one row"):
        writer.close()
    writer.discard()
    writer = BaseFileWriter(storage, "p/g.parquet", OPTIONS)
    writer.write(_rows(10))
    writer.discard()
    assert not list(tmp_path.rglob("*.parquet"))


def test_bulk_insert_task_streams_files_across_batches_as_the_whole_table_path_wrote_them(tmp_path) -> None:
    # Two planned files of one partition, sorted as the write sorts them, arriving in batches that cut
    # through both files (as Spark's Arrow stream does).
    keys = _rows(9_000).column(RECORD_KEY)
    files = pa.array([0] * 5_000 + [1] * 4_000, pa.int32())
    data = pa.table({BULK_FILE: files, PARTITION_PATH: pa.repeat(pa.scalar("2024"), len(keys)), RECORD_KEY: keys,
                     "v": pa.array(range(len(keys)), pa.int64())})
    ctx = BulkInsertContext(MergeContext(base_uri=str(tmp_path), instant_time="20240101000000000",
                                         data_schema=pa.schema([("v", pa.int64())]), options=OPTIONS))
    batches = data.to_batches(max_chunksize=700)
    stats = pa.Table.from_batches(list(bulk_insert_partition(ctx, iter(batches)))).to_pylist()
    assert [s["num_writes"] for s in stats] == [5_000, 4_000]

    storage = Storage(str(tmp_path))
    first_seqno = None  # the task's counter: earlier tasks of this process without a TaskContext share it
    for s, want_keys in zip(stats, (keys.slice(0, 5_000), keys.slice(5_000)), strict=True):
        written = pq.read_table(tmp_path / s["path"])
        # Rows stay in record key order, numbered on in the task, and every row names its file.
        assert written.column(RECORD_KEY).equals(pa.chunked_array([want_keys]))
        seqnos = [int(x.rsplit("_", 1)[1]) for x in written.column(COMMIT_SEQNO).to_pylist()]
        first_seqno = seqnos[0] if first_seqno is None else first_seqno
        assert seqnos == list(range(first_seqno, first_seqno + written.num_rows))
        first_seqno += written.num_rows
        assert set(written.column(FILE_NAME).to_pylist()) == {s["path"].rsplit("/", 1)[1]}
        assert pq.ParquetFile(tmp_path / s["path"]).metadata.num_row_groups > 1
        # The previous path (the whole file's rows at once) writes the same footer and rows.
        write_base_file(storage, "again/" + s["path"], written, OPTIONS)
        again = tmp_path / "again" / s["path"]
        assert _footer(tmp_path / s["path"]) == _footer(again)
        assert pq.read_table(again).equals(written)


def test_insert_task_streams_new_file_groups_as_the_merge_task_wrote_them(tmp_path) -> None:
    # An insert's rows for two new file groups of two partitions, clustered by target as the write sorts them
    # (keys in no order: an insert does not sort), arriving in batches that cut through both groups.
    keys = pa.array([f"key-{(i * 7919) % 6_000:05d}" for i in range(6_000)])
    targets = [("2024", "fg-a-0"), ("2025", "fg-b-0")]
    data = pa.table({TARGET_FILE_ID: [targets[i >= 3_500][1] for i in range(6_000)],
                     PARTITION_PATH: [targets[i >= 3_500][0] for i in range(6_000)], RECORD_KEY: keys,
                     OP: pa.repeat(pa.scalar(OP_UPSERT), 6_000), "v": pa.array(range(6_000), pa.int64())})
    ctx = MergeContext(base_uri=str(tmp_path / "streamed"), instant_time="20240101000000000", match_keys=False,
                       data_schema=pa.schema([("v", pa.int64())]), options=OPTIONS)
    stats = pa.Table.from_batches(list(new_file_groups_partition(ctx, iter(data.to_batches(max_chunksize=800)))))
    stats = stats.to_pylist()
    assert [(s["partition_path"], s["file_id"], s["num_writes"], s["num_inserts"]) for s in stats] == [
        ("2024", "fg-a-0", 3_500, 3_500), ("2025", "fg-b-0", 2_500, 2_500)]

    merged = replace(ctx, base_uri=str(tmp_path / "merged"))
    for s, (start, end) in zip(stats, ((0, 3_500), (3_500, 6_000)), strict=True):
        streamed = tmp_path / "streamed" / s["path"]
        assert s["path"].startswith(f"{s['partition_path']}/{s['file_id']}_")
        assert pq.ParquetFile(streamed).metadata.num_row_groups > 1  # written as the rows came
        # The merge task it replaces writes the same footer bytes and rows (sequence numbers aside: they
        # count on per task).
        path = merge_file_group(merged, data.slice(start, end - start)).column("path")[0].as_py()
        assert path == s["path"]
        assert _footer(streamed) == _footer(tmp_path / "merged" / path)
        got, want = pq.read_table(streamed), pq.read_table(tmp_path / "merged" / path)
        assert got.column(RECORD_KEY).to_pylist() == keys.slice(start, end - start).to_pylist()
        assert got.drop_columns([COMMIT_SEQNO]).equals(want.drop_columns([COMMIT_SEQNO]))


def test_constant_columns_written_as_one_entry_dictionaries_give_the_same_file_bytes(tmp_path) -> None:
    # bulk_insert's task hands the writer the commit time, partition path and file name every row holds; the
    # file must be the one the string columns give, byte for byte (schema, encodings, statistics, row groups).
    rows = _rows(12_000)
    constants = {META_COLUMNS[0]: "20240101000000000", PARTITION_PATH: "city=oslo", FILE_NAME: "f1.parquet"}
    for name, value in constants.items():
        rows = rows.set_column(rows.schema.get_field_index(name), name, pa.array([value] * rows.num_rows))
    storage = Storage(str(tmp_path))
    for path, given in (("plain.parquet", None), ("constants.parquet", constants)):
        writer = BaseFileWriter(storage, path, OPTIONS, constants=given)
        for chunk in _chunks(rows, [1000, 37, 2500, 4096]):
            writer.write(chunk)
        writer.close()
    plain, constant = (tmp_path / "plain.parquet").read_bytes(), (tmp_path / "constants.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "plain.parquet").metadata.num_row_groups >= 4
    assert constant == plain
    read = pq.read_table(tmp_path / "constants.parquet")
    assert read.schema.field(FILE_NAME).type == pa.string()
    assert read.column(FILE_NAME).to_pylist() == ["f1.parquet"] * rows.num_rows


def test_virtual_keys_writer_takes_only_the_file_name_as_a_constant(tmp_path) -> None:
    from hoodpy.keygen import SIMPLE_KEY_GENERATOR, KeyGenerator

    options = replace(OPTIONS, virtual_keys=KeyGenerator(("city",), (), SIMPLE_KEY_GENERATOR))
    rows = _rows(3000).set_column(len(META_COLUMNS) - 1, FILE_NAME, pa.array(["f2.parquet"] * 3000))
    storage = Storage(str(tmp_path))
    writer = BaseFileWriter(storage, "v.parquet", options,
                            constants={META_COLUMNS[0]: "20240101000000000", FILE_NAME: "f2.parquet"})
    writer.write(rows)
    writer.close()
    read = pq.read_table(tmp_path / "v.parquet")
    assert read.column(META_COLUMNS[0]).null_count == 3000  # nulled, as Java writes virtual-key files
    assert read.column(FILE_NAME).to_pylist() == ["f2.parquet"] * 3000

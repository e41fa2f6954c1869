"""A merge task overlapping its steps on threads (hoodpy.write.merge_overlap) writes the very bytes of doing
them in turn: rows, row groups, dictionaries and Hudi's footer."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy import arrow_rows
from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.file_group.naming import base_file_name, write_token
from hoodpy.meta_fields import FILE_NAME, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, ExistingFile, MergeContext, merge_file_group
from hoodpy.write.merge_overlap import InlineExecutor, SplitRead

OLD, NEW = "20250101000000000", "20250202000000000"
FILE_ID = "0b1c2d3e-0000-4000-8000-000000000000-0"
DATA = pa.schema([pa.field("ts", pa.int64()), pa.field("mode", pa.string()), pa.field("note", pa.string())])
OPTIONS = BaseFileOptions(compression="zstd", bloom_num_entries=500, block_size=20_000)  # several row groups


def _data(values: list[int]) -> pa.Table:
    return pa.table({"ts": pa.array(values, pa.int64()), "mode": pa.array([f"m{v % 4}" for v in values]),
                     "note": pa.array([f"note {v * 7919}" for v in values])})


def _old_file(storage: Storage, n: int) -> str:
    name = base_file_name(FILE_ID, write_token(0, 0, 0), OLD)
    keys = pa.array([f"k{i:05d}" for i in range(n)])
    rows = add_meta_columns(_data(list(range(n))), keys, "", OLD)
    write_base_file(storage, name, finalize(rows, pa.array([True] * n), instant_time=OLD, file_name=name,
                                            task_partition=0), OPTIONS)
    assert pq.ParquetFile(storage.full_path(name)).metadata.num_row_groups > 3
    return name


def _incoming(records: list[tuple[int, int, int]]) -> pa.Table:
    """(key number, ts, op) records in Arrow batches of 64 rows, as applyInArrow hands them over."""
    table = _data([ts for _, ts, _ in records])
    table = table.add_column(0, RECORD_KEY, pa.array([f"k{k:05d}" for k, _, _ in records]))
    table = table.add_column(1, PARTITION_PATH, pa.array([""] * len(records)))
    table = table.append_column(OP, pa.array([op for _, _, op in records], pa.int32()))
    table = table.append_column(TARGET_FILE_ID, pa.array([FILE_ID] * len(records)))
    return pa.Table.from_batches(table.to_batches(max_chunksize=64))


def _merged_bytes(tmp_path, threads: int, records, ordering: str | None) -> tuple[bytes, dict]:
    storage = Storage(str(tmp_path))
    arrow_rows._seq_counter.clear()  # both runs number their rows alike: the same old file, the same new one
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA, options=OPTIONS,
                       existing={("", FILE_ID): ExistingFile(_old_file(storage, 3000), OLD)},
                       ordering_field=ordering, threads=threads)
    row = merge_file_group(ctx, _incoming(records)).to_pylist()[0]
    return (tmp_path / row["path"]).read_bytes(), row


@pytest.mark.parametrize("ordering", [None, "ts"])
@pytest.mark.parametrize("with_deletes", [False, True])
def test_threaded_merge_writes_the_bytes_of_the_sequential_one(tmp_path_factory, ordering, with_deletes):
    # Updates spread over the row groups (some stale by ts), inserts, and optionally deletes.
    records = [(k, k + (1 if k % 3 else -1), OP_UPSERT) for k in range(5, 3000, 7)]
    records += [(k, k, OP_UPSERT) for k in range(3000, 3300)]
    if with_deletes:
        records += [(k, 10_000, OP_DELETE) for k in range(11, 3000, 13) if k % 7 != 5]
    one, row_one = _merged_bytes(tmp_path_factory.mktemp("seq"), 1, records, ordering)
    two, row_two = _merged_bytes(tmp_path_factory.mktemp("par"), 2, records, ordering)
    assert hashlib.sha256(one).hexdigest() == hashlib.sha256(two).hexdigest()
    drop = ("create_time_ms", "upsert_time_ms", "path", "file_size")
    assert {k: v for k, v in row_one.items() if k not in drop} == {k: v for k, v in row_two.items() if k not in drop}
    # The merge did what it says: updates in place (stale ones kept under ts ordering), inserts after.
    written = pq.read_table(pa.BufferReader(two))
    assert written.num_rows == row_two["num_writes"]
    assert row_two["num_inserts"] == 300
    assert row_two["num_update_writes"] == (sum(1 for k in range(5, 3000, 7) if k % 3) if ordering else 428)
    assert written.column(RECORD_KEY).to_pylist()[-300:] == [f"k{k:05d}" for k in range(3000, 3300)]
    meta = pq.ParquetFile(pa.BufferReader(two)).metadata.metadata
    assert b"org.apache.hudi.bloomfilter" in meta and meta[b"hoodie_max_record_key"] == b"k03299"


def test_split_read_is_the_whole_read(tmp_path):
    storage = Storage(str(tmp_path))
    path = storage.full_path(_old_file(storage, 3000))
    whole = pq.read_table(path, filesystem=storage.fs)
    split = SplitRead(path, storage.fs, (RECORD_KEY, "ts"), InlineExecutor())
    assert split.head.column_names == [RECORD_KEY, "ts"]  # in file order
    joined = split.whole()
    assert joined.equals(whole) and joined.schema.metadata == whole.schema.metadata
    assert [len(c) for c in joined.column("note").chunks] == [len(c) for c in whole.column("note").chunks]


def test_split_read_skips_the_columns_the_merge_replaces(tmp_path):
    # The merge stamps a new file name on every row: the stored names are not read. The other columns are the
    # whole read's, in file order and chunks, with the footer's metadata.
    storage = Storage(str(tmp_path))
    path = storage.full_path(_old_file(storage, 3000))
    whole = pq.read_table(path, filesystem=storage.fs)
    split = SplitRead(path, storage.fs, (RECORD_KEY, "ts"), InlineExecutor(), skip=(FILE_NAME,))
    joined = split.whole()
    assert FILE_NAME not in joined.column_names
    assert joined.equals(whole.drop_columns([FILE_NAME]))
    assert joined.schema.metadata == whole.schema.metadata
    assert [len(c) for c in joined.column("note").chunks] == [len(c) for c in whole.column("note").chunks]

"""The copy-on-write merge streamed row group by row group through an encoder thread (MergeContext.stream, the
default) writes the file the whole-file merge writes: same rows in the same order, same meta columns (commit
times, sequence numbers, file names), same footer (bloom filter, key range) and stats; only row-group
boundaries may differ. A failed encode fails the task and leaves no file."""

from __future__ import annotations

import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiFileGroupReader
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy import arrow_rows
from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.file_group.naming import base_file_name, write_token
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write import base_file
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, ExistingFile, MergeContext, merge_file_group
from hoodpy.write.merge_overlap import EncodeThread

OLD, NEW = "20250101000000000", "20250202000000000"
FILE_ID = "0b1c2d3e-0000-4000-8000-000000000000-0"
PARTITION = "p=1"
DATA = pa.schema([pa.field("v", pa.int64()), pa.field("ts", pa.int64()), pa.field("s", pa.string()),
                  pa.field("tags", pa.list_(pa.int64()))])
# Row groups of ~20 rows of this schema: an old file of 200 rows has ~10.
OPTIONS = BaseFileOptions(compression="snappy", bloom_num_entries=1000, block_size=1500)


def _data(values: list[int], ts: list[int]) -> pa.Table:
    return pa.table({"v": pa.array(values, pa.int64()), "ts": pa.array(ts, pa.int64()),
                     "s": pa.array([f"s{v}" for v in values]),
                     "tags": pa.array([[v] if v % 3 else None for v in values], pa.list_(pa.int64()))})


def _old_file(storage: Storage, n: int, options: BaseFileOptions = OPTIONS) -> str:
    name = base_file_name(FILE_ID, write_token(0, 0, 0), OLD)
    keys = [f"k{i:04d}" for i in range(n)]
    rows = add_meta_columns(_data(list(range(n)), [10] * n), pa.array(keys), PARTITION, OLD)
    rows = finalize(rows, pa.array([True] * n), instant_time=OLD, file_name=name, task_partition=0)
    write_base_file(storage, f"{PARTITION}/{name}", rows, options)
    return name


def _incoming(records: list[tuple[str, int, int, int]]) -> pa.Table:
    """(key, value, ts, op) records as a merge task receives them, in batches of 7 rows."""
    data = _data([v for _, v, _, _ in records], [t for _, _, t, _ in records])
    table = data.add_column(0, RECORD_KEY, pa.array([k for k, _, _, _ in records], pa.string()))
    table = table.add_column(1, PARTITION_PATH, pa.array([PARTITION] * len(records), pa.string()))
    table = table.append_column(OP, pa.array([op for _, _, _, op in records], pa.int32()))
    table = table.append_column(TARGET_FILE_ID, pa.array([FILE_ID] * len(records), pa.string()))
    return pa.Table.from_batches(table.to_batches(max_chunksize=7), schema=table.schema)


def _merge(tmp_path, name: str, records, *, stream: bool, ordering: str | None = None, threads: int = 2,
           options: BaseFileOptions = OPTIONS, splice: bool = False) -> tuple[dict, pa.Table, pq.FileMetaData]:
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA, ordering_field=ordering,
                       existing={(PARTITION, FILE_ID): ExistingFile(f"{PARTITION}/{name}", OLD)}, options=options,
                       stream=stream, threads=threads, splice=splice)
    arrow_rows._seq_counter.clear()  # both merges number their rows from 0
    row = merge_file_group(ctx, _incoming(records)).to_pylist()[0]
    path = tmp_path / row["path"]
    written, meta = pq.read_table(str(path)), pq.ParquetFile(str(path)).metadata
    path.unlink()  # the other merge writes the same name
    return row, written, meta


def _same_merge(tmp_path, n_old: int, records, ordering: str | None = None, threads: int = 2) -> pa.Table:
    name = _old_file(Storage(str(tmp_path)), n_old)
    assert pq.ParquetFile(str(tmp_path / PARTITION / name)).metadata.num_row_groups >= min(5, n_old // 20)
    stats, streamed, meta = _merge(tmp_path, name, records, stream=True, ordering=ordering, threads=threads)
    whole_stats, whole, whole_meta = _merge(tmp_path, name, records, stream=False, ordering=ordering)
    assert stats == {**whole_stats, "upsert_time_ms": stats["upsert_time_ms"]}
    assert streamed.equals(whole), "rows, order, meta columns"
    assert meta.metadata == whole_meta.metadata, "footer: bloom filter, min and max key"
    if streamed.num_rows > 60:  # row groups stay near the block size
        assert meta.num_row_groups > 2 and abs(meta.num_row_groups - whole_meta.num_row_groups) <= 1
    # The default, untouched row groups copied from the old file (test_merge_splice): the same rows and footer.
    spliced_stats, spliced, spliced_meta = _merge(tmp_path, name, records, stream=True, ordering=ordering,
                                                  threads=threads, splice=True)
    assert spliced_stats == {**whole_stats, "upsert_time_ms": spliced_stats["upsert_time_ms"],
                             "file_size": spliced_stats["file_size"]}
    assert spliced.equals(whole), "rows, order, meta columns (spliced)"
    assert spliced_meta.metadata == whole_meta.metadata, "footer: bloom filter, min and max key (spliced)"
    return streamed


def test_updates_in_some_row_groups_deletes_and_inserts(tmp_path):
    # Old rows k0000..k0199 in ~10 row groups: updates in the 2nd and the last, deletes in the 4th, inserts.
    records = [(f"k{i:04d}", 1000 + i, 20, OP_UPSERT) for i in (25, 26, 39, 195, 199)]
    records += [(f"k{i:04d}", 0, 0, OP_DELETE) for i in (61, 62, 70)]
    records += [(f"n{i}", 5000 + i, 20, OP_UPSERT) for i in range(12)]
    written = _same_merge(tmp_path, 200, records)
    keys = written.column(RECORD_KEY).to_pylist()
    assert len(keys) == 200 - 3 + 12 and keys[-12:] == [f"n{i}" for i in range(12)]
    assert "k0061" not in keys and written.column("v").to_pylist()[25:27] == [1025, 1026]


def test_event_time_ordering_keeps_stale_updates(tmp_path):
    # Stored ts is 10: updates with ts 5 are stale (the stored row stays), ts 20 win; a stale delete is ignored.
    records = [(f"k{i:04d}", 1000 + i, 5 if i % 2 else 20, OP_UPSERT) for i in range(0, 200, 9)]
    records += [("k0101", 0, 3, OP_DELETE), ("k0102", 0, 30, OP_DELETE), ("new", 7, 1, OP_UPSERT)]
    written = _same_merge(tmp_path, 200, records, ordering="ts")
    v = dict(zip(written.column(RECORD_KEY).to_pylist(), written.column("v").to_pylist(), strict=True))
    assert (v["k0009"], v["k0018"], v["k0101"], "k0102" in v, v["new"]) == (9, 1018, 101, False, 7)


def test_a_row_group_emptied_by_deletes(tmp_path):
    # Rows 0..59 deleted: the first row groups write nothing; sequence numbers still follow file positions.
    records = [(f"k{i:04d}", 0, 0, OP_DELETE) for i in range(60)] + [("k0100", 7, 20, OP_UPSERT)]
    written = _same_merge(tmp_path, 200, records)
    assert written.num_rows == 140 and written.column(RECORD_KEY)[0].as_py() == "k0060"


def test_sequential_merge_streams_without_a_thread(tmp_path):
    records = [("k0005", 1, 20, OP_UPSERT), ("k0150", 0, 0, OP_DELETE), ("x", 2, 20, OP_UPSERT)]
    _same_merge(tmp_path, 200, records, threads=1)


def test_every_row_deleted_writes_the_empty_file_the_whole_merge_writes(tmp_path):
    _same_merge(tmp_path, 30, [(f"k{i:04d}", 0, 0, OP_DELETE) for i in range(30)])


@settings(max_examples=25, deadline=None)
@given(n_old=st.integers(1, 120), ops=st.dictionaries(st.integers(0, 150), st.sampled_from([OP_UPSERT, OP_DELETE]),
                                                      max_size=40), stale=st.booleans())
def test_streamed_equals_whole_for_any_batch(tmp_path_factory, n_old, ops, stale):
    tmp_path = tmp_path_factory.mktemp("stream")
    records = [(f"k{i:04d}", 1000 + i, 5 if stale and i % 2 else 20, op) for i, op in ops.items()]
    if not any(op == OP_UPSERT for *_, op in records) and not n_old:
        return
    if records:
        _same_merge(tmp_path, n_old, records, ordering="ts")


def test_hudi_rs_reads_the_streamed_file(tmp_path):
    name = _old_file(Storage(str(tmp_path)), 200)
    (tmp_path / ".hoodie").mkdir(exist_ok=True)  # the task wrote its marker there
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\nhoodie.timeline.layout.version=1\n"
        "hoodie.table.recordkey.fields=v\nhoodie.table.partition.fields=p\nhoodie.populate.meta.fields=true\n"
        "hoodie.table.base.file.format=PARQUET\nhoodie.datasource.write.hive_style_partitioning=true\n")
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA,
                       existing={(PARTITION, FILE_ID): ExistingFile(f"{PARTITION}/{name}", OLD)}, options=OPTIONS)
    records = [("k0030", 1030, 20, OP_UPSERT), ("k0100", 0, 0, OP_DELETE), ("z", 9, 20, OP_UPSERT)]
    path = merge_file_group(ctx, _incoming(records)).column("path")[0].as_py()
    assert pq.ParquetFile(str(tmp_path / path)).metadata.num_row_groups > 5
    batch = HudiFileGroupReader(str(tmp_path)).read_file_slice_from_paths(path, [])
    read = pa.Table.from_batches([batch])
    assert read.num_rows == 200
    assert read.column(RECORD_KEY).to_pylist() == pq.read_table(str(tmp_path / path)).column(RECORD_KEY).to_pylist()
    assert dict(zip(read.column(RECORD_KEY).to_pylist(), read.column("v").to_pylist(), strict=True))["k0030"] == 1030


@pytest.mark.parametrize("threads", [1, 2])
def test_an_encode_failure_fails_the_task_and_leaves_no_file(tmp_path, monkeypatch, threads):
    name = _old_file(Storage(str(tmp_path)), 200)
    writes = []
    original = base_file.BaseFileWriter.write

    def failing(self, rows):
        writes.append(rows.num_rows)
        if len(writes) == 3:
            raise OSError("disk full")
        original(self, rows)

    monkeypatch.setattr(base_file.BaseFileWriter, "write", failing)
    records = [("k0030", 1030, 20, OP_UPSERT), ("z", 9, 20, OP_UPSERT)]
    with pytest.raises(OSError, match="disk full"):
        _merge(tmp_path, name, records, stream=True, threads=threads)
    assert sorted(p.name for p in (tmp_path / PARTITION).iterdir()) == [name]  # the old file only
    assert not [t for t in threading.enumerate() if t.name == "hoodpy-merge-encode"]
    assert len(writes) == 3  # nothing was written after the failure


def test_encode_thread_reports_a_failure_to_the_next_put_and_drops_queued_rows():
    seen = []
    gate = threading.Event()

    def write(rows):
        gate.wait()
        seen.append(rows.num_rows)
        if rows.num_rows == 1:
            raise ValueError("bad rows")

    encoder = EncodeThread(write, depth=2)
    for n in (1, 2, 3):  # the first fails once the gate opens; 2 and 3 wait in the queue
        encoder.put(pa.table({"a": list(range(n))}))
    gate.set()
    with pytest.raises(ValueError, match="bad rows"):
        encoder.finish()
    assert seen == [1]
    with pytest.raises(ValueError, match="bad rows"):
        encoder.put(pa.table({"a": [1]}))

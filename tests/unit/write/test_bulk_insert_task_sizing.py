"""bulk_insert's rolling write tasks size their files themselves on a first load (hoodpy.write.bulk_insert_modes):
with no record size to go by, a task encodes its first rows to learn one, then writes every row once, in files
within a quarter of the target but one remainder, with footers as footer_metadata() builds them. Without Spark."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.arrow_rows import _seq_counter
from hoodpy.index.bloom_filter import serialized_sizes
from hoodpy.meta_fields import COMMIT_SEQNO, PARTITION_PATH, RECORD_KEY
from hoodpy.write import bulk_insert_modes
from hoodpy.write.base_file import BaseFileOptions, footer_metadata
from hoodpy.write.bucket_assignment import SizingConfig
from hoodpy.write.bulk_insert_modes import RollingContext, rolling_bulk_insert_partition
from hoodpy.write.merge import MergeContext

INSTANT = "20240101000000000"
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
TARGET = 1024 * 1024


def _batches(n: int, per_batch: int, partitions=("",)) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(7)
    ids = rng.permutation(n)
    # Hex text: compresses like real text, not to nothing.
    v = pa.array([f"{int(x):016x}{int(x) * 2654435761 % 2**32:08x}" for x in rng.integers(0, 2**62, n)])
    table = pa.table({RECORD_KEY: pa.array(ids).cast(pa.string()),
                      PARTITION_PATH: pa.array(np.array(partitions)[ids % len(partitions)]),
                      "id": ids, "v": v})
    return table.to_batches(max_chunksize=per_batch)


def _ctx(tmp_path, records_per_file=None, options=BaseFileOptions()) -> RollingContext:
    merge = MergeContext(base_uri=str(tmp_path), instant_time=INSTANT, data_schema=SCHEMA, options=options)
    bloom = tuple(serialized_sizes(options.bloom_num_entries, options.bloom_fpp, options.bloom_max_entries))
    sizing = SizingConfig(max_file_size=TARGET, small_file_limit=TARGET // 2, record_size=1024)
    return RollingContext(merge, records_per_file, sizing, bloom)


def _written(tmp_path, ctx, batches) -> list[dict]:
    _seq_counter.clear()
    return pa.Table.from_batches(list(rolling_bulk_insert_partition(ctx, iter(batches)))).to_pylist()


@pytest.mark.parametrize("partitions", [("",), ("a", "b")])
def test_a_task_sizes_its_files_from_its_first_rows(tmp_path, partitions):
    n = 150_000
    batches = _batches(n, 10_000, partitions)
    stats = _written(tmp_path, _ctx(tmp_path), batches)
    assert sum(s["num_writes"] for s in stats) == n
    by_partition: dict[str, list[int]] = {}
    keys = []
    for s in stats:
        path = tmp_path / s["path"]
        assert path.stat().st_size == s["file_size"]
        by_partition.setdefault(s["partition_path"], []).append(s["file_size"])
        t = pq.read_table(path)
        assert t.num_rows == s["num_writes"]
        keys += t.column(RECORD_KEY).to_pylist()
        footer = pq.read_metadata(path).metadata
        expected = footer_metadata(t.column(RECORD_KEY), BaseFileOptions())
        assert {k: footer[k] for k in expected} == expected
    assert sorted(keys, key=int) == [str(i) for i in range(n)]  # every row once
    assert set(by_partition) == set(partitions)
    for partition, sizes in by_partition.items():
        # Several files each (the roll was exercised), all within 25% of the target but one remainder.
        off = [s for s in sizes if not 0.75 * TARGET <= s <= 1.25 * TARGET]
        assert len(sizes) >= 2 and len(off) <= 1 and all(s <= 1.25 * TARGET for s in sizes), (partition, sizes)


def test_measuring_claims_no_sequence_numbers_of_the_task(tmp_path):
    stats = _written(tmp_path, _ctx(tmp_path), _batches(30_000, 10_000))
    seqnos = [x for s in stats for x in pq.read_table(tmp_path / s["path"]).column(COMMIT_SEQNO).to_pylist()]
    # The task's rows are numbered from 0 as a task that measured nothing numbers them.
    assert sorted(int(x.rsplit("_", 1)[1]) for x in seqnos) == list(range(30_000))


def test_a_known_record_count_is_used_as_given_and_nothing_is_measured(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("measured")

    monkeypatch.setattr(bulk_insert_modes, "encoded_record_size", refuse)
    stats = _written(tmp_path, _ctx(tmp_path, records_per_file=7_000), _batches(30_000, 4_000))
    assert sorted(s["num_writes"] for s in stats) == [2_000, 7_000, 7_000, 7_000, 7_000]


def test_a_task_smaller_than_its_sample_is_measured_whole(tmp_path, monkeypatch):
    seen = []
    real = bulk_insert_modes.encoded_record_size

    def spy(sample, *args, **kwargs):
        seen.append(sample.num_rows)
        return real(sample, *args, **kwargs)

    monkeypatch.setattr(bulk_insert_modes, "encoded_record_size", spy)
    stats = _written(tmp_path, _ctx(tmp_path), _batches(12_000, 5_000))
    assert seen == [12_000] and sum(s["num_writes"] for s in stats) == 12_000
    # The first TASK_SAMPLE_ROWS rows (whole batches) are measured once, not the whole task.
    seen.clear()
    _written(tmp_path / "big", _ctx(tmp_path / "big"), _batches(120_000, 20_000))
    assert bulk_insert_modes.TASK_SAMPLE_ROWS == 50_000 and seen == [60_000]  # three 20k batches


def test_the_encoded_size_tracks_the_codec(tmp_path):
    """A codec that compresses less gives fewer records per file."""
    batches = _batches(60_000, 10_000)
    table = pa.Table.from_batches(batches)
    zstd = _ctx(tmp_path).measured_records_per_file(table)
    plain = _ctx(tmp_path, options=BaseFileOptions(compression="uncompressed")).measured_records_per_file(table)
    assert plain < zstd


def test_a_task_making_keys_refuses_a_blank_one_and_writes_nothing(tmp_path):
    """Rows that come without keys get them from the key fields; a null key (the batch changed since it was
    validated) fails the task, and its open file is removed."""
    from dataclasses import replace

    from hoodpy.errors import InvalidRecordError
    from hoodpy.keygen import COMPLEX_KEY_GENERATOR, KeyGenerator

    keygen = KeyGenerator(("id",), (), COMPLEX_KEY_GENERATOR)
    ctx = replace(_ctx(tmp_path, records_per_file=1000), keygen=keygen)
    good = pa.table({PARTITION_PATH: ["", ""], "id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]})
    stats = _written(tmp_path, ctx, good.to_batches())
    assert pq.read_table(tmp_path / stats[0]["path"]).column(RECORD_KEY).to_pylist() == ["id:1", "id:2"]
    bad = pa.table({PARTITION_PATH: ["", ""], "id": pa.array([3, None], pa.int64()), "v": ["c", "d"]})
    bad_ctx = replace(_ctx(tmp_path / "bad", records_per_file=1000), keygen=keygen)
    with pytest.raises(InvalidRecordError, match="1 record"):
        _written(tmp_path / "bad", bad_ctx, [good.to_batches()[0], *bad.to_batches()])
    assert not list((tmp_path / "bad").rglob("*.parquet"))


def test_an_unpartitioned_task_writes_rows_sent_without_their_partition_path(tmp_path):
    """An unpartitioned table's rows cross from the JVM without the partition path column (always ""): the
    task stamps "" itself, and sizes, numbers and keys the files exactly as for rows that carry it."""
    from dataclasses import replace

    batches = _batches(60_000, 10_000)
    with_path = _written(tmp_path / "a", _ctx(tmp_path / "a"), batches)
    bare = [b.drop_columns([PARTITION_PATH]) for b in batches]
    without = _written(tmp_path / "b", replace(_ctx(tmp_path / "b"), partition_path=""), bare)
    assert [s["num_writes"] for s in without] == [s["num_writes"] for s in with_path]
    assert len(without) >= 2  # rolled: the measured size applies
    for a, b in zip(with_path, without, strict=True):
        assert b["partition_path"] == "" and "/" not in b["path"]
        ta, tb = pq.read_table(tmp_path / "a" / a["path"]), pq.read_table(tmp_path / "b" / b["path"])
        assert tb.column(PARTITION_PATH).to_pylist() == [""] * tb.num_rows
        assert tb.drop_columns(["_hoodie_file_name"]).equals(ta.drop_columns(["_hoodie_file_name"]))
        fa = pq.read_metadata(tmp_path / "a" / a["path"]).metadata
        fb = pq.read_metadata(tmp_path / "b" / b["path"]).metadata
        assert {k: v for k, v in fa.items() if k.startswith(b"hoodie")} == \
            {k: v for k, v in fb.items() if k.startswith(b"hoodie")}


def test_a_task_takes_its_batches_coalesced_in_order(monkeypatch):
    """Spark's 10,000-row Arrow batches reach the task's steps as tables of TASK_BATCH_ROWS rows or
    TASK_BATCH_BYTES, in arrival order, empty batches dropped, every row once."""
    batches = _batches(1000, 70)
    batches.insert(3, batches[0].slice(0, 0))
    monkeypatch.setattr(bulk_insert_modes, "TASK_BATCH_ROWS", 300)
    tables = list(bulk_insert_modes.coalesced(iter(batches)))
    assert [t.num_rows for t in tables] == [350, 350, 300]  # 5 batches of 70 reach 300 rows; the rest at the end
    assert pa.concat_tables(tables).equals(pa.Table.from_batches(batches))
    monkeypatch.setattr(bulk_insert_modes, "TASK_BATCH_BYTES", 1)  # every batch is over the bytes bound
    assert [t.num_rows for t in bulk_insert_modes.coalesced(iter(batches))] == [70] * 14 + [20]


def test_coalesced_rows_write_the_files_batch_by_batch_rows_write(tmp_path, monkeypatch):
    """Coalescing changes no byte of the rows' files: the same footers and rows as batch by batch."""
    written = {}
    for rows in (1, bulk_insert_modes.TASK_BATCH_ROWS):
        monkeypatch.setattr(bulk_insert_modes, "TASK_BATCH_ROWS", rows)
        out = tmp_path / str(rows)
        stats = _written(out, _ctx(out, records_per_file=1500), _batches(4000, 100))
        written[rows] = [(s["num_writes"], pq.read_table(out / s["path"]).drop([
            "_hoodie_file_name"]).to_pylist(), pq.read_metadata(out / s["path"]).metadata) for s in stats]
    one, many = written.values()
    assert [n for n, _, _ in one] == [1500, 1500, 1000]
    assert [(n, rows) for n, rows, _ in one] == [(n, rows) for n, rows, _ in many]
    assert [m for _, _, m in one] == [m for _, _, m in many]  # bloom filters and key ranges

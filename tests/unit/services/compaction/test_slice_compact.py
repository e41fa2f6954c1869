"""Compaction in place (slice_compact) against the whole-slice merge it replaces: same rows and values on the
same slice, base rows in their place, inserts appended, the footer's bloom filter continued. Spliced (the base
file's unchanged row groups copied byte for byte) against the full rewrite: the same rows, order, meta columns,
footer and stats; only the changed groups decoded; files of another parquet schema rewritten."""

from __future__ import annotations

import dataclasses
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi import HudiFileGroupReader

from hoodpy.config import HoodieConfig
from hoodpy.file_group.log_writer import (
    avro_data_block, delete_block, log_schema, ordering_value, parquet_data_block, rollback_block,
)
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY, FOOTER_MAX_RECORD_KEY, FOOTER_MIN_RECORD_KEY, \
    BloomFilter
from hoodpy.keygen import virtual_keys
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_COLUMNS, RECORD_KEY
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json
from hoodpy.services.compaction import execute
from hoodpy.storage import Storage
from hoodpy.timeline.compaction_plan import CompactionOperation
from hoodpy.write import parquet_splice
from hoodpy.write.base_file import BaseFileOptions, SplicedBaseFile, write_base_file
from java_samples import unzip_sample
from parquet_chunks import chunk_bytes, group_bounds, spy_group_reads

T0, T1, T2, T3, T9 = "20250101000000000", "20250101000000001", "20250101000000002", "20250101000000003", \
    "20250102000000000"
FID = "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
DATA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", pa.string())])
SCHEMA = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(DATA))
SCHEMA_JSON = avro_schema_to_json(log_schema(avro_schema_from_arrow(DATA, "t")))
BASE_NAME = f"{FID}_0-1-0_{T0}.parquet"


def _rows(keys, ts, v, instant: str) -> pa.Table:
    n = len(keys)
    return pa.table({COMMIT_TIME: [instant] * n, COMMIT_SEQNO: [f"{instant}_0_{i}" for i in range(n)],
                     RECORD_KEY: keys, "_hoodie_partition_path": [""] * n, FILE_NAME: [FID] * n,
                     "id": keys, "ts": pa.array(ts, pa.int64()), "v": v}, schema=SCHEMA)


def _base_rows(n: int = 3000) -> pa.Table:
    keys = [f"k{i:05d}" for i in range(n)]
    return _rows(keys, [10] * n, [f"base{i}" for i in range(n)], T0)


def _parquet_block(rows: pa.Table, instant: str) -> bytes:
    sink = io.BytesIO()
    pq.write_table(rows, sink)
    return parquet_data_block(sink.getvalue(), instant, SCHEMA_JSON)


def _deletes(keys, ts, instant: str) -> bytes:
    return delete_block([(k, "", ordering_value(t, pa.int64())) for k, t in zip(keys, ts)], instant, SCHEMA_JSON)


def _slice(tmp_path, blocks: list[bytes], *, base: pa.Table | None, options: BaseFileOptions):
    storage = Storage(str(tmp_path))
    if base is not None:
        write_base_file(storage, BASE_NAME, base, options)
    log = f".{FID}_{T0}.log.1_0-1-0"
    storage.write_bytes(log, b"".join(blocks))
    return storage, CompactionOperation("", FID, T0, BASE_NAME if base is not None else None, (log,))


def _compact_both(storage, op, ordering: str | None, options: BaseFileOptions):
    ctx = execute._JobContext(storage.base_uri, T9, SCHEMA, options, [op], frozenset({T0, T1, T2, T3}), ordering)
    out = {}
    for in_place in (False, True):
        stat = execute._compact(dataclasses.replace(ctx, in_place=in_place), op)
        table = pq.read_table(storage.full_path(stat["path"]))
        out[in_place] = (stat, table, pq.read_metadata(storage.full_path(stat["path"])).metadata or {})
        storage.fs.delete_file(storage.full_path(stat["path"]))
    return out


def _by_key(table: pa.Table, key: str = "id") -> list[dict]:
    return sorted(table.to_pylist(), key=lambda r: r[key])


def _check_same_rows(out, base: pa.Table | None, key: str = "id"):
    (old_stat, old, _), (new_stat, new, _) = out[False], out[True]
    assert _by_key(new, key) == _by_key(old, key)
    ignore = ("path", "total_create_time", "total_upsert_time", "total_scan_time", "total_log_read_time_ms",
              "total_write_bytes")
    def same(stat):
        return {k: v for k, v in stat.items() if k not in ignore}

    assert same(new_stat) == same(old_stat)
    # Base rows in file order (replaced in place, deleted dropped), then the log-only keys in the order the
    # whole-slice merge appends them.
    base_keys = base.column(key).to_pylist() if base is not None else []
    in_base = set(base_keys)
    new_keys, old_keys = new.column(key).to_pylist(), old.column(key).to_pylist()
    survivors = set(new_keys)
    assert new_keys == [k for k in base_keys if k in survivors] + [k for k in old_keys if k not in in_base]
    return new


@pytest.mark.parametrize("ordering", ["ts", "ts,v", None])
@pytest.mark.parametrize("parquet", [False, True])
def test_updates_deletes_inserts_match_the_whole_slice_merge(tmp_path, ordering, parquet):
    options = BaseFileOptions()
    base = _base_rows()
    block = _parquet_block if parquet else (lambda rows, t: avro_data_block(rows, t, SCHEMA_JSON))
    blocks = [
        # Updates (one with an older ts: it loses under event time), inserts, and two versions of one key.
        block(_rows(["k00005", "k00100", "k02999", "new1", "new0", "k00100"], [11, 9, 12, 1, 1, 13],
                    ["u5", "old100", "u2999", "n1", "n0", "u100"], T1), T1),
        _deletes(["k00007", "k00200", "new0", "nothere"], [None, 5, None, None], T2),  # k00200: older, loses
        block(_rows(["k00007", "new2"], [1, 2], ["back7", "n2"], T3), T3),  # a key back after its delete
        block(_rows(["k00300"], [3], ["stale"], T3), T3),  # older than the base row: it wins by event time
    ]
    storage, op = _slice(tmp_path, blocks, base=base, options=options)
    new = _check_same_rows(_compact_both(storage, op, ordering, options), base)
    got = {r["id"]: r for r in new.to_pylist()}
    # A log record keeps its own commit time and sequence number.
    assert (got["k00005"]["v"], got["k00005"][COMMIT_TIME], got["k00005"][COMMIT_SEQNO]) == ("u5", T1, f"{T1}_0_0")
    assert got["k00100"]["v"] == "u100"
    assert got["k00007"]["v"] == "back7" and "new0" not in got and "nothere" not in got
    # The delete with an older ts loses under event time by ts; with two ordering fields it carries no tuple
    # (table version 6), so it counts as one without an ordering value and wins.
    assert ("k00200" in got) == (ordering == "ts")
    assert ordering != "ts" or got["k00200"]["v"] == "base200"
    assert (got["k00300"]["v"], got["k00300"][COMMIT_TIME]) == (("base300", T0) if ordering else ("stale", T3))
    assert set(new.column(FILE_NAME).to_pylist()) == {f"{FID}_0-0-0_{T9}.parquet"}
    assert got["k00001"][COMMIT_TIME] == T0 and got["k00001"][COMMIT_SEQNO] == f"{T0}_0_1"


def test_bloom_is_continued_and_key_range_right(tmp_path):
    options = BaseFileOptions()
    base = _base_rows()
    # Without deletes the continued filter is byte for byte the one built over the written keys.
    blocks = [avro_data_block(_rows(["k00003", "a0", "zz"], [11, 1, 1], ["u", "a", "z"], T1), T1, SCHEMA_JSON)]
    storage, op = _slice(tmp_path, blocks, base=base, options=options)
    out = _compact_both(storage, op, "ts", options)
    new, meta = out[True][1], out[True][2]
    assert meta == out[False][2]
    assert meta[FOOTER_MIN_RECORD_KEY.encode()] == b"a0" and meta[FOOTER_MAX_RECORD_KEY.encode()] == b"zz"
    # With deletes it still holds every written key (and the deleted ones: only false positives).
    blocks.append(_deletes(["k00000", "zz"], [None, None], T2))
    storage, op = _slice(tmp_path / "d", blocks, base=base, options=options)
    out = _compact_both(storage, op, "ts", options)
    _check_same_rows(out, base)
    new, meta = out[True][1], out[True][2]
    bloom = BloomFilter.deserialize(meta[FOOTER_BLOOM_FILTER_KEY.encode()].decode())
    assert all(bloom.might_contain(k) for k in new.column(RECORD_KEY).to_pylist())
    assert meta[FOOTER_MIN_RECORD_KEY.encode()] == b"a0" and meta[FOOTER_MAX_RECORD_KEY.encode()] == b"k02999"


def test_slice_without_base_file_and_rolled_back_block(tmp_path):
    options = BaseFileOptions()
    blocks = [
        avro_data_block(_rows(["b", "a", "c"], [1, 1, 1], ["b1", "a1", "c1"], T1), T1, SCHEMA_JSON),
        avro_data_block(_rows(["a", "d"], [5, 5], ["a2", "d2"], T2), T2, SCHEMA_JSON),
        rollback_block(T3, T2),  # T2's block no longer counts
        _deletes(["c"], [None], T3),
    ]
    storage, op = _slice(tmp_path, blocks, base=None, options=options)
    out = _compact_both(storage, op, "ts", options)
    new = _check_same_rows(out, None)
    assert new.column("id").to_pylist() == ["b", "a"] and new.column("v").to_pylist() == ["b1", "a1"]
    assert out[True][0]["total_rollback_blocks"] == 1 and out[True][0]["prev_commit"] == "null"


def test_every_row_deleted_writes_an_empty_file(tmp_path):
    options = BaseFileOptions()
    base = _base_rows(4)
    storage, op = _slice(tmp_path, [_deletes(["k00000", "k00001", "k00002", "k00003"], [None] * 4, T1)],
                         base=base, options=options)
    out = _compact_both(storage, op, "ts", options)
    assert out[True][1].num_rows == 0 == out[False][1].num_rows and out[True][0]["num_deletes"] == 4


def test_virtual_keys(tmp_path):
    options = BaseFileOptions(virtual_keys=virtual_keys(HoodieConfig({
        "hoodie.populate.meta.fields": "false", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"})))
    base = _base_rows(500)
    unkeyed = _rows(["k00004", "k00499", "x"], [11, 11, 1], ["u4", "u499", "x"], T1)
    unkeyed = unkeyed.set_column(2, RECORD_KEY, pa.nulls(3, pa.string()))
    storage, op = _slice(tmp_path, [avro_data_block(unkeyed, T1, SCHEMA_JSON),
                                    _deletes(["k00010"], [None], T2)], base=base, options=options)
    out = _compact_both(storage, op, "ts", options)
    new = _check_same_rows(out, base)
    assert new.num_rows == 500 and new.column(RECORD_KEY).null_count == 500
    assert {r["id"]: r["v"] for r in new.to_pylist()}["k00499"] == "u499"


# --- Row groups no log record changes are copied byte for byte (execute._JobContext.splice) ----------------

SMALL_GROUPS = BaseFileOptions(block_size=3000)  # the 200-row base file in groups of 22 rows


@pytest.fixture
def group_reads(monkeypatch):
    """Indices of the base file's row groups compaction decodes (SplitRead reads each group it merges so)."""
    return spy_group_reads(monkeypatch)


def _spliced_and_rewritten(tmp_path, blocks, group_reads, ordering: str | None = "ts", n: int = 200,
                           base_options: BaseFileOptions = SMALL_GROUPS):
    """Compact the slice (a base file of ``n`` rows in small groups written with ``base_options``, ``blocks``)
    spliced and as a full rewrite; assert the same rows in the same order, meta columns, footer entries and write
    stats. Returns the base file's path, the spliced file's, its rows and the groups the spliced compaction
    decoded."""
    base = _base_rows(n)
    storage, op = _slice(tmp_path, blocks, base=base, options=base_options)
    ctx = execute._JobContext(storage.base_uri, T9, SCHEMA, SMALL_GROUPS, [op], frozenset({T0, T1, T2, T3}),
                              ordering)
    whole_stat = execute._compact(dataclasses.replace(ctx, splice=False), op)
    whole_path = storage.full_path(whole_stat["path"])
    whole, whole_footer = pq.read_table(whole_path), pq.read_metadata(whole_path).metadata
    storage.fs.delete_file(whole_path)
    group_reads.clear()
    stat = execute._compact(ctx, op)
    decoded = list(group_reads)
    path = storage.full_path(stat["path"])
    spliced = pq.read_table(path)
    assert spliced.to_pylist() == whole.to_pylist(), "rows, order, meta columns"
    assert pq.read_metadata(path).metadata == whole_footer, "footer: bloom filter, key range"
    assert pq.read_schema(path).remove_metadata() == whole.schema.remove_metadata()
    ignore = ("total_create_time", "total_upsert_time", "total_scan_time", "total_log_read_time_ms",
              "total_write_bytes")
    assert {k: v for k, v in stat.items() if k not in ignore} == \
        {k: v for k, v in whole_stat.items() if k not in ignore}
    assert stat["total_write_bytes"] == storage.fs.get_file_info(path).size
    assert set(spliced.column(FILE_NAME).to_pylist()) == {stat["path"]}
    # Base rows keep their place and meta fields (the log's winner its own commit time and sequence number).
    base_keys = base.column("id").to_pylist()
    keys = spliced.column("id").to_pylist()
    assert keys[:len([k for k in keys if k in set(base_keys)])] == [k for k in base_keys if k in set(keys)]
    return storage.full_path(BASE_NAME), path, spliced, decoded


def _groups_holding(bounds, rows: list[int]) -> set[int]:
    return {g for g, (lo, hi) in enumerate(bounds) if any(lo <= i < hi for i in rows)}


def _assert_copied(old: str, new: str, pairs: list[tuple[int, int]]) -> None:
    """Group ``o`` of the old file is group ``n`` of the new one, byte for byte but for the file name column."""
    for o, n in pairs:
        old_chunks, new_chunks = chunk_bytes(old, o), chunk_bytes(new, n)
        assert old_chunks.pop(FILE_NAME) != new_chunks.pop(FILE_NAME)
        assert old_chunks == new_chunks, (o, n)


@pytest.mark.parametrize("updated", [[3], [97, 99], [199]], ids=["first", "middle", "last"])
@pytest.mark.parametrize("inserts", [False, True], ids=["updates", "with-inserts"])
def test_untouched_groups_are_copied(tmp_path, group_reads, updated, inserts):
    keys = [f"k{i:05d}" for i in updated] + (["new1", "new0"] if inserts else [])
    blocks = [avro_data_block(_rows(keys, [11] * len(keys), [f"u{k}" for k in keys], T1), T1, SCHEMA_JSON)]
    old, path, rows, decoded = _spliced_and_rewritten(tmp_path, blocks, group_reads)
    bounds = group_bounds(old)
    touched = _groups_holding(bounds, updated)
    if inserts and bounds[-1][1] - bounds[-1][0] < bounds[0][1] - bounds[0][0]:
        touched.add(len(bounds) - 1)  # a small last group is encoded again with the inserts
    assert len(bounds) >= 8 and sorted(decoded) == sorted(touched), "only the changed groups are decoded"
    _assert_copied(old, path, [(g, g) for g in range(len(bounds)) if g not in touched])
    got = {r["id"]: r for r in rows.to_pylist()}
    assert all(got[f"k{i:05d}"]["v"] == f"uk{i:05d}" and got[f"k{i:05d}"][COMMIT_TIME] == T1 for i in updated)
    assert got["k00050"][COMMIT_TIME] == T0 and got["k00050"][COMMIT_SEQNO] == f"{T0}_0_50"
    if inserts:
        assert rows.column("id").to_pylist()[-2:] == ["new1", "new0"]


def test_a_log_changing_one_column_of_every_group_copies_the_others(tmp_path, group_reads):
    """Updates in every row group that change one column (as a uniform batch's do): each group is copied but for
    that column and the updated rows' commit time and sequence number (and the file name), as the merge does."""
    updated = list(range(0, 200, 3))
    keys = [f"k{i:05d}" for i in updated]
    blocks = [avro_data_block(_rows(keys, [10] * len(keys), [f"u{k}" for k in keys], T1), T1, SCHEMA_JSON)]
    gzip = dataclasses.replace(SMALL_GROUPS, compression="gzip")
    old, path, rows, decoded = _spliced_and_rewritten(tmp_path, blocks, group_reads, ordering=None,
                                                      base_options=gzip)
    bounds = group_bounds(old)
    assert all(_groups_holding([b], updated) for b in bounds), "every group changed"
    assert sorted(decoded) == list(range(len(bounds))) and group_bounds(path) == bounds
    encoded = {"v", COMMIT_TIME, COMMIT_SEQNO, FILE_NAME}
    for g in range(len(bounds)):
        meta = pq.ParquetFile(path).metadata.row_group(g)
        # The base file is gzip, compaction writes zstd: a gzip chunk in the new file is a copied one.
        copied = {meta.column(j).path_in_schema for j in range(meta.num_columns)
                  if meta.column(j).compression == "GZIP"}
        old_chunks, new_chunks = chunk_bytes(old, g), chunk_bytes(path, g)
        assert copied == set(old_chunks) - encoded, g
        assert all(old_chunks[c] == new_chunks[c] for c in copied), "copied byte for byte"
    got = {r["id"]: r for r in rows.to_pylist()}
    assert all(got[k]["v"] == f"u{k}" and got[k][COMMIT_TIME] == T1 for k in keys)
    assert got["k00001"][COMMIT_TIME] == T0 and got["k00001"][COMMIT_SEQNO] == f"{T0}_0_1"


def test_log_only_inserts_copy_the_base_groups(tmp_path, group_reads):
    keys = [f"n{i:03d}" for i in range(30)]
    blocks = [avro_data_block(_rows(keys, [1] * 30, keys, T1), T1, SCHEMA_JSON)]
    old, path, rows, decoded = _spliced_and_rewritten(tmp_path, blocks, group_reads, n=176)
    bounds = group_bounds(old)
    assert all(hi - lo == bounds[0][1] for lo, hi in bounds), "only full groups in this base file"
    # The last group is encoded again with the inserts when its encoded bytes are under 80% of the block size
    # (merge.untouched_groups: a small file taking inserts keeps one last group); no other group is decoded.
    last = len(bounds) - 1
    assert decoded in ([], [last])
    _assert_copied(old, path, [(g, g) for g in range(len(bounds)) if g not in decoded])
    assert group_bounds(path)[:last] == bounds[:last]
    assert rows.num_rows == 206 and rows.column("id").to_pylist()[-30:] == keys


def test_deletes_emptying_a_group_and_a_base_row_winning(tmp_path, group_reads):
    old = str(_slice(tmp_path / "probe", [], base=_base_rows(200), options=SMALL_GROUPS)[0].full_path(BASE_NAME))
    bounds = group_bounds(old)
    lo, hi = bounds[2]
    blocks = [
        _deletes([f"k{i:05d}" for i in range(lo, hi)], [None] * (hi - lo), T1),
        # Older than the base row (ts 10): the base row wins by event time, its group is still copied.
        avro_data_block(_rows(["k00150", "x"], [3, 1], ["stale", "x"], T2), T2, SCHEMA_JSON),
    ]
    old, path, rows, decoded = _spliced_and_rewritten(tmp_path, blocks, group_reads)
    assert decoded == [2] + ([len(bounds) - 1] if bounds[-1][1] - bounds[-1][0] < bounds[0][1] else [])
    new_bounds = group_bounds(path)
    assert len(new_bounds) == len(bounds) - 1, "the emptied group is gone"
    _assert_copied(old, path, [(g, g - (g > 2)) for g in range(len(bounds) - 1) if g != 2])
    got = {r["id"]: r for r in rows.to_pylist()}
    assert rows.num_rows == 200 - (hi - lo) + 1 and f"k{lo:05d}" not in got
    assert got["k00150"]["v"] == "base150" and got["x"][COMMIT_TIME] == T2
    # The filter is continued from the old footer: it still answers "maybe" for the deleted keys.
    bloom = BloomFilter.deserialize(pq.read_metadata(path).metadata[FOOTER_BLOOM_FILTER_KEY.encode()].decode())
    assert all(bloom.might_contain(k) for k in [f"k{i:05d}" for i in range(200)] + ["x"])


def test_every_row_of_a_spliced_base_deleted(tmp_path, group_reads):
    keys = [f"k{i:05d}" for i in range(40)]
    storage, op = _slice(tmp_path, [_deletes(keys, [None] * 40, T1)], base=_base_rows(40), options=SMALL_GROUPS)
    ctx = execute._JobContext(storage.base_uri, T9, SCHEMA, SMALL_GROUPS, [op], frozenset({T0, T1}), "ts")
    stat = execute._compact(ctx, op)
    assert pq.read_table(storage.full_path(stat["path"])).num_rows == 0 and stat["num_deletes"] == 40


def test_a_base_file_of_another_schema_is_rewritten(tmp_path, group_reads, monkeypatch):
    # The base file's ts is int32 (the table's column was widened since): its chunks cannot be copied.
    base = _base_rows(200)
    base = base.set_column(base.schema.get_field_index("ts"), "ts", base.column("ts").cast(pa.int32()))
    storage = Storage(str(tmp_path))
    write_base_file(storage, BASE_NAME, base, SMALL_GROUPS)
    log = f".{FID}_{T0}.log.1_0-1-0"
    storage.write_bytes(log, avro_data_block(_rows(["k00003", "z"], [11, 1], ["u3", "z"], T1), T1, SCHEMA_JSON))
    op = CompactionOperation("", FID, T0, BASE_NAME, (log,))
    copies = []
    monkeypatch.setattr(parquet_splice.SplicedParquetWriter, "copy", lambda *a, **k: copies.append(a))
    ctx = execute._JobContext(storage.base_uri, T9, SCHEMA, SMALL_GROUPS, [op], frozenset({T0, T1}), "ts")
    stat = execute._compact(ctx, op)
    rows = pq.read_table(storage.full_path(stat["path"]))
    assert copies == [] and rows.schema.field("ts").type == pa.int64() and rows.num_rows == 201
    assert {r["id"]: r["v"] for r in rows.to_pylist()}["k00003"] == "u3"


def test_a_java_written_base_file_is_not_spliced(tmp_path):
    """parquet-mr's schema annotations differ from pyarrow's: SplicedBaseFile.of declines the file (compaction
    of the Java samples: tests/spark/compaction/test_compaction_java_samples.py)."""
    table = unzip_sample("v6_nonpartitioned", tmp_path)
    base = next(p for p in table.glob("*.parquet"))
    stored = pq.read_schema(base)
    schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS]
                       + [f for f in stored if f.name not in META_COLUMNS])
    storage = Storage(str(table))
    assert SplicedBaseFile.of(storage, "out.parquet", BaseFileOptions(), schema, base.name) is None
    assert not (table / "out.parquet").exists()


def test_hudi_rs_reads_the_spliced_compaction(tmp_path, group_reads):
    blocks = [avro_data_block(_rows(["k00030", "z"], [11, 1], ["u30", "z"], T1), T1, SCHEMA_JSON),
              _deletes(["k00100"], [None], T2)]
    _, path, rows, decoded = _spliced_and_rewritten(tmp_path, blocks, group_reads)
    assert 0 < len(decoded) < len(group_bounds(path))
    (tmp_path / ".hoodie").mkdir(exist_ok=True)  # the task wrote its marker there
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=6\n"
        "hoodie.timeline.layout.version=1\nhoodie.table.recordkey.fields=id\nhoodie.populate.meta.fields=true\n"
        "hoodie.table.base.file.format=PARQUET\n")
    batch = HudiFileGroupReader(str(tmp_path)).read_file_slice_from_paths(path.rsplit("/", 1)[-1], [])
    assert pa.Table.from_batches([batch]).select(rows.schema.names).to_pylist() == rows.to_pylist()

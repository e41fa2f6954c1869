"""Compaction in place (slice_compact) against the whole-slice merge it replaces: same rows and values on the
same slice, base rows in their place, inserts appended, the footer's bloom filter continued."""

from __future__ import annotations

import dataclasses
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

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
from hoodpy.write.base_file import BaseFileOptions, write_base_file

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

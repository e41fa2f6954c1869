"""Several ordering fields (Hudi 1.x ``hoodie.table.ordering.fields=a,b``) compare as a tuple, the first field
first: in the Arrow helpers and in the merge of a merge-on-read file slice (column-wise and row-wise folds)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from hoodpy.arrow_rows import ordering_greater, ordering_rank
from hoodpy.file_group import log_writer
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.read import slice_merge
from hoodpy.read.slice_merge import decode_blocks, merge_slice
from hoodpy.timeline import log_format as lf

T1, T2, T3 = "20250101000000001", "20250101000000002", "20250101000000003"
ARROW = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS]
                  + [pa.field("id", pa.string()), pa.field("ts", pa.int64()), pa.field("seq", pa.string())])
AVRO = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": n, "type": ["null", t], "default": None} for n, t in (("id", "string"), ("ts", "long"),
                                                                    ("seq", "string"))]}
SCHEMA_JSON = json.dumps(log_writer.log_schema(AVRO))


def _rows(instant: str, rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist([{"_hoodie_commit_time": instant, "_hoodie_record_key": k, "_hoodie_partition_path": "",
                                  "id": k, "ts": ts, "seq": seq} for k, ts, seq in rows], schema=ARROW)


def _blocks(*data: bytes) -> list:
    return [b for d in data for b in lf.scan_blocks(d)]


def test_ordering_greater_compares_tuples_first_field_first():
    left = [pa.array([2, 1, 1, 1, None]), pa.array(["a", "b", "a", "a", "z"])]
    right = [pa.array([1, 1, 1, 2, 1]), pa.array(["z", "a", "a", "a", "a"])]
    assert ordering_greater(left, right).to_pylist() == [True, True, False, False, None]
    assert ordering_greater(left[:1], right[:1]).to_pylist() == [True, False, False, False, None]


def test_ordering_rank_is_dense_and_lexicographic():
    columns = [pa.chunked_array([[3, 1, 1], [1, 3]]), pa.chunked_array([["a", "b", "a"], ["b", "a"]])]
    assert ordering_rank(columns).tolist() == [3, 2, 1, 2, 3]
    assert ordering_rank(columns[:1]).tolist() == [2, 1, 1, 1, 2]


def test_slice_merge_breaks_ties_on_the_first_field_by_the_second():
    base = _rows(T1, [("a", 5, "m"), ("b", 5, "m"), ("c", 5, "m"), ("d", 4, "z"), ("z", 9, "a")])
    logs = _blocks(
        log_writer.avro_data_block(_rows(T2, [("a", 5, "n"), ("b", 5, "l"), ("c", 5, "m"), ("d", 5, "a")]),
                                   T2, SCHEMA_JSON),
        log_writer.avro_data_block(_rows(T3, [("a", 5, "k")]), T3, SCHEMA_JSON))
    got = sorted((r["id"], r["ts"], r["seq"], r["_hoodie_commit_time"])
                 for r in merge_slice(base, logs, ARROW, "ts,seq").to_pylist())
    # a: (5, n) beats the base's (5, m) and the later (5, k); b: the base's (5, m) beats (5, l); c: a full
    # tie goes to the later write; d: the first field decides before the second; z: no log names it.
    assert got == [("a", 5, "n", T2), ("b", 5, "m", T1), ("c", 5, "m", T2), ("d", 5, "a", T2), ("z", 9, "a", T1)]
    # One field (ts) alone: every tie goes to the later write.
    one = sorted((r["id"], r["seq"]) for r in merge_slice(base, logs, ARROW, "ts").to_pylist())
    assert one == [("a", "k"), ("b", "l"), ("c", "m"), ("d", "a"), ("z", "a")]


def test_deletes_under_several_fields_carry_no_ordering_and_win():
    base = _rows(T1, [("a", 9, "z"), ("b", 9, "z")])
    deletes = log_writer.delete_block([("a", "", log_writer.NO_ORDERING)], T2, SCHEMA_JSON)
    later = log_writer.avro_data_block(_rows(T3, [("b", 1, "a")]), T3, SCHEMA_JSON)
    out = merge_slice(base, _blocks(deletes, later), ARROW, "ts,seq")
    assert [(r["id"], r["ts"]) for r in out.to_pylist()] == [("b", 9)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_row_fold_agrees_with_column_fold(seed):
    # The row-by-row fold (taken when Arrow cannot line the ordering values up) compares Python tuples.
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in range(6)]

    def batch(instant):
        return _rows(instant, [(k, int(rng.integers(0, 3)), str(rng.integers(0, 3))) for k in rng.choice(keys, 5)])

    base = _rows(T1, [(k, 1, "1") for k in keys])
    logs = decode_blocks(_blocks(log_writer.avro_data_block(batch(T2), T2, SCHEMA_JSON),
                                 log_writer.delete_block([("k1", "", log_writer.NO_ORDERING)], T2, SCHEMA_JSON),
                                 log_writer.avro_data_block(batch(T3), T3, SCHEMA_JSON)), ARROW)
    entries = [base, *logs]
    fields = ("ts", "seq")
    versions = slice_merge._versions(entries, True, fields, [pa.int64(), pa.string()], base.num_rows)
    by_columns = slice_merge._fold_by_columns(versions, True)
    by_rows = slice_merge._fold_by_rows(entries, True, fields, base.num_rows)
    assert sorted(by_columns[0].tolist()) == sorted(by_rows[0].tolist())

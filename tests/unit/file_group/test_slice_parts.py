"""A merge-on-read slice merged in parts (hoodpy.read.slice_parts): the parts' rows together are the whole
merge's rows, each once; the column-wise fold agrees with the row-by-row one; Avro blocks decode a chosen
subset of records and their keys alone."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import struct
from decimal import Decimal

import fastavro
import numpy as np
import pyarrow as pa
import pytest

from hoodpy.file_group.avro_block import avro_block_keys, avro_block_table
from hoodpy.file_group.log_file import record_keys
from hoodpy.read import slice_merge
from hoodpy.read.slice_merge import merge_slice
from hoodpy.read.slice_parts import merge_slice_part, named_keys
from hoodpy.timeline import log_format as lf
from test_log_file import ARROW, SCHEMA, T1, T2, T3, T4, _row, avro_block, delete_block, parquet_block


def _blocks(*datas: bytes) -> list:
    return [b for data in datas for b in lf.scan_blocks(data)]


def _rows(table: pa.Table) -> list[tuple]:
    return sorted((r["id"], r["ts"], r["_hoodie_commit_time"]) for r in table.to_pylist())


BASE = pa.Table.from_pylist([_row(k, 5, T1) for k in ("a", "b", "c", "d", "e", "f", "g")], schema=ARROW)
LOGS = _blocks(
    avro_block(T2, [_row("a", 6, T2), _row("x", 1, T2), _row("c", 4, T2)]),  # a, c in base; x log only
    delete_block(T3, [("b", 0), ("y", 0)]),  # b: a delete of a base key; y: of a key nobody wrote
    parquet_block(T3, [_row("y", 2, T3), _row("e", 7, T3)]),
    avro_block(T4, [_row("x", 3, T4), _row("z", 1, T4)]),
)
EXPECTED = [("a", 6, T2), ("c", 5, T1), ("d", 5, T1), ("e", 7, T3), ("f", 5, T1), ("g", 5, T1), ("x", 3, T4),
            ("y", 2, T3), ("z", 1, T4)]


@pytest.mark.parametrize("parts", [1, 2, 3, 5, 12])
def test_parts_together_hold_each_merged_row_once(parts):
    assert _rows(merge_slice(BASE, LOGS, ARROW, "ts")) == EXPECTED
    outs = [merge_slice_part(BASE, LOGS, ARROW, "ts", part, parts) for part in range(parts)]
    together = [row for out in outs for row in _rows(out)]
    assert sorted(together) == EXPECTED  # each key once: no part repeats another's row
    if parts == 2:
        assert all(out.num_rows for out in outs)  # both parts got work
    # The read's split: the base rows of keys no log names (read by Spark's scan), plus the parts' named rows.
    named = set(named_keys(LOGS).to_pylist())
    assert named == {"a", "b", "c", "e", "x", "y", "z"}
    passed = [r for r in _rows(BASE) if r[0] not in named]
    named_rows = [r for part in range(parts) for r in _rows(merge_slice_part(BASE, LOGS, ARROW, "ts", part, parts,
                                                                             named_only=True))]
    assert sorted(passed + named_rows) == EXPECTED


@pytest.mark.parametrize("parts", [2, 4])
def test_parts_of_a_slice_of_logs_only_and_of_commit_time_ordering(parts):
    logs_only = [merge_slice_part(None, LOGS, ARROW, "ts", part, parts) for part in range(parts)]
    assert sorted(r for out in logs_only for r in _rows(out)) == [
        ("a", 6, T2), ("c", 4, T2), ("e", 7, T3), ("x", 3, T4), ("y", 2, T3), ("z", 1, T4)]
    latest = [merge_slice_part(BASE, LOGS, ARROW, None, part, parts) for part in range(parts)]
    assert sorted(r for out in latest for r in _rows(out)) == _rows(merge_slice(BASE, LOGS, ARROW, None))
    assert ("c", 4, T2) in _rows(merge_slice(BASE, LOGS, ARROW, None))  # commit time: the later write wins


def _random_history(rng: random.Random, delete_share: float, deleted_keys: int, delete_orderings: list[int]):
    """A base file of a few keys (or none) and three log blocks: deletes of ``deleted_keys`` keys with
    ``delete_share`` chance (ordering values drawn from ``delete_orderings``, 0: none), else four rows in an Avro
    or a parquet block (keys may repeat; ordering values may be null)."""
    base = [_row(k, rng.choice([None, 1, 2, 3]), T1) for k in rng.sample("abcdef", rng.randint(0, 6))]
    datas = []
    for instant in (T2, T3, T4):
        if rng.random() < delete_share:
            datas.append(delete_block(instant, [(k, rng.choice(delete_orderings))
                                                for k in rng.sample("abcdefg", deleted_keys)]))
        else:
            rows = [_row(rng.choice("abcdefg"), rng.choice([None, 1, 2, 3]), instant) for _ in range(4)]
            datas.append(avro_block(instant, rows) if rng.random() < 0.5 else parquet_block(instant, rows))
    return (pa.Table.from_pylist(base, schema=ARROW) if base else None), _blocks(*datas)


def test_column_fold_agrees_with_row_fold_on_random_histories():
    """Random histories of a few keys (rows with and without ordering values, plain and ordered deletes)."""
    rng = random.Random(7)
    for _ in range(60):
        table, blocks = _random_history(rng, 0.3, 3, [0, 0, 1, 2, 3])
        for ordering in ("ts", None):
            logs = slice_merge.decode_blocks(blocks, ARROW)
            by_columns = slice_merge.merge_decoded(table, logs, ARROW, ordering)
            original = slice_merge._versions
            try:
                slice_merge._versions = lambda *a: (_ for _ in ()).throw(TypeError("force the row fold"))
                by_rows = slice_merge.merge_decoded(table, logs, ARROW, ordering)
            finally:
                slice_merge._versions = original
            assert by_columns[0].equals(by_rows[0]) and by_columns[1] == by_rows[1]


def test_delete_ordering_value_of_another_type_folds_by_row():
    base = pa.Table.from_pylist([_row("a", 5, T1)], schema=ARROW)
    blocks = _blocks(delete_block(T2, [("a", "later")]))  # a string against a long column: the later write wins
    assert _rows(merge_slice(base, blocks, ARROW, "ts")) == []


def test_avro_block_subset_and_keys():
    rows = [_row(k, i, T1) for i, k in enumerate("pqrst")]
    [block] = _blocks(avro_block(T1, rows))
    text = block.header[lf.SCHEMA]
    assert record_keys(block).to_pylist() == list("pqrst")
    assert avro_block_keys(block.content, text, "id").to_pylist() == list("pqrst")  # any string field
    subset = avro_block_table(block.content, text, ARROW, np.array([1, 4]))
    assert subset.column("id").to_pylist() == ["q", "t"] and subset.column("ts").to_pylist() == [1, 4]
    # A key field behind a non-string field is read through a reader schema.
    schema = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "long"},
                                                         {"name": "_hoodie_record_key", "type": ["null", "string"]}]}
    out = [struct.pack(">ii", 3, 2)]
    for n, key in ((1, "k1"), (2, None)):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), {"n": n, "_hoodie_record_key": key})
        out += [struct.pack(">i", len(buf.getvalue())), buf.getvalue()]
    assert avro_block_keys(b"".join(out), json.dumps(schema), "_hoodie_record_key").to_pylist() == ["k1", None]


def test_avro_decimals_convert_column_wise_with_sign_and_nulls():
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "d", "type": ["null", {"type": "fixed", "name": "f", "size": 5, "logicalType": "decimal",
                                        "precision": 10, "scale": 2}]},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]}]}
    values = [Decimal("-1.25"), None, Decimal("12345678.99"), Decimal("-99999999.99"), Decimal("0.00")]
    out = [struct.pack(">ii", 3, len(values))]
    for i, v in enumerate(values):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, fastavro.parse_schema(schema),
                                   {"d": v, "day": None if v is None else dt.date(2024, 1, 1 + i)})
        out += [struct.pack(">i", len(buf.getvalue())), buf.getvalue()]
    target = pa.schema([("d", pa.decimal128(10, 2)), ("day", pa.date32())])
    table = avro_block_table(b"".join(out), json.dumps(schema), target)
    assert table.schema == target
    assert table.column("d").to_pylist() == values
    assert table.column("day").to_pylist() == [None if v is None else dt.date(2024, 1, 1 + i)
                                               for i, v in enumerate(values)]


def test_schema_header_still_names_the_fields():
    assert json.loads(_blocks(avro_block(T1, [_row("a", 1, T1)]))[0].header[lf.SCHEMA]) == SCHEMA


def test_a_slice_splits_into_parts_by_its_log_bytes():
    """slice_scan.slice_parts: one part per PART_BYTES (begun) of a slice's logs, up to the cores shared among
    the slices; its base file counts only when the merge reads it whole (virtual keys): otherwise a part reads
    only the base rows of the keys the logs name, while every part reads every log."""
    from types import SimpleNamespace

    from hoodpy.read.slice_scan import PART_BYTES, slice_parts

    def fs(base: int, *logs: int):
        return SimpleNamespace(base_file=SimpleNamespace(size=base), log_files=[SimpleNamespace(size=n) for n in logs])

    big_base = 10 * PART_BYTES
    assert slice_parts([fs(big_base, PART_BYTES // 2)], 4) == [1]  # one log under a part's bytes: one task
    assert slice_parts([fs(big_base, PART_BYTES // 2)], 4, whole_base=True) == [4]
    assert slice_parts([fs(big_base, PART_BYTES, 1)], 4) == [2]
    assert slice_parts([fs(0, *[PART_BYTES] * 5)], 2) == [2]  # no more than the cores
    assert slice_parts([fs(big_base, 5 * PART_BYTES), fs(big_base, 5 * PART_BYTES), fs(1, 1)], 4) == [2, 2, 1]
    assert slice_parts([SimpleNamespace(base_file=None, log_files=[SimpleNamespace(size=None)])], 2) == [1]


def test_a_blocks_record_offsets_are_walked_once_for_its_keys_and_records():
    """A merge reads a block's keys, then decodes its records: the second walk of the record lengths reuses
    the first's (read-only), and another block's bytes get their own."""
    from hoodpy.file_group import avro_block as ab

    [first] = _blocks(avro_block(T2, [_row("a", 6, T2), _row("x", 1, T2)]))
    [other] = _blocks(avro_block(T3, [_row("y", 2, T3)]))
    offsets = ab.record_offsets(first.content)
    assert ab.record_offsets(first.content) is offsets and not offsets.flags.writeable
    assert record_keys(first).to_pylist() == ["a", "x"]
    assert len(ab.record_offsets(other.content)) == 2 and record_keys(other).to_pylist() == ["y"]
    assert record_keys(first).to_pylist() == ["a", "x"] and ab.record_offsets(first.content).tolist() == offsets.tolist()
    assert type(first.content) is bytes  # scan_blocks parses a view of the file but keeps each content as bytes


def test_merging_keys_first_then_decoding_the_winners_keeps_every_column_of_the_same_rows():
    """Several blocks (or parts) merge on the key and ordering columns first and decode only the winning
    records whole: on random histories (keys written twice in a block, deletes with and without ordering
    values, Avro and parquet blocks, with and without a base) every column of every row is merge_slice's,
    whatever the parts and whether only the keys the logs name are kept."""
    rng = random.Random(11)
    for _ in range(40):
        table, blocks = _random_history(rng, 0.25, 2, [0, 1, 3])
        for ordering in ("ts", None):
            whole = merge_slice(table, blocks, ARROW, ordering)
            named = set(named_keys(blocks).to_pylist())
            for parts in (1, 2, 3):
                for named_only in (False, True):
                    out = [r for part in range(parts) for r in merge_slice_part(
                        table, blocks, ARROW, ordering, part, parts, named_only=named_only).to_pylist()]
                    want = [r for r in whole.to_pylist() if not named_only or r["id"] in named]
                    key = lambda r: r["id"]  # noqa: E731
                    assert sorted(out, key=key) == sorted(want, key=key), (ordering, parts, named_only)

"""Delete blocks of table versions 8 and 9: Hudi 1.x's HoodieDeleteRecord whose orderingVal is a union of Avro
value wrappers, several ordering fields (``hoodie.table.ordering.fields=ts,seq``) an ArrayWrapper.

The schema is checked against what Java wrote: the ArrayWrapper definition in the column_stats HFile schema of a
Hudi 1.1 table, and the delete blocks of the v9 merge-on-read samples (Spark SQL DELETE: IntWrapper(0), bytes
``04 00``). The tuple bytes are worked out by hand from the Avro spec over that schema (union index as a zigzag
varint, then the branch)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import io
import json
import zipfile

import fastavro
import pyarrow as pa
import pytest
from java_samples import MOR_V9, SAMPLES_DIR, metadata_table_files
from test_tuple_ordering import ARROW, SCHEMA_JSON, T1, T2, T3, _rows

from hoodpy.file_group import log_writer, ordering_wrappers
from hoodpy.file_group.log_file import deleted_records, effective_blocks
from hoodpy.hfile import HFileReader
from hoodpy.read import slice_merge
from hoodpy.read.slice_merge import decode_blocks, merge_slice
from hoodpy.timeline import log_format as lf
from hoodpy.timeline.timeline import CommittedInstants

LAYOUT_2 = CommittedInstants(frozenset({T1, T2, T3}), T1, layout=2)


def _deletes(instant: str, rows: list[tuple], fields: tuple[str, ...]) -> bytes:
    table = pa.Table.from_pylist([{"id": k, "ts": ts, "seq": seq} for k, ts, seq in rows],
                                 schema=pa.schema([ARROW.field("id"), ARROW.field("ts"), ARROW.field("seq")]))
    orderings = ordering_wrappers.delete_orderings(table, fields)
    return log_writer.delete_block([(k, "", o) for (k, _, _), o in zip(rows, orderings, strict=True)],
                                   instant, SCHEMA_JSON, hudi_1x=True)


def _blocks(*data: bytes) -> list[lf.LogBlock]:
    return list(effective_blocks([(f"log{i}", d) for i, d in enumerate(data)], LAYOUT_2).blocks)


def test_array_wrapper_is_the_one_java_1_1_writes():
    [(name, data)] = list(metadata_table_files("hudi-rs/sample_table/cow/v9_txns_simple_meta", logs=False).items())[:1]
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == "ArrayWrapper":
                found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads(HFileReader(data, name).schema))
    [java] = found
    ours = ordering_wrappers._ARRAY_WRAPPER
    item_names = [t if isinstance(t, str) else t["name"] for t in ours["fields"][0]["type"][1]["items"]]
    assert [n.rsplit(".", 1)[-1] for n in item_names] == java["fields"][0]["type"][1]["items"]
    assert ours["fields"][0]["name"] == java["fields"][0]["name"] == "wrappedValues"
    # The delete union: null, the eleven scalar wrappers in column_stats' order, then ArrayWrapper (index 12).
    union = ordering_wrappers.DELETE_RECORD_LIST_SCHEMA_1X["fields"][0]["type"]["items"]["fields"][2]["type"]
    assert [t if isinstance(t, str) else t["name"] for t in union] == [
        "null", "BooleanWrapper", "IntWrapper", "LongWrapper", "FloatWrapper", "DoubleWrapper", "BytesWrapper",
        "StringWrapper", "DateWrapper", "DecimalWrapper", "TimeMicrosWrapper", "TimestampMicrosWrapper",
        "ArrayWrapper"]


@pytest.mark.parametrize("table", ["v9_txns_simple_meta", "v9_txns_nonpart_nometa", "v9_timebasedkeygen_nonhivestyle"])
def test_java_1x_delete_blocks_decode_at_layout_2(table):
    zip_path = SAMPLES_DIR / f"{MOR_V9}/{table}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        logs = [(m, z.read(m)) for m in z.namelist() if ".log." in m and "/.hoodie/" not in m]
    decoded = []
    for name, data in logs:
        blocks = [b for b in lf.scan_blocks(data, name) if b.block_type == lf.DELETE_BLOCK]
        for block in effective_blocks([(name, data)], CommittedInstants(frozenset(), "9" * 17, layout=2)).blocks:
            if block.block_type == lf.DELETE_BLOCK:
                assert block.hudi_1x
                decoded.extend(deleted_records(block))
        for block in blocks:
            assert block.content[-3:] == bytes.fromhex("040000")  # IntWrapper(0), then the array's end
    assert decoded and all(d.ordering_value == 0 for d in decoded)
    assert all(d.record_key.endswith(("TXN-002", "TXN-005")) for d in decoded)


def test_tuple_delete_bytes_round_trip():
    data = _deletes(T2, [("k", 5, "x"), ("n", None, "y")], ("ts", "seq"))
    [block] = lf.scan_blocks(data)
    assert block.content[:8] == bytes.fromhex("00000003") + (len(block.content) - 8).to_bytes(4, "big")
    # array of 2 records; k: "k", "", ArrayWrapper (index 12 -> 0x18), wrappedValues' array branch (0x02),
    # 2 items: LongWrapper (index 3 -> 0x06) 5 (0x0a), StringWrapper (index 7 -> 0x0e) "x"; array end.
    # n: a null in the tuple cannot be compared: IntWrapper(0) (04 00), as a delete without a value.
    assert block.content[8:].hex() == ("04" + "02026b" + "0200" + "18" + "02" + "04" + "060a" + "0e0278" + "00"
                                       + "02026e" + "0200" + "0400" + "00")
    [k, n] = deleted_records(dataclasses.replace(block, hudi_1x=True))
    assert (k.record_key, k.ordering_value) == ("k", (5, "x"))
    assert (n.record_key, n.ordering_value) == ("n", 0)
    # fastavro over the schema as written agrees with the hand-worked bytes.
    datum = fastavro.schemaless_reader(io.BytesIO(block.content[8:]),
                                       ordering_wrappers.delete_schema_1x(), None, return_record_name=True)
    assert datum["deleteRecordList"][0]["orderingVal"][0] == "org.apache.hudi.avro.model.ArrayWrapper"


def test_one_field_and_no_field_deletes_use_scalar_wrappers():
    data = _deletes(T2, [("k", 7, "x")], ("ts",))
    [block] = lf.scan_blocks(data)
    assert block.content[8:].hex() == "02" + "02026b" + "0200" + "060e" + "00"  # LongWrapper(7)
    none = _deletes(T2, [("k", 7, "x")], ())
    [block] = lf.scan_blocks(none)
    # Commit-time ordering: Java's default, IntWrapper(0), the bytes of version 6's long 0.
    assert block.content[8:].hex() == "02" + "02026b" + "0200" + "0400" + "00"


def test_wrappers_of_dates_decimals_and_timestamps_round_trip():
    table = pa.table({"d": pa.array([datetime.date(2024, 1, 2)]), "m": pa.array([decimal.Decimal("1.25")],
                                                                                 pa.decimal128(10, 2)),
                      "t": pa.array([datetime.datetime(2024, 1, 1, 1, 2, 3, 4)], pa.timestamp("us")),
                      "b": pa.array([True]), "f": pa.array([1.5], pa.float32())})
    [ordering] = ordering_wrappers.delete_orderings(table, ("d", "m", "t", "b", "f"))
    data = log_writer.delete_block([("k", "", ordering)], T2, SCHEMA_JSON, hudi_1x=True)
    [block] = lf.scan_blocks(data)
    [d] = deleted_records(dataclasses.replace(block, hudi_1x=True))
    assert d.ordering_value == (datetime.date(2024, 1, 2), decimal.Decimal("1.25"),
                                datetime.datetime(2024, 1, 1, 1, 2, 3, 4), True, 1.5)


def test_a_late_tuple_delete_loses_and_a_newer_one_wins():
    base = _rows(T1, [("a", 5, "m"), ("b", 5, "m"), ("c", 5, "m"), ("d", 5, "m"), ("e", 5, "m")])
    # a: (5, "l") < (5, "m"): late, ignored; b: (5, "n") newer: deletes; c: a full tie goes to the later write,
    # the delete; d: (4, "z") older by the first field: ignored; e: no ordering (delete operation): deletes.
    deletes = _deletes(T2, [("a", 5, "l"), ("b", 5, "n"), ("c", 5, "m"), ("d", 4, "z")], ("ts", "seq"))
    plain = _deletes(T2, [("e", 1, "a")], ())
    blocks = _blocks(deletes, plain)
    got = sorted((r["id"], r["ts"], r["seq"]) for r in merge_slice(base, blocks, ARROW, "ts,seq").to_pylist())
    assert got == [("a", 5, "m"), ("d", 5, "m")]
    # A record after the delete: competes with the delete's tuple, as in Java (ties to the later write).
    later = log_writer.avro_data_block(_rows(T3, [("b", 5, "m"), ("c", 6, "a")]), T3, SCHEMA_JSON)
    got = sorted(r["id"] for r in merge_slice(base, _blocks(deletes, plain, later), ARROW, "ts,seq").to_pylist())
    assert got == ["a", "c", "d"]  # b's (5, m) is older than the delete's (5, n); c's (6, a) is newer


def test_row_fold_agrees_for_tuple_deletes():
    base = _rows(T1, [("a", 5, "m"), ("b", 5, "m"), ("c", 5, "m")])
    logs = decode_blocks(_blocks(_deletes(T2, [("a", 5, "l"), ("b", 6, "a")], ("ts", "seq")),
                                 log_writer.avro_data_block(_rows(T3, [("c", 1, "a")]), T3, SCHEMA_JSON)), ARROW)
    entries = [base, *logs]
    fields = ("ts", "seq")
    versions = slice_merge._versions(entries, True, fields, [pa.int64(), pa.string()], base.num_rows)
    by_columns = slice_merge._fold_by_columns(versions, True)
    by_rows = slice_merge._fold_by_rows(entries, True, fields, base.num_rows)
    assert sorted(by_columns[0].tolist()) == sorted(by_rows[0].tolist()) == [-1, 0, 2]


def test_version_6_blocks_are_unchanged():
    # Layout 1 reads and writes table version 6's plain union: the tuple has no branch there.
    data = log_writer.delete_block([("k", "", log_writer.NO_ORDERING)], T2, SCHEMA_JSON)
    [block] = lf.scan_blocks(data)
    assert block.content[8:].hex() == "02" + "02026b" + "0200" + "0400" + "00"
    [block] = effective_blocks([("log", data)], CommittedInstants(frozenset({T2}), T1)).blocks
    assert not block.hudi_1x and deleted_records(block)[0].ordering_value == 0

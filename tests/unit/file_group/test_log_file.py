"""Merge-on-read log files: names, block framing (corrupt and truncated blocks), which blocks count, the
Java-written single log files of hudi-rs, and merging a slice's records."""

from __future__ import annotations

import datetime as dt
import io
import json
import struct
from decimal import Decimal
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.errors import InvalidInstantError
from hoodpy.file_group.file_group import FileGroup, LogFile
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.log_file import (
    DELETE_RECORD_LIST_SCHEMA,
    DeletedRecord,
    data_rows,
    deleted_records,
    effective_blocks,
)
from hoodpy.file_group.naming import parse_log_file_name
from hoodpy.read.slice_merge import merge_slice
from hoodpy.schema import arrow_schema_from_avro, parse_avro_schema
from hoodpy.storage import Storage
from hoodpy.timeline import log_format as lf
from hoodpy.timeline.timeline import CommittedInstants, Timeline
from java_samples import LOG_FILES, SAMPLES_DIR

T1, T2, T3, T4 = "20250101000000001", "20250101000000002", "20250101000000003", "20250101000000004"
FID = "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
SCHEMA = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": n, "type": ["null", "string"], "default": None}
    for n in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
              "_hoodie_file_name")] + [{"name": "id", "type": ["null", "string"], "default": None},
                                       {"name": "ts", "type": ["null", "long"], "default": None}]}
ARROW = arrow_schema_from_avro(SCHEMA)


def _one_log(folder: str) -> Path:
    [path] = [p for p in (LOG_FILES / folder).iterdir() if p.name.startswith(".")]
    return path


def _row(key: str, ts: int | None, instant: str) -> dict:
    return {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_1", "_hoodie_record_key": key,
            "_hoodie_partition_path": "", "_hoodie_file_name": FID, "id": key, "ts": ts}


def avro_block(instant: str, rows: list[dict]) -> bytes:
    """An Avro data block as Hudi 0.14 writes it: block version 3, count, length-prefixed records."""
    parsed = fastavro.parse_schema(SCHEMA)
    out = [struct.pack(">ii", 3, len(rows))]
    for r in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        out += [struct.pack(">i", len(buf.getvalue())), buf.getvalue()]
    return lf.encode_block(lf.AVRO_DATA_BLOCK, {lf.INSTANT_TIME: instant, lf.SCHEMA: json.dumps(SCHEMA)},
                           b"".join(out))


def parquet_block(instant: str, rows: list[dict]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW), sink)
    return lf.encode_block(lf.PARQUET_DATA_BLOCK, {lf.INSTANT_TIME: instant, lf.SCHEMA: json.dumps(SCHEMA)},
                           sink.getvalue().to_pybytes())


def delete_block(instant: str, keys: list[tuple[str, object]]) -> bytes:
    """A version-3 delete block; an ordering value of 0 is written as long 0 (union branch 2), as Java does."""
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA), {"deleteRecordList": [
        {"recordKey": k, "partitionPath": "", "orderingVal": v} for k, v in keys]})
    payload = buf.getvalue()
    return lf.encode_block(lf.DELETE_BLOCK, {lf.INSTANT_TIME: instant, lf.SCHEMA: json.dumps(SCHEMA)},
                           struct.pack(">ii", 3, len(payload)) + payload)


def rollback_block(instant: str, target: str) -> bytes:
    return lf.encode_block(lf.COMMAND_BLOCK, {lf.INSTANT_TIME: instant, lf.COMMAND_BLOCK_TYPE: "0",
                                              lf.TARGET_INSTANT_TIME: target}, b"")


def committed(*times: str, as_of: str | None = None) -> CommittedInstants:
    return CommittedInstants(frozenset(times), min(times) if times else None, as_of)


# -- names --------------------------------------------------------------------------------------------
def test_log_file_names():
    name = f".{FID}_20250126040823628.log.2_1-0-1"
    parsed = parse_log_file_name(name)
    assert (parsed.file_id, parsed.base_instant_time, parsed.version, parsed.write_token) == (
        FID, "20250126040823628", 2, "1-0-1")
    assert parsed.name == name
    assert parse_log_file_name(f".{FID}_20250126040823628.log.2_1-0-1.cdc") is None  # CDC logs are not data
    assert parse_log_file_name(".commits_.archive.1_1-0-1") is None
    assert parse_log_file_name(f"{FID}_0-13-23_20250126040823628.parquet") is None
    assert parse_log_file_name(".hoodie_partition_metadata") is None


def test_slice_orders_logs_by_version_then_token():
    group = FileGroup("", FID)
    for v, token in [(3, "0-13-9"), (1, "0-33-43"), (2, "1-0-1"), (1, "0-33-42")]:
        group.add_log(LogFile("", parse_log_file_name(f".{FID}_{T1}.log.{v}_{token}"), 10))
    [only] = group.slices
    assert only.base_file is None and only.base_instant_time == T1
    assert [(f.name.version, f.name.write_token) for f in only.log_files] == [
        (1, "0-33-42"), (1, "0-33-43"), (2, "1-0-1"), (3, "0-13-9")]


def test_view_of_java_mor_layout():
    """hudi-rs's commits_load_schema_from_base_file_mor: one base file and the log written on top of it by the
    next deltacommit (the log is named after the base file's instant, not its own)."""
    folder = SAMPLES_DIR / "hudi-rs" / "core" / "timeline" / "commits_load_schema_from_base_file_mor"
    if not folder.exists():
        pytest.skip(f"{folder} not available")
    storage = Storage(str(folder))
    [s] = FileSystemView.load(storage, Timeline.load(storage)).latest_file_slices()
    assert s.partition_path == "city=san_francisco" and s.base_instant_time == "20250331030642808"
    assert s.base_file.file_name == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_0-13-60_20250331030642808.parquet"
    assert [f.file_name for f in s.log_files] == [
        ".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"]
    blocks = effective_blocks([(f.file_name, storage.read_bytes(f.path)) for f in s.log_files],
                              Timeline.load(storage).committed())
    assert [b.instant_time for b in blocks.blocks] == ["20250331030645735"]
    # As of the first deltacommit the log's block does not count yet.
    early = effective_blocks([(f.file_name, storage.read_bytes(f.path)) for f in s.log_files],
                             Timeline.load(storage).committed("20250331030642808"))
    assert early.blocks == ()


# -- the Java-written single log files ---------------------------------------------------------------
def test_java_avro_data_block():
    path = _one_log("valid_log_avro_data")
    data = path.read_bytes()
    [block] = lf.scan_blocks(data)
    assert block.block_type == lf.AVRO_DATA_BLOCK and block.instant_time == "20250316025828811"
    (size,) = struct.unpack(">q", data[6:14])
    assert (len(data), size, struct.unpack(">q", data[-8:])[0]) == (1172, 1158, 1164)
    schema = arrow_schema_from_avro(parse_avro_schema(block.header[lf.SCHEMA]))
    rows = data_rows(block, schema).to_pylist()
    assert rows == [{
        "_hoodie_commit_time": "20250316025828811", "_hoodie_commit_seqno": "20250316025828811_0_2",
        "_hoodie_record_key": "334e26e9-8355-45cc-97c6-c31daf0df330", "_hoodie_partition_path": "city=san_francisco",
        "_hoodie_file_name": "ff32ab89-5ad0-4968-83b4-89a34c95d32f-0", "ts": 1695159649088,
        "uuid": "334e26e9-8355-45cc-97c6-c31daf0df330", "rider": "rider-A", "driver": "driver-K", "fare": 29.1,
        "city": "san_francisco"}]


def test_java_parquet_data_block():
    [block] = lf.scan_blocks(_one_log("valid_log_parquet_data").read_bytes())
    assert block.block_type == lf.PARQUET_DATA_BLOCK and block.instant_time == "20250113230424191"
    assert block.content[:4] == b"PAR1" and block.content[-4:] == b"PAR1"
    schema = arrow_schema_from_avro(parse_avro_schema(block.header[lf.SCHEMA]))
    [row] = data_rows(block, schema).to_pylist()
    assert row["_hoodie_record_key"] == "334e26e9-8355-45cc-97c6-c31daf0df330"
    assert (row["_hoodie_commit_time"], row["rider"], row["fare"], row["city"]) == (
        "20250113230424191", "rider-A", 29.1, "san_francisco")


def test_java_delete_block():
    [block] = lf.scan_blocks(_one_log("valid_log_delete").read_bytes())
    assert block.block_type == lf.DELETE_BLOCK and block.instant_time == "20250618054714114"
    assert deleted_records(block) == [
        DeletedRecord("e96c4396-3fad-413a-a942-4cb36106d721", "city=san_francisco", 0),
        DeletedRecord("9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "city=san_francisco", 0),
        DeletedRecord("334e26e9-8355-45cc-97c6-c31daf0df330", "city=san_francisco", 0)]


def test_java_rollback_block():
    data = _one_log("valid_log_rollback").read_bytes()
    [block] = lf.scan_blocks(data)
    assert len(data) == 105 and block.block_type == lf.COMMAND_BLOCK and block.content == b""
    assert block.header == {lf.INSTANT_TIME: "20250126040936578", lf.COMMAND_BLOCK_TYPE: "0",
                            lf.TARGET_INSTANT_TIME: "20250126040826878"}


# -- framing ----------------------------------------------------------------------------------------
def test_truncated_block_is_corrupt_and_the_next_block_still_reads():
    first, second = avro_block(T1, [_row("a", 1, T1)]), avro_block(T2, [_row("b", 2, T2)])
    cut = first[:len(first) - 20]  # a crashed append: the block's tail never made it
    blocks = list(lf.scan_blocks(cut + second))
    assert blocks[0] == lf.CorruptBlock(0, len(cut))
    assert [b.instant_time for b in blocks[1:]] == [T2]
    assert list(lf.scan_blocks(cut)) == [lf.CorruptBlock(0, len(cut))]  # truncated at the end of the file
    with pytest.raises(InvalidInstantError, match="corrupt block at byte 0"):
        list(lf.read_blocks(cut + second, "archive"))  # the archived timeline refuses it


def test_block_with_wrong_reverse_pointer_is_corrupt():
    good = avro_block(T1, [_row("a", 1, T1)])
    bad = good[:-8] + struct.pack(">q", len(good))  # trailer must be blockSize + 6
    [corrupt, block] = lf.scan_blocks(bad + good)
    assert corrupt == lf.CorruptBlock(0, len(bad)) and block.instant_time == T1
    stats = effective_blocks([("log", bad + good)], committed(T1))
    assert [b.instant_time for b in stats.blocks] == [T1] and stats.corrupt_blocks == 1


def test_not_a_log_file():
    with pytest.raises(InvalidInstantError, match="no block magic"):
        list(lf.scan_blocks(b"PAR1 not a log file"))


# -- which blocks count -----------------------------------------------------------------------------
def test_rollback_block_drops_its_targets_blocks_and_uncommitted_blocks_are_skipped():
    log1 = avro_block(T1, [_row("a", 1, T1)]) + avro_block(T2, [_row("b", 1, T2)])
    log2 = rollback_block(T3, T2)
    log3 = avro_block(T4, [_row("c", 1, T4)])
    files = [("log.1", log1), ("log.2", log2), ("log.3", log3)]
    # T2 looks committed here: the rollback block alone keeps its rows out.
    assert [b.instant_time for b in effective_blocks(files, committed(T1, T2, T4)).blocks] == [T1, T4]
    # T4 is not committed (pending or failed): its block is skipped.
    assert [b.instant_time for b in effective_blocks(files, committed(T1, T2)).blocks] == [T1]
    # Time travel to T1.
    assert [b.instant_time for b in effective_blocks(files, committed(T1, T2, T4, as_of=T1)).blocks] == [T1]


# -- merging -----------------------------------------------------------------------------------------
def _merged(base_rows, logs, ordering="ts"):
    base = pa.Table.from_pylist(base_rows, schema=ARROW) if base_rows is not None else None
    blocks = [b for data in logs for b in lf.scan_blocks(data)]
    out = merge_slice(base, blocks, ARROW, ordering)
    return sorted((r["id"], r["ts"], r["_hoodie_commit_time"]) for r in out.to_pylist())


def test_event_time_merge():
    base = [_row("a", 5, T1), _row("b", 5, T1), _row("c", 5, T1), _row("z", 9, T1)]
    logs = [parquet_block(T2, [_row("a", 6, T2), _row("b", 4, T2), _row("d", 1, T2)]),
            avro_block(T3, [_row("c", 5, T3)])]
    # a: larger ordering wins; b: the base row's larger value stays; c: a tie goes to the later write;
    # z: no log names it.
    assert _merged(base, logs) == [("a", 6, T2), ("b", 5, T1), ("c", 5, T3), ("d", 1, T2), ("z", 9, T1)]


def test_commit_time_merge_without_ordering_field():
    base = [_row("a", 5, T1), _row("b", 5, T1)]
    logs = [avro_block(T2, [_row("a", 1, T2)])]
    assert _merged(base, logs, ordering=None) == [("a", 1, T2), ("b", 5, T1)]


def test_deletes():
    base = [_row("a", 5, T1), _row("b", 5, T1), _row("c", 5, T1)]
    logs = [delete_block(T2, [("a", 0), ("b", 9), ("c", 1)]), avro_block(T3, [_row("a", 1, T3)])]
    # a: a delete without ordering wins, and the later write brings the key back; b: the delete's larger
    # ordering wins; c: its smaller ordering loses to the base row.
    assert _merged(base, logs) == [("a", 1, T3), ("c", 5, T1)]


def test_slice_of_logs_only():
    assert _merged(None, [avro_block(T1, [_row("a", 1, T1), _row("a", 2, T1)])]) == [("a", 2, T1)]
    assert _merged(None, []) == []


def test_avro_block_of_every_column_type():
    """Avro data blocks decode the types Spark writes through Hudi: decimal as fixed, date, timestamp-micros,
    bytes, arrays of records, maps, nested records (the Java samples' schema shapes)."""
    ns = "hoodie.t.t_record"
    schema = {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"], "default": None},
        {"name": "decimalField", "type": [{"type": "fixed", "name": "fixed", "namespace": f"{ns}.decimalField",
                                           "size": 5, "logicalType": "decimal", "precision": 10, "scale": 5},
                                          "null"]},
        {"name": "dateField", "type": [{"type": "int", "logicalType": "date"}, "null"]},
        {"name": "timestampField", "type": [{"type": "long", "logicalType": "timestamp-micros"}, "null"]},
        {"name": "binaryField", "type": ["bytes", "null"]},
        {"name": "arrayField", "type": [{"type": "array", "items": [{"type": "record", "name": "arrayField",
                                                                     "namespace": ns, "fields": [
                                                                         {"name": "f1", "type": ["string", "null"]}]},
                                                                    "null"]}, "null"]},
        {"name": "mapField", "type": [{"type": "map", "values": ["long", "null"]}, "null"]},
        {"name": "structField", "type": [{"type": "record", "name": "structField", "namespace": ns, "fields": [
            {"name": "child", "type": [{"type": "record", "name": "child", "namespace": f"{ns}.structField",
                                        "fields": [{"name": "x", "type": ["double", "null"]}]}, "null"]}]},
                                         "null"]},
    ]}
    row = {"_hoodie_record_key": "k", "decimalField": Decimal("12345.67891"), "dateField": dt.date(2023, 4, 1),
           "timestampField": dt.datetime(2023, 4, 1, 12, 1, tzinfo=dt.timezone.utc), "binaryField": b"xy",
           "arrayField": [{"f1": "r"}, None], "mapField": {"a": 1}, "structField": {"child": {"x": 1.5}}}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), row)
    content = struct.pack(">iii", 3, 1, len(buf.getvalue())) + buf.getvalue()
    [block] = lf.scan_blocks(lf.encode_block(lf.AVRO_DATA_BLOCK, {lf.INSTANT_TIME: T1,
                                                                 lf.SCHEMA: json.dumps(schema)}, content))
    [out] = data_rows(block, arrow_schema_from_avro(schema)).to_pylist()
    assert out == {**row, "mapField": [("a", 1)]}


def test_pending_compaction_logs_extend_the_slice_before_it(tmp_path):
    """Logs named after a compaction still pending belong, for readers, to the slice before it (Java's view
    merges the two); once the compaction's commit completes they form the new slice with its base file."""
    storage = Storage(str(tmp_path))
    for name in (f"{T1}.deltacommit", f"{T2}.deltacommit", f"{T3}.compaction.requested", f"{T4}.deltacommit"):
        storage.write_bytes(f".hoodie/{name}", b"{}")
    storage.write_bytes(f"p/{FID}_0-1-1_{T1}.parquet", b"x")
    storage.write_bytes(f"p/.{FID}_{T1}.log.1_0-2-2", b"x")  # deltacommit T2
    storage.write_bytes(f"p/.{FID}_{T3}.log.1_0-4-4", b"x")  # deltacommit T4, after compaction T3 was planned
    storage.write_bytes(f"p/{FID}_0-3-3_{T3}.parquet", b"x")  # the compaction's base file, not committed yet

    [s] = FileSystemView.load(storage, Timeline.load(storage)).latest_file_slices()
    assert (s.base_instant_time, s.base_file.instant_time) == (T1, T1)
    assert [f.file_name for f in s.log_files] == [f".{FID}_{T1}.log.1_0-2-2", f".{FID}_{T3}.log.1_0-4-4"]

    storage.write_bytes(f".hoodie/{T3}.commit", b"{}")  # compaction completed
    [s] = FileSystemView.load(storage, Timeline.load(storage)).latest_file_slices()
    assert (s.base_instant_time, s.base_file.file_name) == (T3, f"{FID}_0-3-3_{T3}.parquet")
    assert [f.file_name for f in s.log_files] == [f".{FID}_{T3}.log.1_0-4-4"]


def test_block_of_another_log_format_version_is_an_error():
    good = avro_block(T1, [_row("a", 1, T1)])
    other = good[:14] + struct.pack(">i", 2) + good[18:]  # a whole, well-framed block of format version 2
    with pytest.raises(InvalidInstantError, match="unsupported log format version 2"):
        list(lf.scan_blocks(other))

"""One file group's log append in a deltacommit task (no Spark): the upserts go into a data block and the
deletes into one delete block after it, each with all and only its records; a batch without deletes writes no
delete block; the write stat counts them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hoodpy.file_group import log_writer
from hoodpy.file_group.log_file import data_rows, deleted_records
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.schema.avro import avro_schema_from_arrow, avro_schema_to_json
from hoodpy.timeline import log_format as lf
from hoodpy.write.log_append import AppendContext, LogSlice, append_file_group
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, MergeContext

DATA = pa.schema([pa.field("id", pa.string()), pa.field("v", pa.int64())])
INSTANT = "20261126190000000"


def _incoming(rows: list[tuple[str, int, int]]) -> pa.Table:
    keys, values, ops = zip(*rows)
    return pa.table({"id": list(keys), "v": list(values), RECORD_KEY: list(keys), PARTITION_PATH: ["p"] * len(rows),
                     OP: pa.array(ops, pa.int8()), TARGET_FILE_ID: ["fg"] * len(rows)})


def _append(tmp_path: Path, rows) -> tuple[list[lf.LogBlock], dict]:
    schema_json = avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(DATA, "t")))
    ctx = AppendContext(merge=MergeContext(base_uri=str(tmp_path), instant_time=INSTANT, data_schema=DATA),
                        schema_json=schema_json)
    [stat] = append_file_group(ctx, "p", "fg", LogSlice("20261126180000000"), _incoming(rows)).to_pylist()
    [log] = (tmp_path / "p").glob(".fg_20261126180000000.log.1_*")
    return list(lf.read_blocks(log.read_bytes())), stat


def test_upserts_and_deletes_go_to_a_data_block_then_a_delete_block(tmp_path):
    blocks, stat = _append(tmp_path, [("a", 1, OP_UPSERT), ("b", 0, OP_DELETE), ("c", 3, OP_UPSERT),
                                      ("d", 0, OP_DELETE)])
    assert [b.block_type for b in blocks] == [lf.AVRO_DATA_BLOCK, lf.DELETE_BLOCK]
    data = data_rows(blocks[0], pa.schema([pa.field(RECORD_KEY, pa.string()), *DATA]))
    assert data.to_pylist() == [{RECORD_KEY: "a", "id": "a", "v": 1}, {RECORD_KEY: "c", "id": "c", "v": 3}]
    assert [(d.record_key, d.partition_path) for d in deleted_records(blocks[1])] == [("b", "p"), ("d", "p")]
    assert (stat["num_writes"], stat["num_deletes"], stat["num_update_writes"]) == (2, 2, 2)


def test_upserts_only_write_one_data_block_with_every_record(tmp_path):
    blocks, stat = _append(tmp_path, [("a", 1, OP_UPSERT), ("b", 2, OP_UPSERT)])
    assert [b.block_type for b in blocks] == [lf.AVRO_DATA_BLOCK]
    data = data_rows(blocks[0], pa.schema([pa.field(RECORD_KEY, pa.string()), *DATA]))
    assert data.to_pylist() == [{RECORD_KEY: "a", "id": "a", "v": 1}, {RECORD_KEY: "b", "id": "b", "v": 2}]
    assert (stat["num_writes"], stat["num_deletes"]) == (2, 0)

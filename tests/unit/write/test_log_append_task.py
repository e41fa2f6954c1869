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
from hoodpy.write.task_combine import BATCH_SEQ

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


def _combining(tmp_path: Path, rows, target: LogSlice) -> tuple[AppendContext, pa.Table]:
    """A context that combines in the task (BUCKET index, batch uncombined) by ordering field ``v``, and the
    rows numbered in batch order as the writer numbers them."""
    schema_json = avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(DATA, "t")))
    ctx = AppendContext(merge=MergeContext(base_uri=str(tmp_path), instant_time=INSTANT, data_schema=DATA,
                                           combine_ordering=("v",)),
                        schema_json=schema_json)
    incoming = _incoming(rows)
    return ctx, incoming.append_column(BATCH_SEQ, pa.array(range(incoming.num_rows), pa.int64()))


def test_an_uncombined_batch_is_combined_per_key_in_the_task(tmp_path):
    """The largest ordering value wins, a tie goes to the later record, a delete competes like any record; the
    winners are written in batch order."""
    rows = [("a", 1, OP_UPSERT), ("b", 5, OP_UPSERT), ("a", 3, OP_UPSERT), ("c", 2, OP_UPSERT), ("a", 2, OP_UPSERT),
            ("c", 2, OP_DELETE), ("b", 4, OP_DELETE)]
    ctx, incoming = _combining(tmp_path, rows, LogSlice("20261126180000000"))
    [stat] = append_file_group(ctx, "p", "fg", LogSlice("20261126180000000"), incoming).to_pylist()
    [log] = (tmp_path / "p").glob(".fg_20261126180000000.log.1_*")
    blocks = list(lf.read_blocks(log.read_bytes()))
    assert [b.block_type for b in blocks] == [lf.AVRO_DATA_BLOCK, lf.DELETE_BLOCK]
    data = data_rows(blocks[0], pa.schema([pa.field(RECORD_KEY, pa.string()), *DATA]))
    assert data.to_pylist() == [{RECORD_KEY: "b", "id": "b", "v": 5}, {RECORD_KEY: "a", "id": "a", "v": 3}]
    assert [d.record_key for d in deleted_records(blocks[1])] == ["c"]  # tie with the upsert: the later wins
    assert (stat["num_writes"], stat["num_deletes"], stat["num_update_writes"]) == (2, 1, 2)


def test_a_new_group_writes_no_deletes(tmp_path):
    """A file group the write creates (a new bucket) has nothing to delete: its combined deletes are dropped, and
    a group left with none writes no file and no stat."""
    new = LogSlice(INSTANT, new_group=True)
    ctx, incoming = _combining(tmp_path, [("a", 1, OP_UPSERT), ("b", 1, OP_DELETE), ("a", 0, OP_DELETE)], new)
    [stat] = append_file_group(ctx, "p", "fg", new, incoming).to_pylist()
    [log] = (tmp_path / "p").glob(f".fg_{INSTANT}.log.1_*")
    blocks = list(lf.read_blocks(log.read_bytes()))
    assert [b.block_type for b in blocks] == [lf.AVRO_DATA_BLOCK]
    assert (stat["num_writes"], stat["num_inserts"], stat["num_deletes"]) == (1, 1, 0)

    ctx, only_deletes = _combining(tmp_path / "d", [("x", 1, OP_DELETE), ("y", 1, OP_DELETE)], new)
    assert append_file_group(ctx, "p", "fg2", new, only_deletes).num_rows == 0
    assert not (tmp_path / "d").exists()


def test_decimals_shipped_as_doubles_are_logged_exactly(tmp_path, monkeypatch):
    """The deltacommit's task gets decimals of precision <= 15 as doubles (decimal_transfer.ship), makes them
    decimal again before a file group's write sees them, and logs them exactly (extremes, negatives, a null)."""
    from decimal import Decimal

    from hoodpy.write import log_append

    seen = []
    real = log_append.write_file_group
    monkeypatch.setattr(log_append, "write_file_group", lambda c, rows: seen.append(rows.schema) or real(c, rows))

    data = pa.schema([pa.field("id", pa.string()), pa.field("amt", pa.decimal128(15, 2))])
    amounts = [Decimal("9999999999999.99"), Decimal("-9999999999999.99"), None, Decimal("0.01"), Decimal("-123.45")]
    keys = [f"k{i}" for i in range(len(amounts))]
    shipped = pa.table({"id": keys, "amt": pa.array([None if a is None else float(a) for a in amounts], pa.float64()),
                        RECORD_KEY: keys, PARTITION_PATH: ["p"] * len(keys),
                        OP: pa.array([OP_UPSERT] * len(keys), pa.int8()), TARGET_FILE_ID: ["fg"] * len(keys)})
    schema_json = avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(data, "t")))
    ctx = AppendContext(merge=MergeContext(base_uri=str(tmp_path), instant_time=INSTANT, data_schema=data),
                        slices={("p", "fg"): LogSlice("20261126180000000")}, schema_json=schema_json)
    [stat] = pa.Table.from_batches(list(log_append.write_partition(
        ctx, iter(shipped.to_batches(max_chunksize=2)), decimals=(("amt", 15, 2),)))).to_pylist()
    assert [s.field("amt").type for s in seen] == [pa.decimal128(15, 2)]
    [log] = (tmp_path / "p").glob(".fg_20261126180000000.log.1_*")
    [block] = lf.read_blocks(log.read_bytes())
    rows = data_rows(block, pa.schema([pa.field(RECORD_KEY, pa.string()), *data])).to_pylist()
    assert [(r[RECORD_KEY], r["amt"]) for r in rows] == list(zip(keys, amounts))
    assert stat["num_writes"] == len(keys)

"""The copy-on-write merge task of one merge bin (hoodpy.write.targets.merge_bin): the bin's rows, arriving in
batches with file groups interleaved, are split by file group and each group merged once, without Spark."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.file_group.naming import base_file_name, write_token
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, write_base_file
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT, TARGET_FILE_ID, ExistingFile, MergeContext
from hoodpy.write.targets import MERGE_BIN, merge_bin

OLD, NEW = "20250101000000000", "20250202000000000"
STORED = "0b1c2d3e-0000-4000-8000-000000000000-0"  # a file group with a base file
FRESH = "9f8e7d6c-0000-4000-8000-000000000000-0"  # a new file group (inserts only)
DATA = pa.schema([pa.field("v", pa.int64())])
OPTIONS = BaseFileOptions(compression="snappy", bloom_num_entries=100)


def _stored_file(storage: Storage, partition: str, keys: list[str]) -> str:
    name = f"{partition}/{base_file_name(STORED, write_token(0, 0, 0), OLD)}"
    rows = add_meta_columns(pa.table({"v": pa.array(range(len(keys)), pa.int64())}), pa.array(keys), partition, OLD)
    rows = finalize(rows, pa.array([True] * len(keys)), instant_time=OLD, file_name=name.rsplit("/", 1)[1],
                    task_partition=0)
    write_base_file(storage, name, rows, OPTIONS)
    return name


def _batch(rows: list[tuple[str, str, int, str, int]]) -> pa.RecordBatch:
    """(key, partition, value, target file id, op) rows of one Arrow batch as Spark sends a bin."""
    return pa.RecordBatch.from_pydict({
        RECORD_KEY: pa.array([r[0] for r in rows], pa.string()),
        PARTITION_PATH: pa.array([r[1] for r in rows], pa.string()),
        OP: pa.array([r[4] for r in rows], pa.int32()),
        "v": pa.array([r[2] for r in rows], pa.int64()),
        TARGET_FILE_ID: pa.array([r[3] for r in rows], pa.string()),
        MERGE_BIN: pa.array([7] * len(rows), pa.int32()),
    })


def test_a_bin_of_two_interleaved_file_groups_merges_each_once(tmp_path):
    storage = Storage(str(tmp_path))
    old = _stored_file(storage, "p=1", ["a", "b", "c"])
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA,
                       existing={("p=1", STORED): ExistingFile(old, OLD)}, options=OPTIONS)
    batches = [_batch([("b", "p=1", 20, STORED, OP_UPSERT), ("x", "p=2", 90, FRESH, OP_UPSERT)]),
               _batch([("y", "p=2", 91, FRESH, OP_UPSERT), ("c", "p=1", 0, STORED, OP_DELETE),
                       ("z", "p=1", 92, STORED, OP_UPSERT)])]
    stats = pa.Table.from_batches(list(merge_bin(ctx, iter(batches)))).to_pylist()
    by_group = {(s["partition_path"], s["file_id"]): s for s in stats}
    assert sorted(by_group) == [("p=1", STORED), ("p=2", FRESH)]  # one stats row per group, none twice
    updated, created = by_group[("p=1", STORED)], by_group[("p=2", FRESH)]
    assert (updated["num_writes"], updated["num_update_writes"], updated["num_inserts"], updated["num_deletes"]) \
        == (3, 1, 1, 1)
    assert (created["num_writes"], created["num_inserts"], created["prev_commit"]) == (2, 2, "null")
    rewritten = pq.read_table(str(tmp_path / updated["path"]))
    assert rewritten.column(RECORD_KEY).to_pylist() == ["a", "b", "z"]
    assert rewritten.column("v").to_pylist() == [0, 20, 92]
    fresh = pq.read_table(str(tmp_path / created["path"]))
    assert sorted(fresh.column(RECORD_KEY).to_pylist()) == ["x", "y"]
    assert set(fresh.column(PARTITION_PATH).to_pylist()) == {"p=2"}


def test_an_empty_bin_writes_nothing(tmp_path):
    ctx = MergeContext(base_uri=str(tmp_path), instant_time=NEW, data_schema=DATA, options=OPTIONS)
    assert list(merge_bin(ctx, iter([]))) == []
    assert list(merge_bin(ctx, iter([_batch([])]))) == []
    assert not any(tmp_path.iterdir())

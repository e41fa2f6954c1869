"""A global index's batch split on the driver (hoodpy.write.global_targets.split): keys found where the batch
names them update there; found elsewhere they move (old side marked, new side an insert) only with moves on,
else update where they live; deletes go where the key lives; keys not found are inserts, unless deleted."""

from __future__ import annotations

import pyarrow as pa

from hoodpy.index.base import LOC_FILE_ID, LOC_PARTITION
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.global_targets import MOVED_OUT, split
from hoodpy.write.merge import OP, OP_DELETE, OP_UPSERT

KEYS = pa.table({
    RECORD_KEY: ["same", "moves", "gone", "gone-elsewhere", "new", "never"],
    PARTITION_PATH: ["a", "b", "a", "a", "c", "a"],
    OP: [OP_UPSERT, OP_UPSERT, OP_DELETE, OP_DELETE, OP_UPSERT, OP_DELETE],
})
LOCATED = pa.table({
    RECORD_KEY: ["moves", "same", "gone", "gone-elsewhere"],
    LOC_PARTITION: ["a", "a", "a", "b"],
    LOC_FILE_ID: ["f1", "f1", "f1", "f2"],
})


def _rows(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def test_moves_on_a_key_found_elsewhere_leaves_its_file_group_and_is_inserted_where_named():
    plan = split(KEYS, LOCATED, moves=True)
    assert plan.located.column_names == [RECORD_KEY, PARTITION_PATH, LOC_PARTITION, LOC_FILE_ID, MOVED_OUT]
    assert _rows(plan.located) == [("gone", "a", "a", "f1", False), ("gone-elsewhere", "a", "b", "f2", False),
                                   ("moves", "b", "a", "f1", True), ("same", "a", "a", "f1", False)]
    assert _rows(plan.new) == [("moves", "b"), ("new", "c")]


def test_moves_off_a_key_found_elsewhere_is_updated_where_it_lives():
    plan = split(KEYS, LOCATED, moves=False)
    assert [r[4] for r in _rows(plan.located)] == [False] * 4
    assert ("moves", "b", "a", "f1", False) in _rows(plan.located)
    assert _rows(plan.new) == [("new", "c")]


def test_nothing_located_every_upsert_is_new():
    empty = LOCATED.slice(0, 0)
    plan = split(KEYS, empty, moves=True)
    assert plan.located.num_rows == 0
    assert _rows(plan.new) == [("moves", "b"), ("new", "c"), ("same", "a")]

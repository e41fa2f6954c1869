"""bulk_insert's file planning and per-task file writing (hoodpy.write.bulk_insert), without Spark."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.bulk_insert import BULK_FILE, BulkInsertContext, bulk_insert_partition, file_task_labels, plan_files
from hoodpy.write.merge import MergeContext
from hoodpy.write.task_placement import spark_partition_of


def _keys(partition: str, n: int) -> list[str]:
    return [f"{partition}-{i:05d}" for i in range(n)]


def _assign(plan, partition: str, key: str) -> int:
    (hit,) = [f.index for f in plan if f.partition_path == partition and (f.low is None or key >= f.low)
              and (f.high is None or key < f.high)]
    return hit


def test_plan_cuts_full_files_and_one_remainder_per_partition_at_sample_bounds() -> None:
    counts = {"a": 2350, "b": 40, "c": 1000}
    rng = random.Random(3)
    every = {p: _keys(p, n) for p, n in counts.items()}
    sampled = [(p, k) for p, keys in every.items() for k in keys if rng.random() < 0.2]
    sample = pa.table({PARTITION_PATH: [p for p, _ in sampled], RECORD_KEY: [k for _, k in sampled]})
    plan = plan_files(counts, sample, records_per_file=500)
    assert [f.index for f in plan] == list(range(len(plan)))
    sizes: dict[str, list[int]] = {}
    for p, keys in every.items():
        per_file: dict[int, int] = {}
        for k in keys:  # every key falls in exactly one planned range of its partition
            i = _assign(plan, p, k)
            per_file[i] = per_file.get(i, 0) + 1
        sizes[p] = [per_file[i] for i in sorted(per_file)]
    assert len(sizes["a"]) == 5 and all(400 <= n <= 600 for n in sizes["a"][:4]), sizes  # 4 x 500 + 350
    assert sizes["b"] == [40]
    assert len(sizes["c"]) == 2 and all(400 <= n <= 600 for n in sizes["c"]), sizes


def test_a_partition_the_sample_missed_gets_one_unbounded_file() -> None:
    plan = plan_files({"a": 10, "z": 5000}, pa.table({PARTITION_PATH: ["a"], RECORD_KEY: ["a-1"]}), 100)
    assert [(f.partition_path, f.low, f.high) for f in plan] == [("a", None, None), ("z", None, None)]


def test_a_task_writes_one_file_per_planned_file_and_partition(tmp_path) -> None:
    # Sorted as the write sorts: planned file, partition path, record key (null: no planned file).
    rows = [(None, "b", "b-9"), (0, "a", "a-1"), (0, "a", "a-2"), (1, "a", "a-3"), (2, "b", "b-1")]
    batch = pa.RecordBatch.from_pydict({BULK_FILE: pa.array([r[0] for r in rows], pa.int32()),
                                        PARTITION_PATH: [r[1] for r in rows], RECORD_KEY: [r[2] for r in rows],
                                        "v": list(range(len(rows)))})
    ctx = BulkInsertContext(MergeContext(base_uri=str(tmp_path), instant_time="20240101000000000",
                                         data_schema=pa.schema([("v", pa.int64())])))
    stats = pa.Table.from_batches(list(bulk_insert_partition(ctx, iter([batch])))).to_pylist()
    written = []
    for s in stats:
        keys = pq.read_table(tmp_path / s["path"], columns=[RECORD_KEY]).column(RECORD_KEY).to_pylist()
        assert s["num_writes"] == len(keys)
        written.append((s["partition_path"], keys))
    assert written == [("b", ["b-9"]), ("a", ["a-1", "a-2"]), ("a", ["a-3"]), ("b", ["b-1"])]


def test_a_null_key_the_validation_did_not_see_fails_the_task(tmp_path) -> None:
    """bulk_insert's validation job evaluates the batch apart from the write job: the write checks again."""
    import pytest

    from hoodpy.errors import InvalidRecordError
    from hoodpy.write.merge import INVALID_KEY

    batch = pa.RecordBatch.from_pydict({RECORD_KEY: ["k1", ""], PARTITION_PATH: ["", ""], INVALID_KEY: [False, True],
                                        "v": [1, 2]})
    ctx = BulkInsertContext(MergeContext(base_uri=str(tmp_path), instant_time="20240101000000000",
                                         data_schema=pa.schema([("v", pa.int64())])))
    with pytest.raises(InvalidRecordError, match="1 record"):
        list(bulk_insert_partition(ctx, iter([batch])))
    assert not list(tmp_path.rglob("*.parquet"))


def test_planned_files_go_to_consecutive_tasks_by_their_labels() -> None:
    # One file a task: file i lands in Spark partition i of repartition(n, label).
    assert [spark_partition_of(v, 7) for v in file_task_labels(7, 7)] == list(range(7))
    # Fewer tasks than files: consecutive files share a task (their sorted rows stay in plan order), balanced.
    tasks = [spark_partition_of(v, 3) for v in file_task_labels(8, 3)]
    assert tasks == sorted(tasks) and sorted(set(tasks)) == [0, 1, 2]
    assert max(tasks.count(t) for t in range(3)) - min(tasks.count(t) for t in range(3)) <= 1
    # More tasks than files: no empty task is asked for.
    assert [spark_partition_of(v, 2) for v in file_task_labels(2, 8)] == [0, 1]

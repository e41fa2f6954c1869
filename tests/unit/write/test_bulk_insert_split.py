"""bulk_insert's per-task file cutting (hoodpy.write.bulk_insert), without Spark."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.bulk_insert import BulkInsertContext, bulk_insert_partition
from hoodpy.write.merge import MergeContext


def _write(tmp_path, rows_per_partition: dict[str, int], records_per_file: int) -> dict[str, list[int]]:
    keys, parts = [], []
    for partition, n in rows_per_partition.items():
        keys += [f"{partition}-{i:04d}" for i in range(n)]
        parts += [partition] * n
    batch = pa.RecordBatch.from_pydict({RECORD_KEY: keys, PARTITION_PATH: parts, "v": list(range(len(keys)))})
    ctx = BulkInsertContext(MergeContext(base_uri=str(tmp_path), instant_time="20240101000000000",
                                         data_schema=pa.schema([("v", pa.int64())])), records_per_file)
    stats = pa.Table.from_batches(list(bulk_insert_partition(ctx, iter([batch])))).to_pylist()
    out: dict[str, list[int]] = {}
    for s in stats:
        assert pq.read_metadata(tmp_path / s["path"]).num_rows == s["num_writes"]
        out.setdefault(s["partition_path"], []).append(s["num_writes"])
    return out


def test_a_task_over_the_file_size_splits_evenly_not_into_a_remainder(tmp_path) -> None:
    assert _write(tmp_path, {"a": 23, "b": 11, "c": 10, "d": 1}, records_per_file=10) == {
        "a": [8, 8, 7], "b": [6, 5], "c": [10], "d": [1]}


def test_a_null_key_the_validation_did_not_see_fails_the_task(tmp_path) -> None:
    """bulk_insert's validation job evaluates the batch apart from the write job: the write checks again."""
    import pytest

    from hoodpy.errors import InvalidRecordError
    from hoodpy.write.merge import INVALID_KEY

    batch = pa.RecordBatch.from_pydict({RECORD_KEY: ["k1", ""], PARTITION_PATH: ["", ""], INVALID_KEY: [False, True],
                                        "v": [1, 2]})
    ctx = BulkInsertContext(MergeContext(base_uri=str(tmp_path), instant_time="20240101000000000",
                                         data_schema=pa.schema([("v", pa.int64())])), 10)
    with pytest.raises(InvalidRecordError, match="1 record"):
        list(bulk_insert_partition(ctx, iter([batch])))
    assert not list(tmp_path.rglob("*.parquet"))

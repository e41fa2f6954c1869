"""A write that fails leaves nothing behind, even when one of its tasks was still writing: every file a task
creates is marked first (``.hoodie/.temp/<instant>``, Java's direct markers); a bulk_insert refused in its
tasks leaves the table byte for byte as it was; a file a task of the failed job marked and wrote after the
abort (simulated here) is invisible to hoodpy and hudi-rs and is deleted, with its marker folder, by the next
write, whose rows are then exactly the expected ones in both readers."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hoodpy_spark_helpers import data_files, hudi_rs_rows, rows, tree

from hoodpy.errors import InvalidRecordError
from hoodpy.file_group.markers import create_marker, marker_folders
from hoodpy.file_group.naming import LogFileName, base_file_name, new_file_id
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import new_instant_time
from hoodpy.write.base_file import BaseFileOptions, write_base_file

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
COLUMNS = ["id", "p", "ts", "v"]


def _table(spark, path: str, table_type: str) -> HoodieTable:
    t = HoodieTable.create(spark, path, table_name="aborted", record_key_fields=["id"], partition_fields=["p"],
                           table_type=table_type)
    t.upsert(spark.createDataFrame([(i, "ab"[i % 2], 1, f"v{i}") for i in range(6)], DDL))
    return t


def _expected(updates: dict[int, tuple]) -> dict[int, tuple]:
    return {**{i: ("ab"[i % 2], 1, f"v{i}") for i in range(6)}, **updates}


def _late_base_file(path: str, instant: str) -> str:
    """A base file a task of the aborted write ``instant`` marked and wrote after the abort: a committed file's
    rows under a new file id of that instant."""
    storage = Storage(path)
    source = next(f for f in data_files(path) if f.startswith("a/"))
    rel = f"a/{base_file_name(new_file_id(), '1-0-1', instant)}"
    write_base_file(storage, rel, pq.read_table(storage.full_path(source)), BaseFileOptions())
    return rel


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_file_written_after_the_abort_is_invisible_and_the_next_write_deletes_it(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    t = _table(spark, path, table_type)
    before = tree(path)
    bad = spark.createDataFrame([(10, "a", 2, "x"), (None, "b", 2, "y")], DDL)
    with pytest.raises(InvalidRecordError, match="null or empty record key"):
        t.bulk_insert(bad)  # refused in its write tasks (no ordering field: no validation job first)
    assert tree(path) == before  # no marker folder, no file, no instant left

    aborted = new_instant_time(after=t.timeline.latest_instant_time())
    late = [_late_base_file(path, aborted)]
    if table_type == "MERGE_ON_READ":  # and a log file it began, cut short
        storage = Storage(path)
        slice_ = next(s for s in t.file_system_view().latest_file_slices() if s.partition_path == "b")
        name = LogFileName(slice_.file_id, slice_.base_instant_time, 9, "1-0-1").name
        create_marker(storage, aborted, "b", name)
        storage.write_bytes(f"b/{name}", b"#HUDI#")
        late.append(f"b/{name}")
    assert marker_folders(Storage(path)) == [aborted]
    assert rows(t.read(), *COLUMNS) == sorted((k, *v) for k, v in _expected({}).items())
    if table_type == "COPY_ON_WRITE":
        assert hudi_rs_rows(path, COLUMNS) == _expected({})

    t.upsert(spark.createDataFrame([(0, "a", 2, "u0"), (7, "b", 2, "v7")], DDL))
    assert not any((Path(path) / f).exists() for f in late)
    assert marker_folders(Storage(path)) == []
    expected = _expected({0: ("a", 2, "u0"), 7: ("b", 2, "v7")})
    assert rows(t.read(), *COLUMNS) == sorted((k, *v) for k, v in expected.items())
    assert hudi_rs_rows(path, COLUMNS) == expected

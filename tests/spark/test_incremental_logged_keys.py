"""Incremental reads of merge-on-read slices whose base file is older than the window: only the keys the logs
name are read (merged with their base rows), not the base file's other rows, and the rows are still those
of the merged slice filtered by commit time (a stale log record that loses its merge is not a change)."""

from __future__ import annotations

import pytest

from hoodpy.meta_fields import COMMIT_TIME
from hoodpy.read.query import CommitWindow
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.spark]

DDL = "id int, name string, ts long, city string"


def _rows(df):
    return sorted((r["id"], r["name"], r["ts"], r[COMMIT_TIME]) for r in df.collect())


def test_window_after_the_base_file_reads_only_logged_keys(spark, tmp_path):
    path = str(tmp_path / "mor")
    table = HoodieTable.create(spark, path, table_name="mor", record_key_fields=["id"], precombine_field="ts",
                               table_type="MERGE_ON_READ", options={"hoodie.parquet.small.file.limit": "0"})
    base = table.insert(spark.createDataFrame([(i, f"n{i}", 1, "sf") for i in range(1, 7)], DDL)).instant_time
    # Key 1 updated (wins), key 2 stale (ts 0 < 1: loses its merge, no change), key 3 deleted.
    first = table.upsert(spark.createDataFrame([(1, "A", 5, "sf"), (2, "stale", 0, "sf")], DDL)).instant_time
    table.delete(spark.createDataFrame([(3, "n3", 1, "sf")], DDL))
    second = table.upsert(spark.createDataFrame([(4, "D", 7, "sf")], DDL)).instant_time
    table = HoodieTable.for_path(spark, path)
    slices = list(table.file_system_view().latest_file_slices())
    assert len(slices) == 1 and slices[0].base_file is not None and slices[0].log_files

    df = table.read_incremental(base)
    # No file of the scan is the base file: its rows come only through the merge of the keys the logs name.
    assert not [f for f in df.inputFiles() if f.endswith(".parquet")]
    expected = sorted((r["id"], r["name"], r["ts"], r[COMMIT_TIME]) for r in table.read().collect()
                      if r[COMMIT_TIME] in (first, second))
    assert _rows(df) == expected == [(1, "A", 5, first), (4, "D", 7, second)]
    assert _rows(table.read_incremental(first)) == [(4, "D", 7, second)]
    # A window holding the base file's commit reads its rows (through the base-file scan).
    whole = table.read_incremental("19700101000000000")
    assert [f for f in whole.inputFiles() if f.endswith(".parquet")]
    assert _rows(whole) == sorted((r["id"], r["name"], r["ts"], r[COMMIT_TIME]) for r in table.read().collect())


def test_commit_window_as_one_sql_predicate(spark):
    df = spark.createDataFrame([("20240101000000001",), ("20240101000000002",), ("20240101000000003",), (None,)],
                               f"{COMMIT_TIME} string")
    window = CommitWindow("20240101000000001", "20240101000000003",
                          frozenset({"20240101000000002", "20240101000000003"}), False, None)
    assert window.sql() == f"`{COMMIT_TIME}` IN ('20240101000000002', '20240101000000003')"
    assert sorted(r[0] for r in df.filter(window.column()).collect()) == ["20240101000000002", "20240101000000003"]
    archived = CommitWindow("000", "20240101000000003", frozenset({"20240101000000003"}), True, "20240101000000003")
    assert sorted(r[0] for r in df.filter(archived.column()).collect()) == [
        "20240101000000001", "20240101000000002", "20240101000000003"]
    assert df.filter(CommitWindow("1", "2", frozenset(), False, None).column()).count() == 0
    assert window.after("20240101000000001") and not window.after("20240101000000002")
    assert not archived.after("001")

"""Deletes: by key with partition fields, by key alone (found in any partition), and rows flagged
``_hoodie_is_deleted`` in an upsert batch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key, latest_files, rows

from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action, State

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"


@pytest.fixture(scope="module")
def deleted(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("delete") / "t")
    t = HoodieTable.create(spark, path, table_name="delete_t", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", hive_style_partitioning=True, options=SMALL_BLOOM)
    s = SimpleNamespace(t=t)
    s.c1 = t.upsert(spark.createDataFrame([(i, "abc"[i % 3], 1, f"v{i}") for i in range(12)], DDL))
    s.files1 = latest_files(t)

    # With partition fields: id 2 lives in c, so (2, "a") matches nothing; 999 does not exist. An ordering
    # value older than the stored one does not matter to the delete operation, nor does an unknown column.
    s.c2 = t.delete(spark.createDataFrame([(k, p, 0, "x") for k, p in ((0, "a"), (1, "b"), (2, "a"), (999, "a"))],
                                          "id int, p string, ts long, note string"))
    s.snap2 = by_key(t.read(), "p", "v")
    s.files2 = latest_files(t)

    # Key only: found wherever it lives.
    s.c3 = t.delete(spark.createDataFrame([(3,), (5,), (999,)], "id int"))
    s.snap3 = by_key(t.read(), "p", "v")

    # Flags in an upsert batch: a delete, an update, an insert and a delete of a key that does not exist.
    s.c4 = t.upsert(spark.createDataFrame(
        [(6, "a", 2, "gone", True), (7, "b", 2, "u7", False), (100, "c", 2, "n100", None),
         (998, "a", 2, "ghost", True)], DDL + ", _hoodie_is_deleted boolean"))
    s.snap4 = by_key(t.read(), "p", "v", "_hoodie_commit_time")
    s.columns4 = t.read().columns
    return s


def test_delete_by_key_and_partition(deleted):
    s = deleted
    assert set(s.snap2) == {str(i) for i in range(12)} - {"0", "1"}
    assert s.snap2["2"] == ("c", "v2")  # wrong partition given: not deleted
    assert (s.c2.num_deletes, s.c2.num_inserts, s.c2.num_update_writes) == (2, 0, 0)
    assert (s.c2.files_updated, s.c2.files_added) == (2, 0)
    assert sorted(st.partition_path for st in s.c2.metadata.write_stats) == ["p=a", "p=b"]
    assert s.files2[next(k for k in s.files1 if k[0] == "p=c")] == s.files1[next(k for k in s.files1
                                                                                  if k[0] == "p=c")]
    assert s.c2.metadata.operation_type == "DELETE"


def test_delete_by_key_alone_finds_any_partition(deleted):
    s = deleted
    assert set(s.snap3) == set(s.snap2) - {"3", "5"}
    assert (s.c3.num_deletes, s.c3.files_updated, s.c3.files_added) == (2, 2, 0)
    assert sorted(st.partition_path for st in s.c3.metadata.write_stats) == ["p=a", "p=c"]


def test_is_deleted_flag_in_upsert_batch(deleted):
    s = deleted
    t4 = s.c4.instant_time
    assert "6" not in s.snap4 and "998" not in s.snap4
    assert s.snap4["7"] == ("b", "u7", t4)
    assert s.snap4["100"] == ("c", "n100", t4)
    assert set(s.snap4) == (set(s.snap3) - {"6"}) | {"100"}
    assert (s.c4.num_deletes, s.c4.num_update_writes, s.c4.num_inserts) == (1, 1, 1)
    assert s.c4.metadata.operation_type == "UPSERT"
    # The flag is an instruction, not a column of the table.
    assert "_hoodie_is_deleted" not in s.columns4


def test_time_travel_before_a_delete_still_sees_the_rows(deleted):
    s = deleted
    before = rows(s.t.read(as_of=s.c1.instant_time), "id")
    assert before == [(i,) for i in range(12)]
    after_c2 = rows(s.t.read(as_of=s.c2.instant_time), "id")
    assert after_c2 == [(i,) for i in range(2, 12)]


def test_deletes_are_completed_commits(deleted):
    s = deleted
    timeline = s.t.timeline
    assert [(i.timestamp, i.action, i.state) for i in timeline.instants] == [
        (c.instant_time, Action.COMMIT, State.COMPLETED) for c in (s.c1, s.c2, s.c3, s.c4)]

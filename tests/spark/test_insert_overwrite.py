"""insert_overwrite replaces the batch's partitions, insert_overwrite_table the whole table; both are
replacecommits, and time travel to before them still returns the old rows."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, latest_files, rows, timeline_files

from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action, State

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"


@pytest.fixture(scope="module")
def overwritten(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("overwrite") / "t")
    t = HoodieTable.create(spark, path, table_name="overwrite_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    s = SimpleNamespace(t=t, path=path)
    s.c1 = t.upsert(spark.createDataFrame([(i, "abc"[i % 3], 1, f"v{i}") for i in range(12)], DDL))
    s.files1 = latest_files(t)
    s.rows1 = rows(t.read(), "id", "p", "v")

    # Replaces partition a; d is a new partition; b and c are left alone. Key 1 (in b) is written again
    # in a: insert_overwrite does no index lookup, so it now exists twice. Key 100 comes twice in the batch
    # and hoodie.combine.before.insert is off by default: both are written.
    s.c2 = t.insert_overwrite(spark.createDataFrame(
        [(100, "a", 2, "n100"), (101, "a", 2, "n101"), (1, "a", 2, "again1"), (200, "d", 2, "n200"),
         (100, "a", 3, "n100b")], DDL))
    s.files2 = latest_files(t)
    s.rows2 = rows(t.read(), "id", "p", "v")
    s.timeline2 = timeline_files(path)

    s.c3 = t.insert_overwrite_table(spark.createDataFrame([(300, "b", 3, "n300"), (301, "c", 3, "n301")], DDL))
    s.files3 = latest_files(t)
    s.rows3 = rows(t.read(), "id", "p", "v")
    s.as_of1 = rows(t.read(as_of=s.c1.instant_time), "id", "p", "v")
    s.as_of2 = rows(t.read(as_of=s.c2.instant_time), "id", "p", "v")
    s.instants = [(i.timestamp, i.action, i.state) for i in t.timeline.instants]
    return s


def _ids(files, partition):
    return sorted(fid for (p, fid) in files if p == partition)


def test_insert_overwrite_replaces_only_the_batch_partitions(overwritten):
    s = overwritten
    old = [r for r in s.rows1 if r[1] != "a"]
    new = [(1, "a", "again1"), (100, "a", "n100"), (100, "a", "n100b"), (101, "a", "n101"), (200, "d", "n200")]
    assert s.rows2 == sorted(old + new)
    # b and c keep their exact base files; a has a new file group instead of the old one.
    for key in s.files1:
        if key[0] != "a":
            assert s.files2[key] == s.files1[key]
    assert not set(_ids(s.files2, "a")) & set(_ids(s.files1, "a"))
    assert len(_ids(s.files2, "d")) == 1


def test_insert_overwrite_commit_lists_replaced_file_groups(overwritten):
    s = overwritten
    meta = s.c2.metadata
    assert meta.operation_type == "INSERT_OVERWRITE"
    replaced = {p: sorted(ids) for p, ids in (meta.partition_to_replace_file_ids or {}).items() if ids}
    assert replaced == {"a": _ids(s.files1, "a")}
    assert (s.c2.files_replaced, s.c2.files_added, s.c2.files_updated) == (1, 2, 0)
    assert (s.c2.num_inserts, s.c2.num_update_writes) == (5, 0)
    assert f"{s.c2.instant_time}.replacecommit" in s.timeline2
    assert f"{s.c2.instant_time}.replacecommit.requested" in s.timeline2
    assert f"{s.c2.instant_time}.replacecommit.inflight" in s.timeline2


def test_replaced_file_groups_leave_the_file_system_view(overwritten):
    s = overwritten
    view = s.t.file_system_view(as_of=s.c2.instant_time)
    live = {(fg.partition_path, fg.file_id) for fg in view.file_groups()}
    for fid in _ids(s.files1, "a"):
        assert ("a", fid) not in live
        assert view.is_replaced("a", fid)


def test_time_travel_before_overwrite_returns_old_rows(overwritten):
    s = overwritten
    assert s.as_of1 == s.rows1
    assert s.as_of2 == s.rows2


def test_insert_overwrite_table_replaces_everything(overwritten):
    s = overwritten
    assert s.rows3 == [(300, "b", "n300"), (301, "c", "n301")]
    meta = s.c3.metadata
    assert meta.operation_type == "INSERT_OVERWRITE_TABLE"
    replaced = {p: sorted(ids) for p, ids in (meta.partition_to_replace_file_ids or {}).items() if ids}
    assert replaced == {p: _ids(s.files2, p) for p in ("a", "b", "c", "d")}
    assert s.c3.files_replaced == len(s.files2)
    assert sorted(p for p, _ in s.files3) == ["b", "c"]


def test_overwrites_are_completed_replacecommits(overwritten):
    s = overwritten
    assert s.instants == [
        (s.c1.instant_time, Action.COMMIT, State.COMPLETED),
        (s.c2.instant_time, Action.REPLACECOMMIT, State.COMPLETED),
        (s.c3.instant_time, Action.REPLACECOMMIT, State.COMPLETED),
    ]

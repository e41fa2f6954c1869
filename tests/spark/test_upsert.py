"""Upserts: which file groups are rewritten, what carried-over rows keep, event-time ordering, combining
duplicates within a batch, and composite record keys."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key, data_files, latest_files, read_base_file, rows, stats_by_file

from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action, State

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
PARTS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def upserted(spark, tmp_path_factory):
    """A 4-partition table (one file group each) and four upserts on it, with what each left behind."""
    path = str(tmp_path_factory.mktemp("upsert") / "t")
    t = HoodieTable.create(spark, path, table_name="upsert_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    s = SimpleNamespace(t=t, path=path)

    s.c1 = t.upsert(spark.createDataFrame([(i, PARTS[i % 4], 1, f"v{i}") for i in range(40)], DDL))
    s.files1 = latest_files(t)
    s.snap1 = by_key(t.read(), "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name", "v")

    # Touches partitions a and b only: 3 updates in a, 1 update and 1 insert in b.
    s.c2 = t.upsert(spark.createDataFrame(
        [(0, "a", 2, "u0"), (4, "a", 2, "u4"), (8, "a", 2, "u8"), (1, "b", 2, "u1"), (101, "b", 2, "n101")], DDL))
    s.files2 = latest_files(t)
    s.disk2 = data_files(path)
    s.snap2 = by_key(t.read(), "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name", "v")
    s.incr2 = rows(t.read_incremental(s.c1.instant_time, s.c2.instant_time), "id", "v", "_hoodie_commit_time")

    # Event-time ordering in partition c: a stale update (ts 0 < 1), a tie (ts 1 == 1), duplicates of key 6
    # within the batch whose largest ordering value (9) sits in the middle, a stale delete (ts 0) of key 14
    # and a delete of key 18 at its stored ordering value.
    s.c3 = t.upsert(spark.createDataFrame(
        [(2, "c", 0, "stale", False), (10, "c", 1, "tie", False), (6, "c", 5, "five", False),
         (6, "c", 9, "nine", False), (6, "c", 7, "seven", False), (14, "c", 0, "late delete", True),
         (18, "c", 1, "delete", True)], DDL + ", _hoodie_is_deleted boolean"))
    s.snap3 = by_key(t.read(), "_hoodie_commit_time", "ts", "v")

    # The same stale update and stale delete with commit-time ordering: the latest write wins.
    s.c4 = t.upsert(spark.createDataFrame([(2, "c", 0, "stale-wins", False), (14, "c", 0, "late delete", True)],
                                          DDL + ", _hoodie_is_deleted boolean"),
                    options={"hoodie.write.record.merge.mode": "COMMIT_TIME_ORDERING"})
    s.snap4 = by_key(t.read(), "_hoodie_commit_time", "ts", "v")
    return s


def test_first_upsert_creates_one_file_group_per_partition(upserted):
    c1 = upserted.c1
    assert (c1.num_writes, c1.num_inserts, c1.num_update_writes, c1.files_added, c1.files_updated) == (
        40, 40, 0, 4, 0)
    assert sorted(p for p, _ in upserted.files1) == PARTS
    assert c1.metadata.operation_type == "UPSERT"


def test_upsert_rewrites_exactly_the_touched_file_groups(upserted):
    s = upserted
    touched = {fid for (p, fid) in s.files1 if p in ("a", "b")}
    assert (s.c2.files_updated, s.c2.files_added, s.c2.files_replaced) == (2, 0, 0)
    assert set(stats_by_file(s.c2)) == touched
    for stat in s.c2.metadata.write_stats:
        assert stat.prev_commit == s.c1.instant_time
    assert (s.c2.num_update_writes, s.c2.num_inserts, s.c2.num_deletes) == (4, 1, 0)
    assert s.c2.num_writes == 10 + 11  # every row of both rewritten files
    # On disk: the 4 first versions plus exactly 2 new ones (old versions stay until the cleaner runs).
    assert len(s.disk2) == 6
    assert sorted(f for f in s.disk2 if f.endswith(f"_{s.c2.instant_time}.parquet")) == sorted(
        s.files2[k] for k in s.files2 if k[0] in ("a", "b"))
    # Same file groups afterwards; untouched groups keep their exact base file, touched ones a new version.
    assert set(s.files2) == set(s.files1)
    for key, path in s.files1.items():
        if key[0] in ("a", "b"):
            assert s.files2[key] != path and s.files2[key].endswith(f"_{s.c2.instant_time}.parquet")
        else:
            assert s.files2[key] == path


def test_carried_over_rows_keep_commit_time_and_seqno(upserted):
    s = upserted
    changed = {"0", "4", "8", "1", "101"}
    carried = [k for k in s.snap1 if _partition_of(k) in ("a", "b") and k not in changed]
    assert len(carried) == 7 + 9  # rows of partitions a and b that the upsert did not change
    for k in carried:
        commit_time, seqno, file_name, v = s.snap2[k]
        assert (commit_time, seqno, v) == (s.snap1[k][0], s.snap1[k][1], s.snap1[k][3])
        assert commit_time == s.c1.instant_time
        # ... but they now live in (and name) the new version of their file group.
        assert file_name == s.files2[(_partition_of(k), file_name.split("_")[0])].rsplit("/", 1)[-1]
        assert file_name != s.snap1[k][2]
    for k in changed:
        commit_time, seqno, _, _ = s.snap2[k]
        assert commit_time == s.c2.instant_time
        assert seqno.startswith(s.c2.instant_time + "_")
    # Untouched partitions are byte-for-byte the same rows.
    for k in s.snap1:
        if _partition_of(k) in ("c", "d"):
            assert s.snap2[k] == s.snap1[k]


def _partition_of(key: str) -> str:
    return "b" if key == "101" else PARTS[int(key) % 4]


def test_incremental_read_returns_only_changed_records(upserted):
    s = upserted
    t2 = s.c2.instant_time
    assert s.incr2 == [(0, "u0", t2), (1, "u1", t2), (4, "u4", t2), (8, "u8", t2), (101, "n101", t2)]


def test_seqnos_unique_within_a_commit(upserted):
    s = upserted
    seqnos = [v[1] for v in s.snap2.values()]
    assert len(seqnos) == len(set(seqnos))
    # Every row of a rewritten file names that file.
    for (p, fid), path in s.files2.items():
        table = read_base_file(s.t, path)
        assert set(table.column("_hoodie_file_name").to_pylist()) == {path.rsplit("/", 1)[-1]}
        assert set(table.column("_hoodie_partition_path").to_pylist()) == {p}


def test_event_time_ordering_keeps_stored_record_with_larger_ordering_value(upserted):
    s = upserted
    assert s.snap3["2"] == (s.c1.instant_time, 1, "v2")  # the stale update (ts 0) lost
    assert s.snap3["10"] == (s.c3.instant_time, 1, "tie")  # equal ordering value: the incoming record wins
    assert s.c3.num_update_writes == 2  # key 10 and key 6; not the stale key 2
    assert s.c3.files_updated == 1 and s.c3.files_added == 0


def test_event_time_ordering_ignores_a_stale_delete(upserted):
    s = upserted
    assert s.snap3["14"] == (s.c1.instant_time, 1, "v14")  # the delete (ts 0) is older than the record
    assert "18" not in s.snap3  # a delete at an equal ordering value applies
    assert s.c3.num_deletes == 1


def test_duplicates_within_a_batch_largest_ordering_value_wins(upserted):
    s = upserted
    assert s.snap3["6"] == (s.c3.instant_time, 9, "nine")
    assert len(s.snap3) == 41 - 1  # key 6 once; key 18 deleted


def test_commit_time_ordering_lets_the_latest_write_win(upserted):
    s = upserted
    assert s.snap4["2"] == (s.c4.instant_time, 0, "stale-wins")
    assert "14" not in s.snap4
    assert (s.c4.num_update_writes, s.c4.num_deletes) == (1, 1)
    assert len(s.snap4) == 41 - 2


def test_timeline_has_four_completed_commits_and_nothing_pending(upserted):
    s = upserted
    timeline = s.t.timeline
    assert [(i.timestamp, i.action, i.state) for i in timeline.instants] == [
        (c.instant_time, Action.COMMIT, State.COMPLETED) for c in (s.c1, s.c2, s.c3, s.c4)]
    assert timeline.pending_writes() == []


# -- composite record keys ----------------------------------------------------------------------------

CDDL = "id int, name string, p string, ts long, v string"


@pytest.fixture(scope="module")
def composite(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("composite") / "t")
    t = HoodieTable.create(spark, path, table_name="composite_t", record_key_fields=["id", "name"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    c1 = t.upsert(spark.createDataFrame(
        [(1, "x", "a", 1, "1x"), (1, "y", "a", 1, "1y"), (2, "x", "a", 1, "2x"), (3, None, "a", 1, "3null"),
         (4, "", "a", 1, "4empty"), (5, "x", None, 1, "5nopart")], CDDL))
    snap1 = by_key(t.read(), "id", "name", "v")
    c2 = t.upsert(spark.createDataFrame(
        [(1, "y", "a", 2, "1y-new"), (1, "z", "a", 2, "1z"), (3, None, "a", 2, "3null-new"),
         (5, "x", None, 2, "5nopart-new")], CDDL))
    snap2 = by_key(t.read(), "id", "name", "v", "_hoodie_commit_time")
    return SimpleNamespace(t=t, c1=c1, c2=c2, snap1=snap1, snap2=snap2)


def test_composite_record_key_format(composite):
    assert composite.snap1 == {
        "id:1,name:x": (1, "x", "1x"),
        "id:1,name:y": (1, "y", "1y"),
        "id:2,name:x": (2, "x", "2x"),
        "id:3,name:__null__": (3, None, "3null"),
        "id:4,name:__empty__": (4, "", "4empty"),
        "id:5,name:x": (5, "x", "5nopart"),
    }
    keygen_class = composite.t.properties["hoodie.table.keygenerator.class"]
    assert keygen_class == "org.apache.hudi.keygen.ComplexKeyGenerator"


def test_upsert_by_composite_key(composite):
    c2 = composite.c2
    assert (c2.num_update_writes, c2.num_inserts, c2.files_updated, c2.files_added) == (3, 1, 2, 0)
    t1, t2 = composite.c1.instant_time, c2.instant_time
    assert composite.snap2 == {
        "id:1,name:x": (1, "x", "1x", t1),
        "id:1,name:y": (1, "y", "1y-new", t2),
        "id:1,name:z": (1, "z", "1z", t2),
        "id:2,name:x": (2, "x", "2x", t1),
        "id:3,name:__null__": (3, None, "3null-new", t2),
        "id:4,name:__empty__": (4, "", "4empty", t1),
        "id:5,name:x": (5, "x", "5nopart-new", t2),
    }


def test_null_partition_value_goes_to_the_default_partition(composite):
    got = rows(composite.t.read().filter("id = 5"), "_hoodie_partition_path", "p", "v")
    assert got == [("__HIVE_DEFAULT_PARTITION__", None, "5nopart-new")]

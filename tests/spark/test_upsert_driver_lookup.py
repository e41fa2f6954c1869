"""Keys located on the driver reach the merge: an update whose key the lookup finds in a later base file,
while earlier files it checked hold none of the batch's keys, must still update its row.

Regression: pyspark 4.0's createDataFrame(pa.Table) returns no rows when the table's leading chunks are
empty, which is how the per-file lookup results were concatenated; the update silently vanished.
"""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key, latest_files

from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"


def test_update_found_after_files_without_batch_keys_is_applied(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="lookup_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(1, "a", 1, "a1"), (5, "a", 1, "a5"), (2, "b", 1, "b2"), (4, "b", 1, "b4")], DDL))
    # Key 3 is new but inside partition a's file key range ("1".."5"), so that file is checked and holds
    # nothing; key 4 is found in partition b's file.
    result = t.upsert(spark.createDataFrame([(3, "a", 2, "a3"), (4, "b", 2, "b4-new")], DDL))
    assert (result.num_inserts, result.num_update_writes) == (1, 1)
    assert by_key(t.read(), "p", "v") == {"1": ("a", "a1"), "2": ("b", "b2"), "3": ("a", "a3"),
                                          "4": ("b", "b4-new"), "5": ("a", "a5")}


def test_mixed_batch_targets_decided_on_the_driver(spark, tmp_path):
    """Updates, inserts (into a small existing file group and a new partition), a delete of a stored key and
    a delete of an absent key, in one batch: each record reaches its file group, the absent delete none."""
    ddl = DDL + ", _hoodie_is_deleted boolean"
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="mixed_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(1, "a", 1, "a1", False), (2, "b", 1, "b2", False), (3, "a", 1, "a3", False),
                                    (4, "b", 1, "b4", False)], ddl))
    groups_before = set(latest_files(t))
    result = t.upsert(spark.createDataFrame([(1, "a", 2, "a1-new", False), (2, "b", 2, None, True),
                                             (9, "c", 2, None, True), (7, "a", 2, "a7", False),
                                             (8, "c", 2, "c8", False)], ddl))
    assert (result.num_inserts, result.num_update_writes, result.num_deletes) == (2, 1, 1)
    assert by_key(t.read(), "p", "v") == {"1": ("a", "a1-new"), "3": ("a", "a3"), "4": ("b", "b4"),
                                          "7": ("a", "a7"), "8": ("c", "c8")}
    new_groups = [fg for fg in latest_files(t) if fg not in groups_before]
    # Partition a's insert joined its small file group; only partition c got a new group.
    assert [fg[0].rsplit("=", 1)[-1] for fg in new_groups] == ["c"]


def test_batch_with_nondeterministic_keys_is_evaluated_once(spark, tmp_path):
    """A batch whose keys change on every evaluation (dbt snapshots key rows by md5(id || current_timestamp()))
    is written with the keys the lookup saw: the records are computed once for the lookup and the merge.

    Regression: the merge job re-evaluated the batch, its keys matched none of the driver's decisions, and
    the inserts were silently dropped."""
    from pyspark.sql import functions as F

    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="nondet_t", record_key_fields=["k"],
                           options=SMALL_BLOOM)
    t.upsert(spark.range(10).select(F.concat(F.lit("old-"), F.col("id")).alias("k"), F.col("id").cast("int")))
    # current_timestamp() is fixed per query execution, so every Spark job computes other keys.
    batch = spark.range(10).select(F.md5(F.concat_ws("|", F.col("id"), F.current_timestamp().cast("string")))
                                   .alias("k"), (F.col("id") + 100).cast("int").alias("id"))
    result = t.upsert(batch)
    assert (result.num_inserts, result.num_update_writes) == (10, 0)
    rows = t.read().select("_hoodie_record_key", "k", "id").collect()
    assert len(rows) == 20 and len({r.k for r in rows}) == 20
    assert sorted(r.id for r in rows) == list(range(10)) + list(range(100, 110))
    assert all(r._hoodie_record_key == r.k for r in rows)


def test_each_file_group_merges_in_its_own_task(spark, tmp_path):
    """Five touched file groups (three updated, two new partitions) are merged by five Spark tasks, one each
    (hash partitioning or AQE coalescing would put two in one task and leave a core idle), and the targets
    file the join read is gone once the commit completed."""
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="placed_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, p, 1, f"{p}{i}") for i, p in enumerate("abc")], DDL))
    sc = spark.sparkContext
    sc.setJobGroup("placement-test", "placement-test")
    try:
        result = t.upsert(spark.createDataFrame([(0, "a", 2, "a0-new"), (1, "b", 2, "b1-new"), (2, "c", 2, "c2-new"),
                                                 (3, "d", 2, "d3"), (4, "e", 2, "e4")], DDL))
    finally:
        sc.setJobGroup("", "")
    assert (result.files_updated, result.files_added) == (3, 2)
    tracker = sc.statusTracker()
    tasks = [info.numTasks for job in tracker.getJobIdsForGroup("placement-test")
             for stage in tracker.getJobInfo(job).stageIds if (info := tracker.getStageInfo(stage)) is not None]
    assert 5 in tasks, tasks
    assert by_key(t.read(), "p", "v") == {"0": ("a", "a0-new"), "1": ("b", "b1-new"), "2": ("c", "c2-new"),
                                          "3": ("d", "d3"), "4": ("e", "e4")}
    assert not list((tmp_path / "t" / ".hoodie" / ".temp").glob("*/*")), "targets file left behind"


def test_partition_labels_land_in_their_partitions(spark):
    """Spark's hash partitioner sends each label of task_placement.partition_labels to its own partition
    (guards against a Spark release changing the hash)."""
    from pyspark.sql import functions as F

    from hoodpy.write.task_placement import partition_labels

    for n in (1, 2, 5, 16, 61):
        df = spark.createDataFrame([(label, i) for i, label in enumerate(partition_labels(n))], "label int, i int")
        rows = df.repartition(n, "label").select("i", F.spark_partition_id().alias("p")).collect()
        assert sorted((r.i, r.p) for r in rows) == [(i, i) for i in range(n)]



def _jobs_and_tasks(sc, group: str) -> tuple[list[int], list[int]]:
    tracker = sc.statusTracker()
    jobs = sorted(tracker.getJobIdsForGroup(group))
    return jobs, [info.numTasks for job in jobs for stage in tracker.getJobInfo(job).stageIds
                  if (info := tracker.getStageInfo(stage)) is not None]


def test_a_batch_for_one_file_group_takes_its_target_as_a_constant(spark, tmp_path):
    """Every record of a batch bound for one file group (an update, a delete of a stored key, an insert into the
    partition's small file) goes there with no join, in one merge task. A
    batch with a delete of an absent key joins with its targets (one job more), and that delete reaches no file.
    The same key in another partition is left alone; the targets file is gone once each commit completed."""
    ddl = DDL + ", _hoodie_is_deleted boolean"
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="single_t", record_key_fields=["id"],
                           partition_fields=["p"], precombine_field="ts", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(1, "a", 1, "a1", False), (2, "a", 1, "a2", False), (3, "a", 1, "a3", False),
                                    (1, "b", 1, "b1", False)], ddl))
    before = latest_files(t)
    sc = spark.sparkContext
    results = []
    for group, batch in (("one-group", [(1, "a", 3, "a1-new", False), (2, "a", 2, None, True),
                                        (7, "a", 2, "a7", False)]),
                         ("absent-delete", [(3, "a", 4, "a3-new", False), (9, "a", 4, None, True)])):
        sc.setJobGroup(group, group)
        try:
            results.append(t.upsert(spark.createDataFrame(batch, ddl)))
        finally:
            sc.setJobGroup("", "")
        assert not list((tmp_path / "t" / ".hoodie" / ".temp").glob("*/*")), "targets file left behind"
    # Collect the keys, (a small table) sample the batch's record size, the one merge task; the join's broadcast
    # is a job of its own.
    (constant_jobs, constant_tasks), (joined_jobs, joined_tasks) = (_jobs_and_tasks(sc, g)
                                                                    for g in ("one-group", "absent-delete"))
    assert len(joined_jobs) == len(constant_jobs) + 1, (constant_jobs, joined_jobs)
    assert constant_tasks[-1] == joined_tasks[-1] == 1, (constant_tasks, joined_tasks)
    assert [(r.num_inserts, r.num_update_writes, r.num_deletes, r.files_updated, r.files_added)
            for r in results] == [(1, 1, 1, 1, 0), (0, 1, 0, 1, 0)]
    rows = sorted((r._hoodie_record_key, r.p, r.v) for r in t.read().collect())
    assert rows == [("1", "a", "a1-new"), ("1", "b", "b1"), ("3", "a", "a3-new"), ("7", "a", "a7")]
    after = latest_files(t)
    b_group = next(fg for fg in before if fg[0].endswith("b"))
    assert set(after) == set(before) and after[b_group] == before[b_group]  # a's group rewritten, b's untouched
    commits = Timeline.load(t.storage).completed_commits()
    assert [c.timestamp for c in commits][-2:] == [r.instant_time for r in results] and len(commits) == 3

"""A deltacommit whose records all go to one merge task (one file group touched, or one taking at least 80% of
them) gathers them there without a shuffle and joins them with their targets in that task: its tasks split their
rows by file group themselves (log_append.write_partition), so a shuffle by merge bin would write and read the
whole batch once more, in one more Spark job, and a broadcast of the targets one job more."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key
from spark_jobs import stage_names_by_job

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string"


def test_one_group_deltacommit_writes_without_a_shuffle(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="one_task_t", record_key_fields=["id"],
                           precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}") for i in range(6)], DDL))
    # Updates from the input partitions of a local batch, one file group: one log file of it per write.
    batch = spark.createDataFrame([(1, 2, "v1-new"), (4, 2, "v4-new"), (5, 2, "v5-new")], DDL)
    jobs = stage_names_by_job(spark, "one-task-upsert", lambda: t.upsert(batch))
    # The keys collected for the lookup, the write: no targets broadcast, no shuffle-map job, no shuffle stage.
    assert len(jobs) == 2, jobs
    assert all(len(stages) == 1 for stages in jobs), jobs
    deleted = stage_names_by_job(spark, "one-task-delete",
                                 lambda: t.delete(spark.createDataFrame([(2, 3, None)], DDL)))
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1-new",), "3": ("v3",), "4": ("v4-new",),
                                     "5": ("v5-new",)}
    assert len(deleted) == 2, deleted
    logs = sorted(p.name for p in (tmp_path / "t").glob(".*.log.*"))
    assert len(logs) == 2 and len({name.split("_", 1)[0] for name in logs}) == 1, logs  # one group, 2 versions


def test_two_groups_still_get_a_task_each(spark, tmp_path):
    """Updates to one file group and inserts into a new one (small-file limit off): two merge tasks, as
    before, and each group's rows where they belong."""
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="two_task_t", record_key_fields=["id"],
                           precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}") for i in range(4)], DDL))
    jobs = stage_names_by_job(spark, "two-task-upsert", lambda: t.upsert(
        spark.createDataFrame([(1, 2, "v1-new"), (7, 2, "v7")], DDL),
        options={"hoodie.parquet.small.file.limit": "0"}))
    assert len(jobs) == 4, jobs  # keys, targets broadcast, shuffle map by merge bin, write (50/50: no one task)
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1-new",), "2": ("v2",), "3": ("v3",), "7": ("v7",)}
    assert len(t.file_system_view().latest_base_files()) == 2
    assert len(list((tmp_path / "t").glob(".*.log.*"))) == 1


def test_a_minor_new_group_rides_in_the_task_of_the_log(spark, tmp_path):
    """8 updates of one group's log and 2 inserts into a new group (20%): one task writes both, the records it
    joined with their targets itself; the log holds exactly the updates, the new base file the inserts."""
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="minor_t", record_key_fields=["id"],
                           precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}") for i in range(10)], DDL))
    batch = spark.createDataFrame([(i, 2, f"v{i}-new") for i in range(8)] + [(20, 2, "v20"), (21, 2, "v21")],
                                  DDL)
    results = []
    jobs = stage_names_by_job(spark, "minor-upsert", lambda: results.append(
        t.upsert(batch, options={"hoodie.parquet.small.file.limit": "0"})))
    assert len(jobs) == 2, jobs  # keys, write
    assert all(len(stages) == 1 for stages in jobs), jobs
    expected = {str(i): (f"v{i}-new",) for i in range(8)} | {"8": ("v8",), "9": ("v9",), "20": ("v20",),
                                                               "21": ("v21",)}
    assert by_key(t.read(), "v") == expected
    assert len(t.file_system_view().latest_base_files()) == 2
    logs = list((tmp_path / "t").glob(".*.log.*"))
    assert len(logs) == 1, logs
    stats = results[0].metadata.write_stats
    assert sorted((s.is_log_write, s.num_update_writes, s.num_inserts) for s in stats) == [(False, 0, 2),
                                                                                         (True, 8, 0)]

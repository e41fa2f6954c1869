"""A deltacommit whose records all go to one merge task (one file group touched) gathers them there without a
shuffle: its tasks split their rows by file group themselves (log_append.write_partition), so a shuffle by merge
bin would write and read the whole batch once more, in one more Spark job, to change nothing."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, by_key

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string"


def _jobs(spark, group: str, write) -> list[list[str]]:
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        write()
    finally:
        sc.setJobGroup("", "")
    tracker = sc.statusTracker()
    return [[info.name for stage in tracker.getJobInfo(job).stageIds
             if (info := tracker.getStageInfo(stage)) is not None]
            for job in sorted(tracker.getJobIdsForGroup(group))]


def test_one_group_deltacommit_writes_without_a_shuffle(spark, tmp_path):
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="one_task_t", record_key_fields=["id"],
                           precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}") for i in range(6)], DDL))
    # Updates from the input partitions of a local batch, one file group: one log file of it per write.
    batch = spark.createDataFrame([(1, 2, "v1-new"), (4, 2, "v4-new"), (5, 2, "v5-new")], DDL)
    jobs = _jobs(spark, "one-task-upsert", lambda: t.upsert(batch))
    # The keys collected for the lookup, the targets broadcast, the write: no shuffle-map job, no shuffle stage.
    assert len(jobs) == 3, jobs
    assert all(len(stages) == 1 for stages in jobs), jobs
    deleted = _jobs(spark, "one-task-delete", lambda: t.delete(spark.createDataFrame([(2, 3, None)], DDL)))
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1-new",), "3": ("v3",), "4": ("v4-new",),
                                     "5": ("v5-new",)}
    assert len(deleted) == 3, deleted
    logs = sorted(p.name for p in (tmp_path / "t").glob(".*.log.*"))
    assert len(logs) == 2 and len({name.split("_", 1)[0] for name in logs}) == 1, logs  # one group, 2 versions


def test_two_groups_still_get_a_task_each(spark, tmp_path):
    """Updates to one file group and inserts into a new one (small-file limit off): two merge tasks, as
    before, and each group's rows where they belong."""
    t = HoodieTable.create(spark, str(tmp_path / "t"), table_name="two_task_t", record_key_fields=["id"],
                           precombine_field="ts", table_type="MERGE_ON_READ", options=SMALL_BLOOM)
    t.upsert(spark.createDataFrame([(i, 1, f"v{i}") for i in range(4)], DDL))
    jobs = _jobs(spark, "two-task-upsert", lambda: t.upsert(
        spark.createDataFrame([(1, 2, "v1-new"), (7, 2, "v7")], DDL),
        options={"hoodie.parquet.small.file.limit": "0"}))
    assert len(jobs) == 4, jobs  # keys, targets broadcast, shuffle map by merge bin, write
    assert by_key(t.read(), "v") == {"0": ("v0",), "1": ("v1-new",), "2": ("v2",), "3": ("v3",), "7": ("v7",)}
    assert len(t.file_system_view().latest_base_files()) == 2
    assert len(list((tmp_path / "t").glob(".*.log.*"))) == 1

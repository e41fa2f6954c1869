"""The Spark jobs a write ran: what tests of job counts (one task, no broadcast, no sample job) assert on."""

from __future__ import annotations


def stage_names_by_job(spark, group: str, write) -> list[list[str]]:
    """Run ``write()`` in job group ``group``; per job it started, in order, the names of its stages."""
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

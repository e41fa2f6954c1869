"""Clean planning on merge-on-read layouts built by hand: a file slice (base file and the log files named after
its instant) is one version, deleted whole; slices a pending compaction merges and logs written on top of a
pending compaction are kept."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.file_group.fs_view import list_group_files
from hoodpy.services.clean.plan import Protected, earliest_commit_to_retain, plan_clean
from hoodpy.services.clean.service import protected_files
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.compaction_plan import CompactionOperation, CompactionPlan, save_compaction_plan
from hoodpy.timeline.instant import Action, instant_time_of, new_instant_time
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

A, B = "aaaaaaaa-0000-0000-0000-000000000001-0", "bbbbbbbb-0000-0000-0000-000000000002-0"


def t(n: int) -> str:
    return instant_time_of(datetime(2024, 1, 1, 10, tzinfo=timezone.utc) + timedelta(hours=n))


def base(fid: str, n: int) -> str:
    return f"p/{fid}_0-1-1_{t(n)}.parquet"


def log(fid: str, slice_n: int, version: int = 1) -> str:
    return f"p/.{fid}_{t(slice_n)}.log.{version}_0-1-1"


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    s.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.type=MERGE_ON_READ\nhoodie.table.version=6\n")
    return s


def write(storage, n, paths, *, action=Action.DELTACOMMIT, complete=True):
    """Instant ``t(n)`` writing the files ``paths``."""
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t(n), action))
    meta = CommitMetadata(OperationType.UPSERT)
    for path in paths:
        storage.write_bytes(path, b"x")
        meta.add_write_stat(WriteStat(path.split("/")[1].lstrip(".").split("_")[0], path, "p", num_writes=1))
    if complete:
        transitions.complete(storage, inflight, meta.to_json_bytes())


def plan_of(storage, protected=None, **options):
    config = HoodieConfig.of({k.replace("_", "."): str(v) for k, v in options.items()})
    timeline = Timeline.load(storage)
    return plan_clean(timeline, list_group_files(storage), config,
                      protected=protected if protected is not None else protected_files(storage, timeline))


def deleted(plan) -> list[str]:
    return [] if plan is None else [p for paths in plan.files_per_partition.values() for p in paths]


def compacted_twice(storage):
    """Group A: slice t1 (base + 2 logs), compacted at t3, slice t3 with a log at t4, compacted at t5; group B:
    a slice of log files only (t2), compacted at t3."""
    write(storage, 1, [base(A, 1)])
    write(storage, 2, [log(A, 1), log(A, 1, 2), log(B, 2)])
    write(storage, 3, [base(A, 3), base(B, 3)], action=Action.COMMIT)
    write(storage, 4, [log(A, 3)])
    write(storage, 5, [base(A, 5)], action=Action.COMMIT)


def test_keep_latest_commits_deletes_a_slice_base_and_logs_together(storage):
    compacted_twice(storage)
    plan = plan_of(storage, hoodie_cleaner_commits_retained=1)
    # E = t5: A keeps t5 (latest) and t3 (the slice a query before t5 reads); slice t1 goes whole. B's newest
    # slice is t3 (also the one before E): its log-only slice t2 goes.
    assert plan.earliest_commit_to_retain == t(5)
    assert deleted(plan) == [base(A, 1), log(A, 1), log(A, 1, 2), log(B, 2)]


def test_keep_latest_file_versions_counts_slices_not_files(storage):
    compacted_twice(storage)
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=2)
    assert deleted(plan) == [base(A, 1), log(A, 1), log(A, 1, 2)]
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=1)
    assert deleted(plan) == [base(A, 1), log(A, 1), log(A, 1, 2), base(A, 3), log(A, 3), log(B, 2)]


def test_a_slice_a_pending_compaction_merges_is_kept(storage):
    compacted_twice(storage)
    keep = Protected(pending_compaction_slices={("p", A, t(1))})
    plan = plan_of(storage, keep, hoodie_cleaner_commits_retained=1)
    assert deleted(plan) == [log(B, 2)]


def test_pending_compaction_bounds_the_clean_and_its_logs_stay(storage):
    """Slice t1 of A is being compacted at t3 (requested); a deltacommit at t4 wrote a log named after t3 (the
    slice the compaction creates). Nothing of A may go: the compaction reads slice t1, readers merge the t3 logs
    into it; the earliest commit to retain stops before the pending compaction."""
    write(storage, 1, [base(A, 1), base(B, 1)])
    write(storage, 2, [log(A, 1), base(B, 2)])
    op = CompactionOperation("p", A, t(1), base(A, 1).split("/")[1], (log(A, 1).split("/")[1],))
    save_compaction_plan(storage, CompactionPlan((op,), instant_time=t(3)))
    write(storage, 4, [log(A, 3), base(B, 4)])
    write(storage, 5, [base(B, 5)])
    timeline = Timeline.load(storage)
    assert protected_files(storage, timeline).pending_compaction_slices == {("p", A, t(1))}
    config = HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"})
    # The last commit before the pending compaction; B's t1 is the version a query as of t2 reads: no plan.
    assert earliest_commit_to_retain(timeline, "KEEP_LATEST_COMMITS", config).timestamp == t(2)
    assert plan_of(storage, hoodie_cleaner_commits_retained=1) is None
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=1)
    # Of B, t5 is the latest and t2 the version as of the pending compaction (a pending instant may read it).
    assert deleted(plan) == [base(B, 1), base(B, 4)]


def test_table_version_8_logs_join_slices_by_completion_time(tmp_path):
    """Versions 8 and 9 name a log after the deltacommit that wrote it: it belongs to the newest slice whose
    base instant is at or before that deltacommit's completion, not to a slice of its own."""
    storage = Storage(str(tmp_path))
    storage.mkdirs(".hoodie/timeline")
    storage.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.type=MERGE_ON_READ\nhoodie.table.version=8\n"
                                                     b"hoodie.timeline.layout.version=2\n")
    times = []

    def write_now(paths, action=Action.DELTACOMMIT):
        """A write at a fresh instant (completion times are real clock times, so instants must be too)."""
        instant = new_instant_time(after=times[-1] if times else None)
        times.append(instant)
        inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, instant, action))
        for path in paths(instant):
            storage.write_bytes(path, b"x")
        times.append(transitions.complete(storage, inflight, CommitMetadata(OperationType.UPSERT).to_json_bytes())
                     .completion_time)

    write_now(lambda i: [f"p/{A}_0-1-1_{i}.parquet"])
    write_now(lambda i: [f"p/.{A}_{i}.log.1_0-1-1"])  # completes before the next base: slice 1
    write_now(lambda i: [f"p/{A}_0-1-1_{i}.parquet"], Action.COMMIT)
    write_now(lambda i: [f"p/.{A}_{i}.log.1_0-1-1"])  # slice 2
    first_base, first_log = f"p/{A}_0-1-1_{times[0]}.parquet", f"p/.{A}_{times[2]}.log.1_0-1-1"
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=1)
    assert deleted(plan) == [first_base, first_log]

"""Clean planning without Spark: timelines and base files built by hand, one policy rule per test."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.clean import CleanConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.services.clean.plan import (
    CleanerPlan,
    Protected,
    earliest_commit_to_retain,
    partitions_to_clean,
    plan_clean,
)
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, instant_time_of, parse_instant_time
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

A, B, C = "aaaaaaaa-0000-0000-0000-000000000001-0", "bbbbbbbb-0000-0000-0000-000000000002-0", \
    "cccccccc-0000-0000-0000-000000000003-0"


def t(n: int) -> str:
    """Instant n: 2024-01-01 10:00 UTC + n hours."""
    return instant_time_of(datetime(2024, 1, 1, 10, tzinfo=timezone.utc) + timedelta(hours=n))


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def write(storage, instant, groups, *, action=Action.COMMIT, replaced=None, complete=True):
    """One write: a new base file at ``instant`` for each (partition, file id) in ``groups``."""
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, instant, action))
    meta = CommitMetadata(OperationType.INSERT_OVERWRITE if replaced else OperationType.UPSERT,
                          partition_to_replace_file_ids=replaced)
    for partition, fid in groups:
        path = f"{partition}/{fid}_0-1-1_{instant}.parquet"
        storage.write_bytes(path, b"x")
        meta.add_write_stat(WriteStat(fid, path, partition, num_writes=1))
    if complete:
        transitions.complete(storage, inflight, meta.to_json_bytes())


def plan_of(storage, protected=None, now=None, **options):
    config = HoodieConfig.of({k.replace("_", "."): str(v) for k, v in options.items()})
    timeline = Timeline.load(storage)
    return plan_clean(timeline, list_base_files(storage), config, protected=protected, now=now)


def deleted(plan: CleanerPlan | None) -> set[str]:
    if plan is None:
        return set()
    return {p.rsplit("_", 1)[-1].removesuffix(".parquet") + ":" + p.split("/")[-1][:1]
            for paths in plan.files_per_partition.values() for p in paths}


def versions(*pairs):
    return {f"{t(n)}:{g[0]}" for n, g in pairs}


# -- KEEP_LATEST_COMMITS ----------------------------------------------------------------------------
def test_keep_latest_commits_keeps_the_version_before_the_earliest_retained(storage):
    for n in range(1, 6):
        write(storage, t(n), [("p", A)])
    plan = plan_of(storage, hoodie_cleaner_commits_retained=2)
    # Earliest retained = t4 (2nd newest of 5): t3 is the version a query as of t4 reads; t1 and t2 go.
    assert plan.earliest_commit_to_retain == t(4)
    assert deleted(plan) == versions((1, A), (2, A))
    assert plan.policy == "KEEP_LATEST_COMMITS" and plan.last_completed_commit_timestamp == t(5)


def test_keep_latest_commits_spares_groups_not_updated_since(storage):
    write(storage, t(1), [("p", A), ("p", B)])
    for n in range(2, 6):
        write(storage, t(n), [("p", A)])
    plan = plan_of(storage, hoodie_cleaner_commits_retained=1)
    assert plan.earliest_commit_to_retain == t(5)
    assert deleted(plan) == versions((1, A), (2, A), (3, A))  # B's only version is its latest


def test_too_few_commits_to_clean(storage):
    for n in range(1, 4):
        write(storage, t(n), [("p", A)])
    assert plan_of(storage, hoodie_cleaner_commits_retained=3) is None
    assert earliest_commit_to_retain(Timeline.load(storage), "KEEP_LATEST_COMMITS",
                                     HoodieConfig.of({"hoodie.cleaner.commits.retained": "3"})) is None


def test_pending_write_caps_the_earliest_retained_commit(storage):
    write(storage, t(1), [("p", A)])
    write(storage, t(2), [("p", A)])
    write(storage, t(3), [("p", A)], complete=False)  # a concurrent writer started at t3
    write(storage, t(4), [("p", A)])
    write(storage, t(5), [("p", A)])
    config = HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"})
    # Unbounded, E would be t5; the writer at t3 may read what was committed before it, so E = t2.
    assert earliest_commit_to_retain(Timeline.load(storage), "KEEP_LATEST_COMMITS", config).timestamp == t(2)
    # t1 is the version before t2, t2 and later are retained, the pending t3 file is never touched.
    assert plan_of(storage, hoodie_cleaner_commits_retained=1) is None


# -- KEEP_LATEST_FILE_VERSIONS --------------------------------------------------------------------------
def test_keep_latest_file_versions(storage):
    for n in range(1, 5):
        write(storage, t(n), [("p", A)])
    write(storage, t(5), [("p", B)])
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS", hoodie_cleaner_fileversions_retained=2)
    assert plan.earliest_instant_to_retain is None
    assert deleted(plan) == versions((1, A), (2, A))


def test_file_versions_keep_what_a_pending_write_reads(storage):
    for n in (1, 2):
        write(storage, t(n), [("p", A)])
    write(storage, t(3), [("p", B)], complete=False)
    write(storage, t(4), [("p", A)])
    protected = Protected(pending_write_times=[t(3)])
    plan = plan_of(storage, protected, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=1)
    assert deleted(plan) == versions((1, A))  # t2 is A as of the pending write t3


# -- KEEP_LATEST_BY_HOURS -------------------------------------------------------------------------------
def test_keep_latest_by_hours(storage):
    for n in range(1, 6):
        write(storage, t(n), [("p", A)])
    now = parse_instant_time(t(5)) + timedelta(minutes=30)
    plan = plan_of(storage, now=now, hoodie_cleaner_policy="KEEP_LATEST_BY_HOURS", hoodie_cleaner_hours_retained=2)
    # Commits are an hour apart: the cutoff t5 + 30 min - 2 h falls between t3 and t4.
    assert plan.earliest_commit_to_retain == t(4)
    assert deleted(plan) == versions((1, A), (2, A))


def test_by_hours_with_no_recent_commit_cleans_nothing(storage):
    for n in range(1, 4):
        write(storage, t(n), [("p", A)])
    now = parse_instant_time(t(3)) + timedelta(hours=10)
    assert plan_of(storage, now=now, hoodie_cleaner_policy="KEEP_LATEST_BY_HOURS",
                   hoodie_cleaner_hours_retained=2) is None


# -- replaced file groups, partitions -------------------------------------------------------------------
def test_replaced_group_is_deleted_once_outside_retention(storage):
    write(storage, t(1), [("p", A), ("p", B)])
    write(storage, t(2), [("p", C)], action=Action.REPLACECOMMIT, replaced={"p": [B]})
    write(storage, t(3), [("p", A)])
    write(storage, t(4), [("p", A)])
    plan = plan_of(storage, hoodie_cleaner_commits_retained=2)  # E = t3 > replace t2
    assert deleted(plan) == versions((1, B))
    plan = plan_of(storage, hoodie_cleaner_commits_retained=3)  # E = t2: a query as of t2... B is replaced at t2
    assert deleted(plan) == set()


def test_replaced_group_within_retention_is_kept(storage):
    write(storage, t(1), [("p", B)])
    write(storage, t(2), [("p", B)])
    write(storage, t(3), [("p", A)])
    write(storage, t(4), [("p", C)], action=Action.REPLACECOMMIT, replaced={"p": [B]})
    plan = plan_of(storage, hoodie_cleaner_commits_retained=1)  # E = t4: replaced at t4, not before
    assert plan is None


def test_file_versions_delete_every_replaced_group(storage):
    write(storage, t(1), [("p", B)])
    write(storage, t(2), [("p", C)], action=Action.REPLACECOMMIT, replaced={"p": [B]})
    plan = plan_of(storage, hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS")
    assert deleted(plan) == versions((1, B))


def test_partition_left_empty_is_deleted(storage):
    write(storage, t(1), [("q", B)])
    write(storage, t(2), [("p", C)], action=Action.REPLACECOMMIT, replaced={"q": [B]})
    write(storage, t(3), [("p", C)])
    write(storage, t(4), [("p", C)])
    plan = plan_of(storage, hoodie_cleaner_commits_retained=2)
    assert plan.partitions_to_delete == ("q",)
    assert deleted(plan) == versions((1, B))


def test_partition_with_pending_files_is_not_deleted(storage):
    write(storage, t(1), [("q", B)])
    write(storage, t(2), [("p", C)], action=Action.REPLACECOMMIT, replaced={"q": [B]})
    write(storage, t(3), [("p", C)])
    write(storage, t(4), [("p", C)])
    write(storage, t(5), [("q", A)], complete=False)
    plan = plan_of(storage, hoodie_cleaner_commits_retained=2)
    assert plan.partitions_to_delete == ()


# -- protected files ----------------------------------------------------------------------------------
def test_savepointed_and_clustering_files_are_never_deleted(storage):
    for n in range(1, 6):
        write(storage, t(n), [("p", A), ("p", B)])
    protected = Protected(savepointed_files={f"{A}_0-1-1_{t(1)}.parquet"},
                          pending_clustering_files={f"{B}_0-1-1_{t(2)}.parquet"})
    plan = plan_of(storage, protected, hoodie_cleaner_commits_retained=1)
    assert deleted(plan) == versions((2, A), (3, A), (1, B), (3, B))


def test_uncommitted_files_are_never_deleted(storage):
    write(storage, t(1), [("p", A)])
    write(storage, t(2), [("p", A)], complete=False)
    write(storage, t(3), [("p", A)])
    write(storage, t(4), [("p", A)])
    plan = plan_of(storage, Protected(pending_write_times=[t(2)]), hoodie_cleaner_policy="KEEP_LATEST_FILE_VERSIONS",
                   hoodie_cleaner_fileversions_retained=1)
    assert deleted(plan) == {f"{t(3)}:a"}  # t1 is what the pending write t2 reads; t2 is not committed


# -- incremental mode, policy inference, config, Avro ---------------------------------------------------
def test_incremental_mode_scans_partitions_written_since_the_last_clean(storage):
    write(storage, t(1), [("p", A), ("q", B)])
    write(storage, t(2), [("p", A)])
    write(storage, t(3), [("q", B)])
    write(storage, t(4), [("r", C)])
    tl = Timeline.load(storage)
    config = HoodieConfig.of({"hoodie.cleaner.commits.retained": "1"})
    earliest = earliest_commit_to_retain(tl, "KEEP_LATEST_COMMITS", config)
    assert partitions_to_clean(tl, "KEEP_LATEST_COMMITS", earliest, config, last_clean_earliest=t(3)) == ["q"]
    assert partitions_to_clean(tl, "KEEP_LATEST_COMMITS", earliest, config, last_clean_earliest=None) is None
    full = config.with_options({"hoodie.cleaner.incremental.mode": "false"})
    assert partitions_to_clean(tl, "KEEP_LATEST_COMMITS", earliest, full, last_clean_earliest=t(3)) is None
    # A last earliest before the timeline starts (archived): full scan.
    assert partitions_to_clean(tl, "KEEP_LATEST_COMMITS", earliest, config,
                               last_clean_earliest="20230101000000000") is None


@pytest.mark.parametrize("options,policy", [
    ({}, "KEEP_LATEST_COMMITS"),
    ({"hoodie.cleaner.fileversions.retained": "2"}, "KEEP_LATEST_FILE_VERSIONS"),
    ({"hoodie.cleaner.hours.retained": "5"}, "KEEP_LATEST_BY_HOURS"),
    ({"hoodie.cleaner.hours.retained": "5", "hoodie.cleaner.commits.retained": "3"}, "KEEP_LATEST_COMMITS"),
    ({"hoodie.cleaner.policy": "keep_latest_file_versions"}, "KEEP_LATEST_FILE_VERSIONS"),
])
def test_policy_inference(options, policy):
    assert CleanConfig.policy(HoodieConfig.of(options)) == policy


@pytest.mark.parametrize("key,value", [("hoodie.cleaner.policy", "KEEP_ALL"),
                                       ("hoodie.cleaner.commits.retained", "0"),
                                       ("hoodie.cleaner.fileversions.retained", "x")])
def test_bad_config_names_the_key(key, value):
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        CleanConfig.validate(HoodieConfig.of({key: value}))


def test_plan_avro_round_trip(storage):
    for n in range(1, 4):
        write(storage, t(n), [("p", A)])
    plan = plan_of(storage, hoodie_cleaner_commits_retained=1)
    data = serialize(AvroModel.CLEANER_PLAN, plan.to_avro(storage.full_path))
    body = deserialize(AvroModel.CLEANER_PLAN, data)
    assert body["version"] == 2 and body["policy"] == "KEEP_LATEST_COMMITS"
    assert body["earliestInstantToRetain"] == {"timestamp": t(3), "action": "commit", "state": "COMPLETED"}
    assert body["filePathsToBeDeletedPerPartition"]["p"] == [
        {"filePath": storage.full_path(f"p/{A}_0-1-1_{t(1)}.parquet"), "isBootstrapBaseFile": False}]
    back = CleanerPlan.from_avro(body, lambda p: p[len(storage.root) + 1:])
    assert back.files_per_partition == plan.files_per_partition
    assert back.earliest_instant_to_retain == plan.earliest_instant_to_retain

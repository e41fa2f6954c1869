from datetime import datetime, timezone

import pyarrow as pa
import pytest

from hoodpy.config import HoodieConfig
from hoodpy.config.clustering import ClusteringConfig, parse_layout_strategy
from hoodpy.errors import InvalidConfigError, InvalidInstantError, PlanNotFoundError
from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import BaseFileName
from hoodpy.services.clustering.plan import (
    ClusteringPlan,
    clustering_instants,
    file_groups_in_pending_clustering,
    load_clustering_plan,
)
from hoodpy.services.clustering.service import ClusteringService, commits_since_last_clustering, should_schedule
from hoodpy.services.clustering.strategy import (
    TOTAL_IO_MB,
    TOTAL_IO_READ_MB,
    build_groups_for_partition,
    plan_clustering,
    select_partitions,
    validate_sort_columns,
)
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.metadata import CommitMetadata, OperationType, WriteStat
from hoodpy.timeline.timeline import Timeline

T1 = "20240101000000001"
MB = 1024 * 1024


@pytest.fixture
def storage(tmp_path):
    s = Storage(str(tmp_path))
    s.mkdirs(".hoodie")
    return s


def cfg(**kv):
    return HoodieConfig.of({k.replace("__", "."): v for k, v in kv.items()})


def conf(options=None, **short):
    """Clustering config from short names: max_bytes, target, max_groups, single, sort, limit."""
    names = {"max_bytes": ClusteringConfig.MAX_BYTES_PER_GROUP, "target": ClusteringConfig.TARGET_FILE_MAX_BYTES,
             "max_groups": ClusteringConfig.MAX_NUM_GROUPS, "single": ClusteringConfig.SINGLE_GROUP_CLUSTERING_ENABLED,
             "sort": ClusteringConfig.SORT_COLUMNS, "limit": ClusteringConfig.SMALL_FILE_LIMIT,
             "mode": ClusteringConfig.PARTITION_FILTER_MODE}
    opts = {names[k].key: v for k, v in short.items()}
    opts.update(options or {})
    return HoodieConfig.of(opts)


def bf(partition, fid, size, t=T1):
    return BaseFile(partition, BaseFileName(fid, "0-1-1", t), size)


def view_of(storage, files, instants=(T1,)):
    tl = Timeline(storage, [Instant(t, Action.COMMIT) for t in instants])
    return tl, FileSystemView(tl, files)


def slices(files):
    return [s for s in FileSystemView(Timeline(None, [Instant(T1, Action.COMMIT)]), files).latest_file_slices()]


def sizes_of(groups):
    return [[int(s.file_id[1:]) for s in g.slices] for g in groups]


# -- group cutting ---------------------------------------------------------------------------------------
def test_groups_take_slices_largest_first_and_close_before_exceeding_max_bytes():
    files = [bf("p", f"f{size}", size * MB) for size in (10, 50, 30, 20)]
    groups = build_groups_for_partition(slices(files), conf(max_bytes=60 * MB, target=25 * MB))
    assert sizes_of(groups) == [[50], [30, 20, 10]]
    assert [g.num_output_file_groups for g in groups] == [2, 3]
    assert groups[1].metrics[TOTAL_IO_READ_MB] == 60.0 and groups[1].metrics[TOTAL_IO_MB] == 120.0


def test_equal_sizes_keep_file_id_order():
    files = [bf("p", f"f{i}", 5) for i in (3, 1, 2)]
    groups = build_groups_for_partition(slices(files), conf(max_bytes=10))
    assert sizes_of(groups) == [[1, 2], [3]]


def test_a_partition_stops_after_max_num_groups():
    files = [bf("p", f"f{i}", 10) for i in range(1, 8)]
    groups = build_groups_for_partition(slices(files), conf(max_bytes=20, max_groups=2))
    assert sizes_of(groups) == [[1, 2], [3, 4]]


def test_single_slice_last_group_needs_sort_columns_or_the_single_group_flag():
    one = slices([bf("p", "f1", 10)])
    assert len(build_groups_for_partition(one, conf())) == 1  # single.group.clustering.enabled defaults true
    assert build_groups_for_partition(one, conf(single="false")) == []
    assert len(build_groups_for_partition(one, conf(single="false", sort="a"))) == 1
    # a closed single-slice group in the middle is kept, as Hudi does
    two = slices([bf("p", "f9", 9), bf("p", "f5", 5), bf("p", "f4", 4)])
    assert sizes_of(build_groups_for_partition(two, conf(single="false", max_bytes=10))) == [[9], [5, 4]]


def test_plan_skips_large_files_and_groups_under_pending_clustering(storage):
    files = [bf("p", "f1", 10), bf("p", "f2", 20), bf("p", "f3", 500), bf("p", "f4", 30)]
    pending = {"operationType": "CLUSTER", "clusteringPlan": {
        "inputGroups": [{"slices": [{"fileId": "f4", "partitionPath": "p", "dataFilePath": "p/x.parquet"}],
                         "numOutputFileGroups": 1}], "version": 1}}
    transitions.create_requested(storage, "20240101000000005", Action.REPLACECOMMIT,
                                 serialize(AvroModel.REQUESTED_REPLACE_METADATA, pending))
    tl = Timeline(storage, [Instant(T1, Action.COMMIT)] + Timeline.load(storage).instants)
    assert file_groups_in_pending_clustering(storage, tl) == {("p", "f4")}
    plan = plan_clustering(tl, FileSystemView(tl, files), conf(limit=100))
    assert sizes_of(plan.input_groups) == [[2, 1]]
    assert plan.input_groups[0].slices[0].data_file_path == storage.full_path("p/f2_0-1-1_" + T1 + ".parquet")


def test_plan_caps_groups_across_partitions_in_partition_order(storage):
    files = [bf(p, f"f{i}{p}", 10) for p in ("a", "b", "c") for i in range(4)]
    tl, view = view_of(storage, files)
    plan = plan_clustering(tl, view, conf(max_bytes=20, max_groups=3))
    assert [g.partition_path for g in plan.input_groups] == ["a", "a", "b"]
    assert plan_clustering(tl, view, conf(limit=5)) is None


def test_plan_without_eligible_files_is_none(storage):
    tl, view = view_of(storage, [])
    assert plan_clustering(tl, view, conf()) is None


# -- partition selection ---------------------------------------------------------------------------------
PARTS = ["2024-01-03", "2024-01-01", "2024-01-04", "2024-01-02", "other"]


def test_partitions_default_sorted_regex_and_selected():
    assert select_partitions(PARTS, conf()) == sorted(PARTS)
    regex = {ClusteringConfig.PARTITION_REGEX_PATTERN.key: r"2024-01-0[12]"}
    assert select_partitions(PARTS, conf(regex)) == ["2024-01-01", "2024-01-02"]
    assert select_partitions(PARTS, conf({ClusteringConfig.PARTITION_REGEX_PATTERN.key: "2024"})) == []  # full match
    selected = {ClusteringConfig.PARTITION_SELECTED.key: "2024-01-04, x", **regex}
    assert select_partitions(PARTS, conf(selected)) == ["2024-01-04", "x"]  # wins over the regex


def test_recent_days_takes_the_newest_names_after_skipping():
    base = {ClusteringConfig.PARTITION_FILTER_MODE.key: "recent_days"}
    assert select_partitions(PARTS[:4], conf(base)) == ["2024-01-04", "2024-01-03"]
    skip = {**base, ClusteringConfig.SKIP_PARTITIONS_FROM_LATEST.key: 1,
            ClusteringConfig.DAYBASED_LOOKBACK_PARTITIONS.key: 3}
    assert select_partitions(PARTS[:4], conf(skip)) == ["2024-01-03", "2024-01-02", "2024-01-01"]
    everything = {**base, ClusteringConfig.DAYBASED_LOOKBACK_PARTITIONS.key: 0}
    assert select_partitions(PARTS[:4], conf(everything)) == sorted(PARTS[:4], reverse=True)


def test_selected_partitions_is_an_inclusive_name_range():
    opts = {ClusteringConfig.PARTITION_FILTER_MODE.key: "SELECTED_PARTITIONS",
            ClusteringConfig.BEGIN_PARTITION.key: "2024-01-02", ClusteringConfig.END_PARTITION.key: "2024-01-03"}
    assert select_partitions(PARTS, conf(opts)) == ["2024-01-02", "2024-01-03"]
    del opts[ClusteringConfig.END_PARTITION.key]
    assert select_partitions(PARTS, conf(opts)) == ["2024-01-02", "2024-01-03", "2024-01-04", "other"]
    procedure = {ClusteringConfig.PARTITION_FILTER_MODE.key: "SELECTED_PARTITIONS",
                 ClusteringConfig.PARTITION_SELECTED.key: "2024-01-01,2024-01-03"}  # what run_clustering sets
    assert select_partitions(PARTS, conf(procedure)) == ["2024-01-01", "2024-01-03"]


def test_day_rolling_takes_partition_i_when_i_mod_24_is_the_utc_hour():
    parts = [f"p{i:02d}" for i in range(50)]
    opts = conf({ClusteringConfig.PARTITION_FILTER_MODE.key: "DAY_ROLLING"})
    at = datetime(2024, 5, 1, 1, 30, tzinfo=timezone.utc)
    assert select_partitions(parts, opts, now=at) == ["p01", "p25", "p49"]
    assert select_partitions(parts, opts, now=at.replace(hour=23)) == ["p23", "p47"]


# -- sort columns and config -----------------------------------------------------------------------------
SCHEMA = pa.schema([("id", pa.int64()), ("city", pa.string()), ("info", pa.struct([("a", pa.int32())])),
                    ("tags", pa.list_(pa.string()))])


def test_sort_columns_are_validated_against_the_schema():
    validate_sort_columns(["city", "info.a", "_hoodie_commit_time"], SCHEMA, "LINEAR")
    with pytest.raises(InvalidConfigError, match="'town' does not exist"):
        validate_sort_columns(["city", "town"], SCHEMA, "LINEAR")
    with pytest.raises(InvalidConfigError, match="nested sort column 'info.a'"):
        validate_sort_columns(["city", "info.a"], SCHEMA, "ZORDER")
    with pytest.raises(InvalidConfigError, match="'tags' has type"):
        validate_sort_columns(["tags"], SCHEMA, "LINEAR")
    validate_sort_columns(["city"], ["id", "city"], "HILBERT")


def test_plan_validates_sort_columns_when_given_a_schema(storage):
    tl, view = view_of(storage, [bf("p", "f1", 1), bf("p", "f2", 1)])
    with pytest.raises(InvalidConfigError, match="nope"):
        plan_clustering(tl, view, conf(sort="id,nope"), table_schema_fields=SCHEMA)


def test_layout_strategy_names_and_inline_conflict():
    assert [parse_layout_strategy(v) for v in ("linear", "Z-Order", "zorder", "HILBERT", "z_order")] == \
        ["LINEAR", "ZORDER", "ZORDER", "HILBERT", "ZORDER"]
    with pytest.raises(InvalidConfigError, match="hoodie.layout.optimize.strategy"):
        conf({"hoodie.layout.optimize.strategy": "spiral"}).get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY)
    with pytest.raises(InvalidConfigError, match="schedule.inline"):
        ClusteringConfig.validate(conf({"hoodie.clustering.inline": "true",
                                        "hoodie.clustering.schedule.inline": "true"}))
    assert conf({"hoodie.datasource.clustering.inline.enable": "true"}).get(ClusteringConfig.INLINE) is True


# -- scheduling, persistence, gate -----------------------------------------------------------------------
def _write_commit(storage, t, files, op=OperationType.UPSERT, replaced=None, action=Action.COMMIT):
    inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, action))
    meta = CommitMetadata(op, partition_to_replace_file_ids=replaced)
    for p, fid, size in files:
        path = f"{p}/{fid}_0-1-1_{t}.parquet"
        storage.write_bytes(path, b"x" * size)
        meta.add_write_stat(WriteStat(fid, path, p, num_writes=1))
    transitions.complete(storage, inflight, meta.to_json_bytes())


def test_scheduled_plan_round_trips_through_the_requested_instant(storage):
    _write_commit(storage, T1, [("2024/01", "a-0", 100), ("2024/01", "b-0", 300), ("2024/02", "c-0", 50)])
    options = {ClusteringConfig.SORT_COLUMNS.key: "city, ts", ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key: "z-order",
               ClusteringConfig.TARGET_FILE_MAX_BYTES.key: 200}
    plan = ClusteringService.of(storage).schedule(options)
    assert plan.instant_time > T1
    loaded = load_clustering_plan(storage, plan.instant_time)
    assert loaded == plan
    assert loaded.sort_columns == ("city", "ts") and loaded.layout_strategy() == "ZORDER"
    assert [(g.partition_path, g.num_output_file_groups, [s.file_id for s in g.slices]) for g in loaded.input_groups] \
        == [("2024/01", 2, ["b-0", "a-0"]), ("2024/02", 1, ["c-0"])]
    raw = deserialize(AvroModel.REQUESTED_REPLACE_METADATA,
                      storage.read_bytes(f".hoodie/{plan.instant_time}.replacecommit.requested"))
    assert raw["operationType"] == "CLUSTER"
    cp = raw["clusteringPlan"]
    assert cp["strategy"]["strategyClassName"] == \
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
    assert cp["strategy"]["strategyParams"]["hoodie.clustering.plan.strategy.sort.columns"] == "city,ts"
    assert cp["preserveHoodieMetadata"] is True and cp["version"] == 1
    assert set(cp["inputGroups"][0]["metrics"]) == {"TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB", "TOTAL_IO_MB",
                                                     "TOTAL_LOG_FILES_SIZE", "TOTAL_LOG_FILES"}
    assert cp["inputGroups"][0]["slices"][0]["deltaFilePaths"] == []
    tl = Timeline.load(storage)
    assert [(i.timestamp, p) for i, p in clustering_instants(storage, tl)] == [(plan.instant_time, plan)]
    # its groups are now pending: a second plan finds nothing
    assert ClusteringService.of(storage).schedule(options) is None


def test_plans_without_sort_columns_record_no_params_and_fresh_instants_must_be_later(storage):
    _write_commit(storage, T1, [("p", "a-0", 10), ("p", "b-0", 10)])
    with pytest.raises(InvalidInstantError, match="later"):
        ClusteringService.of(storage).schedule(instant_time=T1)
    plan = ClusteringService.of(storage).schedule(instant_time="20240101000000009")
    assert plan.instant_time == "20240101000000009" and dict(plan.strategy_params) == {}
    assert plan.layout_strategy("LINEAR") == "LINEAR"


def test_load_clustering_plan_rejects_other_replacecommits(storage):
    with pytest.raises(PlanNotFoundError, match="does not exist"):
        load_clustering_plan(storage, T1)
    overwrite = {"operationType": "INSERT_OVERWRITE", "clusteringPlan": None, "extraMetadata": {}, "version": 1}
    transitions.create_requested(storage, T1, Action.REPLACECOMMIT,
                                 serialize(AvroModel.REQUESTED_REPLACE_METADATA, overwrite))
    with pytest.raises(PlanNotFoundError, match="INSERT_OVERWRITE"):
        load_clustering_plan(storage, T1)


def test_inline_and_async_gates_count_commits_since_the_last_completed_clustering(storage):
    inline = conf({ClusteringConfig.INLINE_MAX_COMMITS.key: 2})
    _write_commit(storage, "20240101000000001", [("p", "a-0", 1)])
    tl = Timeline.load(storage)
    assert commits_since_last_clustering(tl) == 1
    assert not should_schedule(tl, inline, "inline") and should_schedule(tl, inline, None)
    _write_commit(storage, "20240101000000002", [("p", "b-0", 1)])
    assert should_schedule(Timeline.load(storage), inline, "inline")
    _write_commit(storage, "20240101000000003", [("p", "c-0", 1)], OperationType.CLUSTER, {"p": ["a-0", "b-0"]},
                  Action.REPLACECOMMIT)
    _write_commit(storage, "20240101000000004", [("p", "d-0", 1)])
    tl = Timeline.load(storage)
    assert commits_since_last_clustering(tl) == 1
    assert not should_schedule(tl, inline, "inline")
    assert not should_schedule(tl, inline, "async")  # async.max.commits defaults to 4
    service = ClusteringService.of(storage)
    assert service.schedule({ClusteringConfig.INLINE_MAX_COMMITS.key: 2}, trigger="inline") is None
    assert service.schedule() is not None


def test_plan_model_round_trips_through_avro_dicts():
    plan = ClusteringPlan.from_avro({
        "inputGroups": [{"slices": [{"fileId": "f", "partitionPath": "p", "dataFilePath": "/t/p/f_1-2-3_001.parquet",
                                     "deltaFilePaths": [], "bootstrapFilePath": "", "version": 1}],
                         "numOutputFileGroups": 2, "metrics": {"TOTAL_IO_MB": 1.0}, "extraMetadata": None,
                         "version": 1}],
        "strategy": {"strategyClassName": "X", "strategyParams": {}, "version": 1},
        "extraMetadata": {}, "version": 1, "preserveHoodieMetadata": True}, "20240101000000001")
    assert ClusteringPlan.from_avro(plan.to_avro(), plan.instant_time) == plan
    assert plan.input_groups[0].slices[0].file_name == "f_1-2-3_001.parquet"
    assert plan.num_output_file_groups == 2 and plan.file_group_ids == {("p", "f")}

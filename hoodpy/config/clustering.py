"""Clustering-scope keys: when to plan, which file slices, how to lay records out (Hudi's
HoodieClusteringConfig, 0.14 defaults)."""

from __future__ import annotations

import re

from hoodpy.config import ConfigKey, HoodieConfig, parse_bool, parse_csv, parse_enum, parse_int
from hoodpy.config.index import BUCKET, IndexConfig
from hoodpy.errors import InvalidConfigError

SPARK_SIZE_BASED_PLAN_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
)
REJECT_UPDATE_STRATEGY = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"
ALLOW_UPDATE_STRATEGY = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"

# hoodie.clustering.plan.partition.filter.mode
NONE = "NONE"
RECENT_DAYS = "RECENT_DAYS"
SELECTED_PARTITIONS = "SELECTED_PARTITIONS"
DAY_ROLLING = "DAY_ROLLING"

# hoodie.layout.optimize.strategy
LINEAR = "LINEAR"
ZORDER = "ZORDER"
HILBERT = "HILBERT"

# hoodie.layout.optimize.curve.build.method
DIRECT = "DIRECT"
SAMPLE = "SAMPLE"


def parse_layout_strategy(value: object) -> str:
    """``linear``, ``z-order``/``zorder``, ``hilbert`` (any case), as Hudi's resolveLayoutOptimizationStrategy."""
    text = re.sub(r"[-_\s]", "", str(value)).upper()
    if text not in (LINEAR, ZORDER, HILBERT):
        raise ValueError("expected one of linear, z-order (zorder), hilbert")
    return text


def parse_regex(value: object) -> str:
    text = str(value)
    try:
        re.compile(text)
    except re.error as e:
        raise ValueError(f"not a valid regular expression ({e})") from e
    return text


class ClusteringConfig:
    INLINE = ConfigKey(
        "hoodie.clustering.inline", False, parse_bool,
        doc="Schedule (every inline.max.commits commits) and run clustering after each write.",
        aliases=("hoodie.datasource.clustering.inline.enable",),
    )
    INLINE_MAX_COMMITS = ConfigKey(
        "hoodie.clustering.inline.max.commits", 4, parse_int,
        doc="Inline clustering plans only after this many commits since the last clustering.",
    )
    SCHEDULE_INLINE = ConfigKey(
        "hoodie.clustering.schedule.inline", False, parse_bool,
        doc="Writers only schedule clustering (gated by async.max.commits); another job executes it.",
    )
    ASYNC_ENABLED = ConfigKey(
        "hoodie.clustering.async.enabled", False, parse_bool,
        doc="Clustering is scheduled and executed by an asynchronous job.",
        aliases=("hoodie.datasource.clustering.async.enable",),
    )
    ASYNC_MAX_COMMITS = ConfigKey(
        "hoodie.clustering.async.max.commits", 4, parse_int,
        doc="Async / schedule-inline clustering plans only after this many commits since the last one.",
    )
    PLAN_STRATEGY_CLASS = ConfigKey(
        "hoodie.clustering.plan.strategy.class", SPARK_SIZE_BASED_PLAN_STRATEGY,
        parse_enum(SPARK_SIZE_BASED_PLAN_STRATEGY),
        doc="Plan strategy; hoodpy implements Hudi's size-based strategy only.",
    )
    EXECUTION_STRATEGY_CLASS = ConfigKey(
        "hoodie.clustering.execution.strategy.class", SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY,
        parse_enum(SPARK_SORT_AND_SIZE_EXECUTION_STRATEGY),
        doc="Execution strategy recorded in the plan; hoodpy implements sort-and-size only.",
    )
    SMALL_FILE_LIMIT = ConfigKey(
        "hoodie.clustering.plan.strategy.small.file.limit", 314572800, parse_int,
        doc="Only base files smaller than this (bytes) are clustered.",
    )
    TARGET_FILE_MAX_BYTES = ConfigKey(
        "hoodie.clustering.plan.strategy.target.file.max.bytes", 1073741824, parse_int,
        doc="Target size of an output file: a group writes ceil(group bytes / this) files.",
    )
    MAX_BYTES_PER_GROUP = ConfigKey(
        "hoodie.clustering.plan.strategy.max.bytes.per.group", 2147483648, parse_int,
        doc="Most input bytes in one clustering group.",
    )
    MAX_NUM_GROUPS = ConfigKey(
        "hoodie.clustering.plan.strategy.max.num.groups", 30, parse_int,
        doc="Most clustering groups in one plan (per partition and in total).",
    )
    SORT_COLUMNS = ConfigKey(
        "hoodie.clustering.plan.strategy.sort.columns", (), parse_csv,
        doc="Columns to sort (or curve-order) the records of a group by; empty: by record key.",
    )
    SINGLE_GROUP_CLUSTERING_ENABLED = ConfigKey(
        "hoodie.clustering.plan.strategy.single.group.clustering.enabled", True, parse_bool,
        doc="Plan a partition's last group even when it holds a single file slice.",
    )
    PARTITION_FILTER_MODE = ConfigKey(
        "hoodie.clustering.plan.partition.filter.mode", NONE,
        parse_enum(NONE, RECENT_DAYS, SELECTED_PARTITIONS, DAY_ROLLING),
        doc="NONE; RECENT_DAYS (newest partitions by name); SELECTED_PARTITIONS (begin..end by name); "
        "DAY_ROLLING (sorted partition i when i mod 24 is the current UTC hour).",
    )
    DAYBASED_LOOKBACK_PARTITIONS = ConfigKey(
        "hoodie.clustering.plan.strategy.daybased.lookback.partitions", 2, parse_int,
        doc="RECENT_DAYS: how many partitions to take (<= 0: all).",
    )
    SKIP_PARTITIONS_FROM_LATEST = ConfigKey(
        "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions", 0, parse_int,
        doc="RECENT_DAYS: how many of the newest partitions to skip first.",
    )
    BEGIN_PARTITION = ConfigKey(
        "hoodie.clustering.plan.strategy.cluster.begin.partition", None,
        doc="SELECTED_PARTITIONS: first partition path (inclusive, compared as text).",
    )
    END_PARTITION = ConfigKey(
        "hoodie.clustering.plan.strategy.cluster.end.partition", None,
        doc="SELECTED_PARTITIONS: last partition path (inclusive, compared as text).",
    )
    PARTITION_SELECTED = ConfigKey(
        "hoodie.clustering.plan.strategy.partition.selected", (), parse_csv,
        doc="Comma-separated partition paths to cluster (set by run_clustering); wins over the regex.",
    )
    PARTITION_REGEX_PATTERN = ConfigKey(
        "hoodie.clustering.plan.strategy.partition.regex.pattern", None, parse_regex,
        doc="Only partition paths matching this regular expression in full are clustered.",
    )
    LAYOUT_OPTIMIZE_STRATEGY = ConfigKey(
        "hoodie.layout.optimize.strategy", LINEAR, parse_layout_strategy,
        doc="LINEAR (sort by the columns), ZORDER or HILBERT (order along a space-filling curve).",
    )
    CURVE_BUILD_METHOD = ConfigKey(
        "hoodie.layout.optimize.curve.build.method", SAMPLE, parse_enum(DIRECT, SAMPLE),
        doc="DIRECT (Hudi's default): curve over the values' own bits, so a column with a narrow range next to "
        "a wide one adds nothing to the order; SAMPLE (hoodpy's default): over each column's sampled quantiles, "
        "so every sort column spreads over its own range and range queries on each prune files.",
    )
    BUILD_CURVE_SAMPLE_SIZE = ConfigKey(
        "hoodie.layout.optimize.build.curve.sample.size", 200000, parse_int,
        doc="Rows sampled per clustering run to place column boundaries and output-file boundaries.",
    )
    GROUP_TASK_MAX_BYTES = ConfigKey(
        "hoodie.clustering.group.task.max.bytes", 1024**3, parse_int,
        doc="hoodpy only: a clustering group of base files only (no log files) whose uncompressed size (the "
        "parquet row groups' total_byte_size) is at most this is read, ordered and written by one Python task "
        "with pyarrow, without a Spark scan and shuffle of its rows; larger groups, and groups with log files, "
        "are shuffled by Spark. The task holds the group's rows in memory: its peak is about 4x this size "
        "(measured on TPC-H lineitem). 0 turns it off.",
    )
    MAX_PARALLELISM = ConfigKey(
        "hoodie.clustering.max.parallelism", 15, parse_int,
        doc="Most clustering groups executed together in one Spark job.",
    )
    UPDATES_STRATEGY = ConfigKey(
        "hoodie.clustering.updates.strategy", REJECT_UPDATE_STRATEGY,
        parse_enum(REJECT_UPDATE_STRATEGY, ALLOW_UPDATE_STRATEGY),
        doc="Reject (fail) writes that update or delete records of file groups under pending clustering.",
    )

    @staticmethod
    def require_clusterable_index(config: HoodieConfig) -> None:
        """Clustering rewrites file groups into new ones whose ids name no bucket, which the BUCKET index could
        not find again: refused for such tables."""
        if config.get(IndexConfig.TYPE) == BUCKET:
            raise InvalidConfigError(IndexConfig.TYPE.key, BUCKET,
                                     "hoodpy does not cluster tables written with the BUCKET index (clustering "
                                     "would write file groups that belong to no bucket)")

    @staticmethod
    def validate(config: HoodieConfig) -> None:
        """Raise InvalidConfigError for combinations Hudi refuses."""
        ClusteringConfig.require_clusterable_index(config)
        config.get(ClusteringConfig.PLAN_STRATEGY_CLASS)  # raise for strategies hoodpy does not implement
        config.get(ClusteringConfig.EXECUTION_STRATEGY_CLASS)
        if config.get(ClusteringConfig.INLINE) and config.get(ClusteringConfig.SCHEDULE_INLINE):
            raise InvalidConfigError(
                ClusteringConfig.SCHEDULE_INLINE.key, True,
                f"cannot be combined with {ClusteringConfig.INLINE.key}=true (inline clustering already schedules)")
        for key in (ClusteringConfig.INLINE_MAX_COMMITS, ClusteringConfig.ASYNC_MAX_COMMITS,
                    ClusteringConfig.TARGET_FILE_MAX_BYTES, ClusteringConfig.MAX_BYTES_PER_GROUP,
                    ClusteringConfig.MAX_NUM_GROUPS, ClusteringConfig.MAX_PARALLELISM,
                    ClusteringConfig.BUILD_CURVE_SAMPLE_SIZE):
            if config.get(key) <= 0:
                raise InvalidConfigError(key.key, config.raw(key), "must be positive")

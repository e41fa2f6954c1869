"""The clustering plan: Hudi's HoodieClusteringPlan and its parts, and reading saved plans off the timeline.

A plan is saved as ``HoodieRequestedReplaceMetadata`` (operationType ``CLUSTER``) in
``<t>.replacecommit.requested``; :func:`load_clustering_plan` reads it back. Which file slices go into a plan
is the strategy's business (``strategy.py``); scheduling and executing it, the service's (``service.py``).

Example:
    >>> plan = t.clustering.schedule(sort_columns=["city", "ts"])
    >>> load_clustering_plan(t.storage, plan.instant_time) == plan
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hoodpy.config.clustering import ClusteringConfig
from hoodpy.errors import PlanNotFoundError
from hoodpy.file_group.naming import parse_base_file_name
from hoodpy.storage import Storage
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, State, validate_instant_time
from hoodpy.timeline.metadata import OperationType
from hoodpy.timeline.timeline import Timeline, read_layout
from hoodpy.transaction.conflict import FileGroupId, pending_clustering_file_groups

CLUSTERING_PLAN_VERSION = 1


@dataclass(frozen=True)
class SliceInfo:
    """HoodieSliceInfo: one file slice to rewrite."""

    partition_path: str
    file_id: str
    data_file_path: str  # as recorded: the base file's full path ('' for a slice of log files only)
    delta_file_paths: tuple[str, ...] = ()  # the log files' full paths, newest first
    bootstrap_file_path: str = ""
    version: int = 1

    @property
    def file_name(self) -> str:
        """The base file's name ('' without one)."""
        return self.data_file_path.rsplit("/", 1)[-1]

    @property
    def delta_file_names(self) -> tuple[str, ...]:
        return tuple(p.rsplit("/", 1)[-1] for p in self.delta_file_paths)

    @property
    def base_instant_time(self) -> str | None:
        parsed = parse_base_file_name(self.file_name)
        return parsed.instant_time if parsed else None

    @property
    def file_group_id(self) -> FileGroupId:
        return (self.partition_path, self.file_id)

    def to_avro(self) -> dict[str, Any]:
        return {"dataFilePath": self.data_file_path, "deltaFilePaths": list(self.delta_file_paths),
                "fileId": self.file_id, "partitionPath": self.partition_path,
                "bootstrapFilePath": self.bootstrap_file_path, "version": self.version}

    @classmethod
    def from_avro(cls, d: Mapping[str, Any]) -> SliceInfo:
        return cls(partition_path=d.get("partitionPath") or "", file_id=d.get("fileId") or "",
                   data_file_path=d.get("dataFilePath") or "",
                   delta_file_paths=tuple(d.get("deltaFilePaths") or ()),
                   bootstrap_file_path=d.get("bootstrapFilePath") or "",
                   version=d.get("version") if d.get("version") is not None else 1)


@dataclass(frozen=True)
class ClusteringGroup:
    """HoodieClusteringGroup: slices of one partition rewritten into ``num_output_file_groups`` files."""

    slices: tuple[SliceInfo, ...]
    num_output_file_groups: int
    metrics: Mapping[str, float] = field(default_factory=dict)
    extra_metadata: Mapping[str, str] | None = None
    version: int = 1

    @property
    def partition_path(self) -> str:
        return self.slices[0].partition_path if self.slices else ""

    def to_avro(self) -> dict[str, Any]:
        return {"slices": [s.to_avro() for s in self.slices], "metrics": dict(self.metrics),
                "numOutputFileGroups": self.num_output_file_groups,
                "extraMetadata": dict(self.extra_metadata) if self.extra_metadata is not None else None,
                "version": self.version}

    @classmethod
    def from_avro(cls, d: Mapping[str, Any]) -> ClusteringGroup:
        extra = d.get("extraMetadata")
        return cls(slices=tuple(SliceInfo.from_avro(s) for s in d.get("slices") or ()),
                   num_output_file_groups=d.get("numOutputFileGroups") or 1,
                   metrics=dict(d.get("metrics") or {}),
                   extra_metadata=dict(extra) if extra is not None else None,
                   version=d.get("version") if d.get("version") is not None else 1)


@dataclass(frozen=True)
class ClusteringPlan:
    """HoodieClusteringPlan, plus the instant it is scheduled at (None until scheduled)."""

    input_groups: tuple[ClusteringGroup, ...]
    strategy_class_name: str
    strategy_params: Mapping[str, str] = field(default_factory=dict)
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    version: int = CLUSTERING_PLAN_VERSION
    preserve_hoodie_metadata: bool | None = True
    instant_time: str | None = None

    # -- what the plan asks for ---------------------------------------------------------------
    @property
    def sort_columns(self) -> tuple[str, ...]:
        text = self.strategy_params.get(ClusteringConfig.SORT_COLUMNS.key) or ""
        return tuple(c.strip() for c in text.split(",") if c.strip())

    def layout_strategy(self, default: str | None = None) -> str | None:
        """The layout recorded with the plan (hoodpy records it; Java Hudi plans fall back to config)."""
        return self._param(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY, default)

    def curve_build_method(self, default: str | None = None) -> str | None:
        return self._param(ClusteringConfig.CURVE_BUILD_METHOD, default)

    def curve_sample_size(self, default: int | None = None) -> int | None:
        return self._param(ClusteringConfig.BUILD_CURVE_SAMPLE_SIZE, default)

    def _param(self, key, default):
        value = self.strategy_params.get(key.key)
        return key.parse(value) if value not in (None, "") else default

    @property
    def partitions(self) -> list[str]:
        return sorted({g.partition_path for g in self.input_groups})

    @property
    def file_group_ids(self) -> set[FileGroupId]:
        return {s.file_group_id for g in self.input_groups for s in g.slices}

    @property
    def num_input_slices(self) -> int:
        return sum(len(g.slices) for g in self.input_groups)

    @property
    def num_output_file_groups(self) -> int:
        return sum(g.num_output_file_groups for g in self.input_groups)

    # -- Avro --------------------------------------------------------------------------------
    def to_avro(self) -> dict[str, Any]:
        return {
            "inputGroups": [g.to_avro() for g in self.input_groups],
            "strategy": {"strategyClassName": self.strategy_class_name,
                         "strategyParams": dict(self.strategy_params), "version": 1},
            "extraMetadata": dict(self.extra_metadata),
            "version": self.version,
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
        }

    def requested_metadata(self) -> dict[str, Any]:
        """The HoodieRequestedReplaceMetadata record that ``<t>.replacecommit.requested`` holds."""
        return {"operationType": OperationType.CLUSTER, "clusteringPlan": self.to_avro(),
                "extraMetadata": {}, "version": 1}

    @classmethod
    def from_avro(cls, d: Mapping[str, Any], instant_time: str | None = None) -> ClusteringPlan:
        strategy = d.get("strategy") or {}
        return cls(input_groups=tuple(ClusteringGroup.from_avro(g) for g in d.get("inputGroups") or ()),
                   strategy_class_name=strategy.get("strategyClassName") or "",
                   strategy_params=dict(strategy.get("strategyParams") or {}),
                   extra_metadata=dict(d.get("extraMetadata") or {}),
                   version=d.get("version") if d.get("version") is not None else 1,
                   preserve_hoodie_metadata=d.get("preserveHoodieMetadata"),
                   instant_time=instant_time)


# -- plans on the timeline ----------------------------------------------------------------------------


def file_groups_in_pending_clustering(storage: Storage, timeline: Timeline) -> set[FileGroupId]:
    """(partition path, file id) of every input file group of a requested or inflight clustering."""
    return {fg for groups in pending_clustering_file_groups(storage, timeline).values() for fg in groups}


def _requested_rel(storage: Storage, instant_time: str) -> str:
    """Where a replacecommit's requested file is: in layout 2 a clustering's is ``<t>.clustering.requested``
    (an insert overwrite's stays ``<t>.replacecommit.requested``)."""
    layout = read_layout(storage)
    requested = Instant(instant_time, Action.REPLACECOMMIT, State.REQUESTED, layout=layout)
    if layout == LAYOUT_2:
        clustering = Instant(instant_time, Action.REPLACECOMMIT, State.REQUESTED, layout=layout, clustering=True)
        if storage.exists(clustering.path):
            return clustering.path
    return requested.path


def _read_requested(storage: Storage, instant_time: str) -> dict[str, Any] | None:
    rel = _requested_rel(storage, instant_time)
    if not storage.exists(rel):
        return None
    data = storage.read_bytes(rel)
    if not data:
        return None  # an insert_overwrite written by an older Hudi: empty requested file
    return deserialize(AvroModel.REQUESTED_REPLACE_METADATA, data, source=storage.full_path(rel))


def load_clustering_plan(storage: Storage, instant_time: str) -> ClusteringPlan:
    """The plan saved in ``<instant_time>.replacecommit.requested``.

    Raises:
        PlanNotFoundError: no such requested instant, or it is not a clustering (e.g. insert_overwrite).
    """
    validate_instant_time(instant_time)
    meta = _read_requested(storage, instant_time)
    if meta is None:
        raise PlanNotFoundError(f"No clustering plan at {instant_time}: {_requested_rel(storage, instant_time)} "
                                "does not exist or is empty")
    plan = meta.get("clusteringPlan")
    if meta.get("operationType") != OperationType.CLUSTER or not plan:
        raise PlanNotFoundError(f"Replacecommit {instant_time} is not a clustering "
                                f"(operationType={meta.get('operationType')!r})")
    return ClusteringPlan.from_avro(plan, instant_time)


def clustering_instants(storage: Storage, timeline: Timeline) -> list[tuple[Instant, ClusteringPlan]]:
    """Every replacecommit on the active timeline that is a clustering, with its plan, oldest first."""
    out = []
    for instant in timeline.filter(actions=[Action.REPLACECOMMIT]):
        try:
            out.append((instant, load_clustering_plan(storage, instant.timestamp)))
        except PlanNotFoundError:
            continue
    return out

"""Clustering: plan (which file slices, in which groups) and execute (rewrite them sorted and sized).

``plan`` (the plan model), ``strategy`` (which slices) and ``layout`` are pure (no Spark); ``execute`` runs
the Spark job and commits the replacecommit; ``service`` schedules and executes (``table.clustering``).
The names below are imported on first use, so that reading plans (the command line) does not import Spark.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hoodpy.services.clustering.execute import ClusteringCommitResult, execute_clustering
    from hoodpy.services.clustering.plan import (
        ClusteringGroup,
        ClusteringPlan,
        SliceInfo,
        clustering_instants,
        file_groups_in_pending_clustering,
        load_clustering_plan,
    )
    from hoodpy.services.clustering.service import (
        ClusteringService,
        cluster_after_commit,
        resume_pending_clustering,
    )
    from hoodpy.services.clustering.strategy import plan_clustering

_LAZY = {
    "ClusteringCommitResult": "execute",
    "execute_clustering": "execute",
    "ClusteringGroup": "plan",
    "ClusteringPlan": "plan",
    "SliceInfo": "plan",
    "clustering_instants": "plan",
    "file_groups_in_pending_clustering": "plan",
    "load_clustering_plan": "plan",
    "plan_clustering": "strategy",
    "ClusteringService": "service",
    "cluster_after_commit": "service",
    "resume_pending_clustering": "service",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"hoodpy.services.clustering.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hoodpy.services.clustering' has no attribute {name!r}")


__all__ = sorted(_LAZY)

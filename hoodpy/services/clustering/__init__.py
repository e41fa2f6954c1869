"""Clustering: plan (which file slices, in which groups) and execute (rewrite them sorted and sized).

``plan`` (the plan model), ``strategy`` (which slices) and ``layout`` are pure (no Spark); ``execute`` runs
the Spark job and commits the replacecommit; ``service`` schedules and executes (``table.clustering``).
"""

from hoodpy.services.clustering.execute import ClusteringCommitResult, execute_clustering
from hoodpy.services.clustering.plan import (
    ClusteringGroup,
    ClusteringPlan,
    SliceInfo,
    clustering_instants,
    file_groups_in_pending_clustering,
    load_clustering_plan,
)
from hoodpy.services.clustering.service import ClusteringService, cluster_after_commit, resume_pending_clustering
from hoodpy.services.clustering.strategy import plan_clustering

__all__ = [
    "ClusteringCommitResult",
    "ClusteringGroup",
    "ClusteringPlan",
    "ClusteringService",
    "SliceInfo",
    "cluster_after_commit",
    "clustering_instants",
    "execute_clustering",
    "file_groups_in_pending_clustering",
    "load_clustering_plan",
    "plan_clustering",
    "resume_pending_clustering",
]

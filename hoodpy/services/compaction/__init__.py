"""Compaction of merge-on-read tables: plan (which file slices), execute (merge each into a new base file).

The plan model is the timeline's (:mod:`hoodpy.timeline.compaction_plan`: writers below the services read
it too); ``strategy`` (which slices) and ``trigger`` (when writers schedule on their own) are pure;
``execute`` runs the Spark job and commits; ``service`` schedules and executes (``table.compaction``). The
names below are imported on first use, so that reading plans (the command line) does not import Spark.
"""

import importlib

_LAZY = {
    "CompactionCommitResult": "hoodpy.services.compaction.execute",
    "execute_compaction": "hoodpy.services.compaction.execute",
    "CompactionService": "hoodpy.services.compaction.service",
    "compact_after_commit": "hoodpy.services.compaction.service",
    "plan_operations": "hoodpy.services.compaction.strategy",
    "should_compact": "hoodpy.services.compaction.trigger",
    "CompactionOperation": "hoodpy.timeline.compaction_plan",
    "CompactionPlan": "hoodpy.timeline.compaction_plan",
    "load_compaction_plan": "hoodpy.timeline.compaction_plan",
    "pending_compaction_instant": "hoodpy.timeline.compaction_plan",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hoodpy.services.compaction' has no attribute {name!r}")


__all__ = sorted(_LAZY)

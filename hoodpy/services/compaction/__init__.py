"""Compaction of merge-on-read tables: plan (which file slices), execute (merge each into a new base file).

The plan model is the timeline's (:mod:`hoodpy.timeline.compaction_plan`: writers below the services read
it too); ``strategy`` (which slices) and ``trigger`` (when writers schedule on their own) are pure;
``execute`` runs the Spark job and commits; ``service`` schedules and executes (``table.compaction``).
"""

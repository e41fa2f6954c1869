"""Cleaning: plan (which old file versions no retained query needs; pure) and execute (delete, record)."""

from hoodpy.services.clean.execute import CleanResult, execute_clean, load_clean_plan, read_clean_metadata
from hoodpy.services.clean.plan import CleanerPlan, Protected, earliest_commit_to_retain, files_to_clean, plan_clean
from hoodpy.services.clean.retention import check_retained
from hoodpy.services.clean.service import CleanService, clean_after_commit

__all__ = [
    "CleanResult",
    "CleanService",
    "CleanerPlan",
    "Protected",
    "check_retained",
    "clean_after_commit",
    "earliest_commit_to_retain",
    "execute_clean",
    "files_to_clean",
    "load_clean_plan",
    "plan_clean",
    "read_clean_metadata",
]

"""The inspection commands: what each adds to the parser and which rows it prints.

Each command computes its rows with :mod:`hoodpy.inspect`, the code behind the SQL procedures, and takes
the procedure's parameters as options with the same defaults, so ``hoodpy commits T --json`` prints what
``CALL show_commits(path => 'T')`` returns. Limits: a negative ``--limit`` prints every row.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from hoodpy.cli.output import Result
from hoodpy.cli.table import OpenTable
from hoodpy.inspect import commits, file_slices, plans, stats, timeline
from hoodpy.timeline.timeline import Timeline

_COW_LOG_COLUMNS = ("num_delta_files", "total_delta_file_size", "delta_files", "delta_size_compaction_scheduled",
                    "delta_size_compaction_unscheduled", "delta_to_base_radio_compaction_scheduled",
                    "delta_to_base_radio_compaction_unscheduled", "delta_files_compaction_scheduled",
                    "delta_files_compaction_unscheduled")
_COW_LOG_COUNTERS = ("total_log_blocks", "total_corrupt_log_blocks", "total_rollback_blocks", "total_log_records",
                     "total_updated_records_compacted")


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[OpenTable, argparse.Namespace], list[Result]]


def _limit(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--limit", type=int, default=default, help=f"rows to print (default {default}; -1: all)")


def _no_limit(limit: int) -> int | None:
    return None if limit < 0 else limit


# -- commits -------------------------------------------------------------------------------------------
def _configure_commits(p: argparse.ArgumentParser) -> None:
    _limit(p, 10)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--files", action="store_true",
                       help="one row per file group each commit wrote (CALL show_commits_metadata)")
    shown.add_argument("--instant", metavar="T",
                       help="one commit in detail: per partition, per file, and its average record size "
                            "(CALL show_commit_partitions / show_commit_files / show_commit_write_stats)")


def _run_commits(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    if a.instant:
        instant, meta = commits.commit_for_instant(Timeline.load(table.storage), a.instant, table.name)
        limit = _no_limit(a.limit)
        return [
            Result("partitions", f"{instant.action.value} {instant.timestamp}: partitions",
                   commits.commit_partitions(instant, meta, limit=limit)),
            Result("files", f"{instant.action.value} {instant.timestamp}: files",
                   commits.commit_files(instant, meta, limit=limit)),
            Result("write_stats", f"{instant.action.value} {instant.timestamp}: write stats",
                   commits.commit_write_stats(instant, meta)),
        ]
    if a.files:
        return [Result("commits_metadata", "Files written per commit (newest first)",
                       commits.commits_metadata(table.storage, limit=_no_limit(a.limit)), hide=_COW_LOG_COUNTERS,
                       caption="copy-on-write: log counters (always 0) left out; --json has them")]
    return [Result("commits", "Commits (newest first)", commits.commits(table.storage, limit=_no_limit(a.limit)))]


# -- timeline ------------------------------------------------------------------------------------------
def time_argument(end: bool) -> Callable[[str], str | None]:
    """An argparse type: Hudi's time forms as an instant time (``end``: a date means its last moment)."""

    def parse(text: str) -> str | None:
        try:
            return timeline.normalize_time(text, end=end)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return parse


def _configure_timeline(p: argparse.ArgumentParser) -> None:
    _limit(p, 20)
    p.add_argument("--archived", action="store_true", help="add the instants archived under .hoodie/archived")
    p.add_argument("--start", type=time_argument(False), metavar="TIME",
                   help="first instant time (yyyyMMddHHmmss[SSS], yyyy-MM-dd, yyyy/MM/dd, yyyyMMdd)")
    p.add_argument("--end", type=time_argument(True), metavar="TIME",
                   help="last instant time (a date means the end of that day); with --start, no limit applies")


def _run_timeline(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    rows = timeline.timeline_rows(table.storage, limit=_no_limit(a.limit), archived=a.archived, start=a.start,
                                  end=a.end)
    return [Result("timeline", "Timeline (newest first; state times UTC)", rows)]


# -- files ---------------------------------------------------------------------------------------------
def _configure_files(p: argparse.ArgumentParser) -> None:
    _limit(p, 10)
    p.add_argument("--latest", action="store_true",
                   help="only the latest slice of each file group (CALL show_fsview_latest)")
    p.add_argument("--partition", default=file_slices.ALL_PARTITIONS, metavar="GLOB",
                   help="glob over partition paths, e.g. 'city=*' or '2024/*/*'")
    p.add_argument("--max-instant", default="", metavar="T", help="the view as of this instant (exclusive)")
    p.add_argument("--include-max", action="store_true", help="make --max-instant inclusive")
    p.add_argument("--include-inflight", action="store_true", help="count files of pending writes too")


def _run_files(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    selection = file_slices.ViewSelection(max_instant=a.max_instant, include_max=a.include_max,
                                          include_in_flight=a.include_inflight, path_glob=a.partition)
    prefix = f"{table.storage.base_uri}/"
    formats = {"data_file": lambda p: p[len(prefix):] if p.startswith(prefix) else p}
    caption = "data_file relative to the table path; copy-on-write: log file columns left out (--json has them)"
    if a.latest:
        return [Result("latest_slices", "Latest file slice of each file group",
                       file_slices.latest_slices(table.storage, selection, limit=_no_limit(a.limit)),
                       hide=_COW_LOG_COLUMNS, caption=caption, formats=formats)]
    return [Result("slices", "File slices (each file group, newest slice first)",
                   file_slices.all_slices(table.storage, selection, limit=_no_limit(a.limit)),
                   hide=_COW_LOG_COLUMNS, caption=caption, formats=formats)]


# -- stats ---------------------------------------------------------------------------------------------
def _configure_stats(p: argparse.ArgumentParser) -> None:
    _limit(p, 10)
    p.add_argument("--partition", default="", metavar="GLOB", help="file sizes of these partitions only")


def _run_stats(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    limit = _no_limit(a.limit)
    return [
        Result("file_sizes", "Base file sizes in bytes, per commit and over ALL files (CALL stats_file_sizes)",
               stats.file_sizes(table.storage, partition_glob=a.partition, limit=limit)),
        Result("write_amplification", "Write amplification: records written / records updated (CALL stats_wa)",
               stats.write_amplification_rows(table.storage, limit=limit)),
    ]


# -- pending plans -------------------------------------------------------------------------------------
def _configure_clean_plan(p: argparse.ArgumentParser) -> None:
    _limit(p, -1)
    p.add_argument("--files", action="store_true", help="one row per file the plans delete")


def _run_clean_plan(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    limit = _no_limit(a.limit)
    if a.files:
        return [Result("files", "Files pending cleans delete", plans.pending_clean_files(table.storage, limit=limit))]
    return [Result("cleans", "Pending clean plans, per partition", plans.pending_cleans(table.storage, limit=limit))]


def _configure_clustering_plan(p: argparse.ArgumentParser) -> None:
    _limit(p, 20)
    p.add_argument("--all", action="store_true", help="completed clusterings too (CALL show_clustering)")
    p.add_argument("--slices", action="store_true", help="one row per file slice the plans rewrite")


def _run_clustering_plan(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    pending_only, limit = not a.all, _no_limit(a.limit)
    what = "Clustering plans" if a.all else "Pending clustering plans"
    if a.slices:
        return [Result("slices", f"{what}: input file slices",
                       plans.clustering_plan_slices(table.storage, pending_only=pending_only, limit=limit))]
    return [Result("plans", f"{what} (newest first)",
                   plans.clustering_plans(table.storage, pending_only=pending_only, show_partitions=True, limit=limit))]


COMMANDS = (
    Command("commits", "completed commits with their write totals (CALL show_commits)", _configure_commits,
            _run_commits),
    Command("timeline", "every instant with the time of each state (CALL show_timeline)", _configure_timeline,
            _run_timeline),
    Command("files", "file groups and their slices with sizes (CALL show_fsview_all / show_fsview_latest)",
            _configure_files, _run_files),
    Command("stats", "file size histogram and write amplification (CALL stats_file_sizes, stats_wa)",
            _configure_stats, _run_stats),
    Command("clean-plan", "pending clean plans: what each would delete", _configure_clean_plan, _run_clean_plan),
    Command("clustering-plan", "pending clustering plans (CALL show_clustering)", _configure_clustering_plan,
            _run_clustering_plan),
)

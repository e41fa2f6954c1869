"""The file-system view as rows: every file slice (``show_fsview_all``) or the latest slice of each file
group (``show_fsview_latest``), with base file and log file sizes.

The view counts the base files and log files (by their slice's base instant) of the write instants selected
by ``max_instant`` (``include_max``: inclusive) and ``include_in_flight``; file groups replaced by a completed
replacecommit in that selection are left out. ``path_glob`` is a glob over partition paths (``'2024/*/*'``,
``'city=*'``; ``*`` does not cross ``/``). Log files are listed newest first as Java's HoodieLogFile prints
them (``HoodieLogFile{pathStr='<path>', fileLen=<size>}``); the delta-to-base ratios are -1.0 for a slice
without a (non-empty) base file, as Hudi prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from hoodpy.file_group.file_group import BaseFile, FileSlice, LogFile, in_java_slice_order
from hoodpy.file_group.fs_view import list_group_files, slice_instant, slice_instants
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, Action, State
from hoodpy.timeline.timeline import Timeline

ALL_PARTITIONS = "ALL_PARTITIONS"
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)

_SLICE = (
    ("partition", "string"), ("file_id", "string"), ("base_instant", "string"), ("data_file", "string"),
    ("data_file_size", "long"), ("num_delta_files", "long"), ("total_delta_file_size", "long"),
)
ALL_SLICES = columns(*_SLICE, ("delta_files", "string"))
LATEST_SLICES = columns(
    *_SLICE,
    ("delta_size_compaction_scheduled", "long"), ("delta_size_compaction_unscheduled", "long"),
    ("delta_to_base_radio_compaction_scheduled", "double"),
    ("delta_to_base_radio_compaction_unscheduled", "double"),
    ("delta_files_compaction_scheduled", "string"), ("delta_files_compaction_unscheduled", "string"),
)


def partition_matches(partition: str, glob: str) -> bool:
    """Hadoop-style glob over partition path segments (``*`` does not cross ``/``)."""
    if glob == ALL_PARTITIONS:
        return True
    pattern = [s for s in glob.strip("/").split("/") if s != ""]
    segments = [s for s in partition.split("/") if s != ""]
    return len(pattern) == len(segments) and all(fnmatchcase(s, p) for s, p in zip(segments, pattern, strict=True))


@dataclass(frozen=True)
class ViewSelection:
    """Which instants the view counts (Hudi's show_fsview arguments)."""

    max_instant: str = ""  # "" = no bound
    include_max: bool = False
    include_in_flight: bool = False
    exclude_compaction: bool = False
    path_glob: str = ALL_PARTITIONS


def _visible_slices(storage: Storage, timeline: Timeline, selection: ViewSelection, visible: set[str],
                    replaced: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, FileSlice]]:
    max_instant = (selection.max_instant or "").strip()
    earliest = timeline.earliest_instant_time()
    groups: dict[tuple[str, str], dict[str, FileSlice]] = {}
    listed = [f for f in list_group_files(storage) if partition_matches(f.partition_path, selection.path_glob)]
    for t, f in slice_instants(timeline, listed):
        written = slice_instant(f)  # the write whose visibility counts (a log's deltacommit in versions 8, 9)
        archived = earliest is not None and written < earliest and (not max_instant or written <= max_instant)
        key = (f.partition_path, f.file_id)
        if not (written in visible or archived) or key in replaced:
            continue
        slices = groups.setdefault(key, {})
        current = slices.get(t) or FileSlice(f.partition_path, f.file_id, t)
        if isinstance(f, BaseFile):
            slices[t] = replace(current, base_file=f)
        else:  # newest log first, as Java's FileSlice holds them
            slices[t] = replace(current, log_files=in_java_slice_order((*current.log_files, f)))
    return groups


def file_slices(storage: Storage, timeline: Timeline, selection: ViewSelection,
                ) -> dict[tuple[str, str], list[FileSlice]]:
    """(partition, file id) -> file slices (oldest first) visible in the selected view, sorted by key. A slice
    is its base file and the log files named after its base instant (merge-on-read; either may be missing)."""
    max_instant = (selection.max_instant or "").strip()
    states = {State.COMPLETED} | ({State.INFLIGHT, State.REQUESTED} if selection.include_in_flight else set())
    actions = [a for a in _WRITE_ACTIONS if not (selection.exclude_compaction and a == Action.COMPACTION)]
    selected = [
        i for i in timeline.filter(actions=actions, states=states)
        if not max_instant or (i.timestamp <= max_instant if selection.include_max else i.timestamp < max_instant)
    ]
    replaced = set()
    for instant in selected:
        if instant.action == Action.REPLACECOMMIT and instant.is_completed:
            replaced |= timeline.commit_metadata(instant).replaced_file_ids()
    groups = _visible_slices(storage, timeline, selection, {i.timestamp for i in selected}, replaced)
    return {key: [slices[t] for t in sorted(slices)] for key, slices in sorted(groups.items())}


def _log_file_text(storage: Storage, lf: LogFile) -> str:
    """Java's HoodieLogFile.toString."""
    return f"HoodieLogFile{{pathStr='{storage.base_uri}/{lf.path}', fileLen={lf.size}}}"


def _base_columns(storage: Storage, s: FileSlice) -> tuple:
    """partition .. total_delta_file_size: a slice without a base file shows '' and 0, as Hudi does."""
    bf = s.base_file
    return (s.partition_path, s.file_id, s.base_instant_time, f"{storage.base_uri}/{bf.path}" if bf else "",
            bf.size if bf else 0, len(s.log_files), sum(lf.size for lf in s.log_files))


def all_slices(storage: Storage, selection: ViewSelection = ViewSelection(), *, limit: int | None = None) -> Rows:
    """Every file slice of every file group in the view (newest slice first within a group)."""
    rows = [
        (*_base_columns(storage, s), "[" + ", ".join(_log_file_text(storage, lf) for lf in s.log_files) + "]")
        for slices in file_slices(storage, Timeline.load(storage), selection).values()
        for s in reversed(slices)
    ]
    return make_rows(ALL_SLICES, rows, limit)


def _merged_latest(slices: list[FileSlice], upper: str | None, compacting: set[str]) -> FileSlice | None:
    """The latest slice at or before ``upper`` (None: the latest); one whose base instant is a pending
    compaction is merged with the slice before it (Java's getLatestMergedFileSlicesBeforeOrOn)."""
    candidates = [s for s in slices if upper is None or s.base_instant_time <= upper]
    if not candidates:
        return None
    latest = candidates[-1]
    if upper is not None and latest.base_instant_time in compacting and len(candidates) > 1:
        before = candidates[-2]
        latest = replace(before, log_files=in_java_slice_order((*before.log_files, *latest.log_files)))
    return latest


def latest_slices(storage: Storage, selection: ViewSelection = ViewSelection(), *, merge: bool = True,
                  limit: int | None = None) -> Rows:
    """The latest file slice of every file group in the view (``merge``: as of ``max_instant``, by default
    the last completed commit, a pending compaction's slice merged into the one before it). Log sizes are
    split as Hudi 0.14 splits them: "scheduled" the logs named after the slice's base instant, "unscheduled"
    the others (written on top of a pending compaction); in table versions 8 and 9 as Hudi 1.x: "scheduled"
    the logs of completed deltacommits."""
    timeline = Timeline.load(storage)
    upper = (selection.max_instant or "").strip()
    if merge and not upper:
        last = timeline.last_completed_commit()
        if last is None:
            return make_rows(LATEST_SLICES, [])
        upper = last.timestamp
    compacting = {i.timestamp for i in timeline.pending([Action.COMPACTION])}
    rows = []
    for slices in file_slices(storage, timeline, selection).values():
        s = _merged_latest(slices, upper if merge else None, compacting)
        if s is None:
            continue
        own = [lf for lf in s.log_files if lf.base_instant_time == s.base_instant_time]
        other = [lf for lf in s.log_files if lf.base_instant_time != s.base_instant_time]
        base_size = s.base_file.size if s.base_file else 0
        if timeline.layout == LAYOUT_2:  # Hudi 1.x: "scheduled" are the logs of completed deltacommits
            done = [lf for lf in s.log_files if timeline.completion_time(lf.base_instant_time) is not None]
            scheduled = sum(lf.size for lf in done)
            unscheduled = sum(lf.size for lf in s.log_files) - scheduled
        else:
            scheduled, unscheduled = sum(lf.size for lf in own), sum(lf.size for lf in other)
        ratios = (scheduled / base_size, unscheduled / base_size) if base_size > 0 else (-1.0, -1.0)
        rows.append((*_base_columns(storage, s), scheduled, unscheduled, *ratios,
                     "[" + ",".join(_log_file_text(storage, lf) for lf in own) + "]",
                     "[" + ",".join(_log_file_text(storage, lf) for lf in other) + "]"))
    return make_rows(LATEST_SLICES, rows, limit)

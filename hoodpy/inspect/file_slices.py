"""The file-system view as rows: every file slice (``show_fsview_all``) or the latest slice of each file
group (``show_fsview_latest``), with base file sizes.

The view counts base files of the write instants selected by ``max_instant`` (``include_max``: inclusive)
and ``include_in_flight``; file groups replaced by a completed replacecommit in that selection are left
out. ``path_glob`` is a glob over partition paths (``'2024/*/*'``, ``'city=*'``; ``*`` does not cross
``/``). Copy-on-write slices have no log files, so the delta columns are 0 / ``[]`` and the delta-to-base
ratios 0.0 (-1.0 for an empty base file), as Hudi prints them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from hoodpy.file_group.file_group import BaseFile
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action, State
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


def file_slices(storage: Storage, timeline: Timeline, selection: ViewSelection,
                ) -> dict[tuple[str, str], list[BaseFile]]:
    """(partition, file id) -> base files (oldest first) visible in the selected view, sorted by key."""
    max_instant = (selection.max_instant or "").strip()
    states = {State.COMPLETED} | ({State.INFLIGHT, State.REQUESTED} if selection.include_in_flight else set())
    actions = [a for a in _WRITE_ACTIONS if not (selection.exclude_compaction and a == Action.COMPACTION)]
    selected = [
        i for i in timeline.filter(actions=actions, states=states)
        if not max_instant or (i.timestamp <= max_instant if selection.include_max else i.timestamp < max_instant)
    ]
    visible = {i.timestamp for i in selected}
    earliest = timeline.earliest_instant_time()
    replaced = set()
    for instant in selected:
        if instant.action == Action.REPLACECOMMIT and instant.is_completed:
            replaced |= timeline.commit_metadata(instant).replaced_file_ids()
    groups: dict[tuple[str, str], list[BaseFile]] = {}
    for bf in list_base_files(storage):
        if not partition_matches(bf.partition_path, selection.path_glob):
            continue
        t = bf.instant_time
        archived = earliest is not None and t < earliest and (not max_instant or t <= max_instant)
        if (t in visible or archived) and (bf.partition_path, bf.file_id) not in replaced:
            groups.setdefault((bf.partition_path, bf.file_id), []).append(bf)
    for files in groups.values():
        files.sort(key=lambda f: f.instant_time)
    return dict(sorted(groups.items()))


def all_slices(storage: Storage, selection: ViewSelection = ViewSelection(), *, limit: int | None = None) -> Rows:
    """Every file slice of every file group in the view (newest slice first within a group)."""
    base = storage.base_uri
    rows = [
        (partition, file_id, bf.instant_time, f"{base}/{bf.path}", bf.size, 0, 0, "[]")
        for (partition, file_id), files in file_slices(storage, Timeline.load(storage), selection).items()
        for bf in reversed(files)
    ]
    return make_rows(ALL_SLICES, rows, limit)


def latest_slices(storage: Storage, selection: ViewSelection = ViewSelection(), *, merge: bool = True,
                  limit: int | None = None) -> Rows:
    """The latest file slice of every file group in the view (``merge``: as of ``max_instant``, by default
    the last completed commit)."""
    timeline = Timeline.load(storage)
    upper = (selection.max_instant or "").strip()
    if merge and not upper:
        last = timeline.last_completed_commit()
        if last is None:
            return make_rows(LATEST_SLICES, [])
        upper = last.timestamp
    rows = []
    for (partition, file_id), files in file_slices(storage, timeline, selection).items():
        candidates = [f for f in files if not merge or f.instant_time <= upper]
        if not candidates:
            continue
        bf = candidates[-1]
        ratio = 0.0 if bf.size > 0 else -1.0
        rows.append((partition, file_id, bf.instant_time, f"{storage.base_uri}/{bf.path}", bf.size, 0, 0,
                     0, 0, ratio, ratio, "[]", "[]"))
    return make_rows(LATEST_SLICES, rows, limit)

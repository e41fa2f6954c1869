"""How one column's values are laid out over the base files: each file's [min, max] from its parquet
footer statistics, for the latest file slices or as of an instant, and before / after a clustering.

A well-clustered column has narrow, barely overlapping ranges, so a filter on it skips most files; z-order
and hilbert spread that over several columns. ``mean_overlap`` (how many other files of its partition the
average file's range intersects) puts a number on it: a filter on the column reads about that many files
more than it needs to in each partition it does not prune.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hoodpy.errors import ColumnNotFoundError
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.read.data_skipping import column_ranges
from hoodpy.services.clean.retention import check_retained
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline


@dataclass(frozen=True)
class FileRange:
    partition_path: str
    file_id: str
    base_instant: str
    size: int
    num_rows: int
    min: Any  # None: no statistics, or only nulls
    max: Any


@dataclass(frozen=True)
class Layout:
    """One column's ranges over the latest slices of a view, by partition, then sorted by (min, max); files
    without a range (no statistics, all null) come last in their partition."""

    label: str
    as_of: str | None  # None: the latest completed state
    column: str
    files: tuple[FileRange, ...]

    @property
    def ranged(self) -> list[FileRange]:
        return [f for f in self.files if f.min is not None and f.max is not None]

    @property
    def mean_overlap(self) -> float:
        """How many other files of its partition the average file's [min, max] intersects (0: disjoint)."""
        ranged = self.ranged
        if not ranged:
            return 0.0
        overlaps = sum(1 for a in ranged for b in ranged if a is not b and a.partition_path == b.partition_path
                       and a.min <= b.max and b.min <= a.max)
        return overlaps / len(ranged)

    def records(self) -> list[dict[str, Any]]:
        return [{"partition_path": f.partition_path, "file_id": f.file_id, "base_instant": f.base_instant,
                 "size": f.size, "num_rows": f.num_rows, "min": f.min, "max": f.max} for f in self.files]


def column_layout(storage: Storage, column: str, *, as_of: str | None = None, label: str = "latest",
                  timeline: Timeline | None = None) -> Layout:
    """``column``'s [min, max] per base file of the view as of ``as_of`` (None: latest)."""
    timeline = timeline or Timeline.load(storage)
    if as_of is not None:
        check_retained(storage, timeline, as_of)  # cleaned files would silently drop out of the picture
    base_files = FileSystemView.load(storage, timeline, as_of=as_of).latest_base_files()
    ranges = column_ranges(storage, base_files)
    if base_files and not any(column in r for r in ranges):
        raise ColumnNotFoundError(column, sorted({c for r in ranges for c in r if not c.startswith("_hoodie_")}))
    files = []
    for bf, by_column in zip(base_files, ranges, strict=True):
        r = by_column.get(column)
        files.append(FileRange(bf.partition_path, bf.file_id, bf.instant_time, bf.size,
                               r.num_values if r is not None else 0,
                               r.min if r is not None else None, r.max if r is not None else None))
    files.sort(key=lambda f: (f.partition_path, f.min is None or f.max is None,
                              (f.min, f.max) if f.min is not None else (0, 0), f.file_id))
    return Layout(label, as_of, column, tuple(files))


def _previous_commit(timeline: Timeline, instant_time: str) -> str | None:
    earlier = [i.timestamp for i in timeline.completed_commits() if i.timestamp < instant_time]
    return earlier[-1] if earlier else None


def clustering_layouts(storage: Storage, column: str, *, before: str | None = None) -> list[Layout]:
    """The layouts to compare.

    ``before`` given (an instant time): the view as of that instant, and the latest. Otherwise, with a
    completed replacecommit on the timeline (clustering, or insert_overwrite): the view just before the last
    one and right after it. Without one: the latest layout alone.
    """
    timeline = Timeline.load(storage)
    if before is not None:
        return [column_layout(storage, column, as_of=before, label=f"before (as of {before})", timeline=timeline),
                column_layout(storage, column, label="latest", timeline=timeline)]
    replaces = timeline.completed_replacecommits()
    if not replaces:
        return [column_layout(storage, column, timeline=timeline)]
    last = replaces[-1]
    what = f"{last.timestamp} ({timeline.commit_metadata(last).operation_type.lower()})"
    previous = _previous_commit(timeline, last.timestamp)
    before_layout = (column_layout(storage, column, as_of=previous, label=f"before {what}", timeline=timeline)
                     if previous is not None else Layout(f"before {what}", previous, column, ()))
    return [before_layout,
            column_layout(storage, column, as_of=last.timestamp, label=f"after {what}", timeline=timeline)]

"""The file-system view: which base files make up the table as of an instant.

A base file counts when its instant is a completed write on the active timeline, or older than the
earliest active instant (archived, hence committed). File groups replaced by a completed replacecommit
at or before the view's instant are left out. Files of pending or failed writes are invisible. "At or
before" is by completion time (table versions 8 and 9 record it; in version 6 it is the instant time).
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.file_group.file_group import BaseFile, FileGroup, FileSlice
from hoodpy.file_group.naming import BASE_FILE_EXTENSION, parse_base_file_name
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import METAFOLDER, Timeline


def _partition_of(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""


def list_base_files(storage: Storage, partitions: Iterable[str] | None = None) -> list[BaseFile]:
    """Every base file in the table (or in the given partitions), committed or not."""
    if partitions is None:
        listing = [f for f in storage.list_files("", recursive=True)
                   if not f.path.startswith(METAFOLDER + "/")]
    else:
        listing = [f for p in set(partitions) for f in storage.list_files(p)]
    out = []
    for f in listing:
        name = f.path.rsplit("/", 1)[-1]
        if not name.endswith(BASE_FILE_EXTENSION) or name.startswith("."):
            continue
        parsed = parse_base_file_name(name)
        if parsed is not None:
            out.append(BaseFile(_partition_of(f.path), parsed, f.size))
    return out


class FileSystemView:
    """File groups of a table as of an instant (None: the latest completed state)."""

    def __init__(self, timeline: Timeline, base_files: Iterable[BaseFile], as_of: str | None = None):
        self.timeline = timeline
        self.as_of = as_of
        earliest = timeline.earliest_instant_time()
        replaced = set()
        for instant in timeline.completed_replacecommits():
            if as_of is None or instant.completed_at <= as_of:
                replaced |= timeline.commit_metadata(instant).replaced_file_ids()
        self.replaced_file_ids = replaced
        groups: dict[tuple[str, str], FileGroup] = {}
        for bf in base_files:
            t = bf.instant_time
            committed = timeline.is_completed_write(t) or (earliest is not None and t < earliest)
            if not committed or not timeline.visible_as_of(t, as_of):
                continue
            key = (bf.partition_path, bf.file_id)
            if key in replaced:
                continue
            groups.setdefault(key, FileGroup(bf.partition_path, bf.file_id)).add(bf)
        self._groups = groups

    @classmethod
    def load(cls, storage: Storage, timeline: Timeline, *, as_of: str | None = None,
             partitions: Iterable[str] | None = None) -> FileSystemView:
        return cls(timeline, list_base_files(storage, partitions), as_of)

    def file_groups(self) -> list[FileGroup]:
        return list(self._groups.values())

    def file_group(self, partition_path: str, file_id: str) -> FileGroup | None:
        return self._groups.get((partition_path, file_id))

    def partitions(self) -> list[str]:
        return sorted({p for p, _ in self._groups})

    def latest_file_slices(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        wanted = set(partitions) if partitions is not None else None
        out = []
        for (p, _), group in sorted(self._groups.items()):
            if wanted is not None and p not in wanted:
                continue
            latest = group.latest_slice()
            if latest is not None:
                out.append(latest)
        return out

    def latest_base_files(self, partitions: Iterable[str] | None = None) -> list[BaseFile]:
        return [s.base_file for s in self.latest_file_slices(partitions)]

    def is_replaced(self, partition_path: str, file_id: str) -> bool:
        return (partition_path, file_id) in self.replaced_file_ids


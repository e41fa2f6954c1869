"""The file-system view: which base files and log files make up the table as of an instant.

A base file counts when its instant is a committed write: completed on the active timeline, or older than
the earliest active instant (archived). A log file counts when its file slice's base instant does: which of
its blocks count is decided when it is read (each block names the instant that wrote it). In table version 6
a log names its slice's base instant; while a compaction is pending, writers already append to the slice it
will create (logs named after the compaction instant): those logs extend the slice before it, as Java's view
merges them. In versions 8 and 9 a log names the deltacommit that wrote it and joins the newest slice whose
base instant is at or before that deltacommit's completion time (Hudi 1.x's HoodieFileGroup). File groups
replaced by a completed replacecommit at or before the view's instant are left out. Files of pending or
failed writes are invisible. "At or before" is by completion time (table versions 8 and 9 record it; in
version 6 it is the instant time).

Where the files come from: a table whose hoodie.properties lists the metadata table's ``files`` partition is
listed through it (:mod:`hoodpy.metadata_table.reader`: the committed base and log files, no storage listing);
other tables, and a metadata table that cannot be read (logged), are listed on storage. Both give the view the
same file groups: the metadata table lists exactly the files of completed instants, and the view keeps only
those of a storage listing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import MetadataTableError
from hoodpy.file_group.file_group import BaseFile, FileGroup, FileSlice, LogFile
from hoodpy.file_group.naming import BASE_FILE_EXTENSION, join_partition, parse_base_file_name, parse_log_file_name
from hoodpy.metadata_table.reader import has_files_partition, read_file_listing
from hoodpy.storage import Storage
from hoodpy.storage.storage import FileInfo
from hoodpy.timeline.instant import LAYOUT_2, Action
from hoodpy.timeline.timeline import METAFOLDER, CommittedInstants, Timeline

_log = logging.getLogger(__name__)


def _list(storage: Storage, partitions: Iterable[str] | None) -> list[FileInfo]:
    if partitions is None:
        return [f for f in storage.list_files("", recursive=True) if not f.path.startswith(METAFOLDER + "/")]
    return [f for p in set(partitions) for f in storage.list_files(p)]


# A listed file: (partition path, file name, size).
_Listed = tuple[str, str, int]


def _named(listing: Iterable[FileInfo]) -> list[_Listed]:
    return [(partition, name, f.size) for f in listing for partition, _, name in (f.path.rpartition("/"),)]


def _table_files(storage: Storage, timeline: Timeline, partitions: Iterable[str] | None) -> list[_Listed]:
    """The table's files as a view of ``timeline`` needs them: from the metadata table when the table has one
    (see the module docstring), else listed on storage."""
    if has_files_partition(load_table_properties(storage)):
        try:
            listing = read_file_listing(storage, timeline, partitions)
        except MetadataTableError as e:
            _log.warning("%s; listing the table's files on storage instead", e)
        else:
            wanted = listing.partitions() if partitions is None else sorted(set(partitions))
            return [(p, name, size) for p in wanted for name, size in sorted(listing.files(p).items())]
    return _named(_list(storage, partitions))


def table_listing(storage: Storage, timeline: Timeline, partitions: Iterable[str] | None = None) -> list[FileInfo]:
    """The table's files as a view of ``timeline`` needs them (:func:`_table_files`)."""
    listed = _table_files(storage, timeline, partitions)
    return [FileInfo(join_partition(p, name), size, None) for p, name, size in listed]


def _base_files(listing: Iterable[FileInfo]) -> list[BaseFile]:
    return _base_files_of(_named(listing))


def _log_files(listing: Iterable[FileInfo], *, cdc: bool = False) -> list[LogFile]:
    """The data log files of ``listing`` (with ``cdc``: its CDC log files too)."""
    return _log_files_of(_named(listing), cdc=cdc)


def _base_files_of(listing: Iterable[_Listed]) -> list[BaseFile]:
    out = []
    append, parse = out.append, parse_base_file_name  # thousands of files: no attribute lookups per file
    for partition, name, size in listing:
        if not name.endswith(BASE_FILE_EXTENSION) or name.startswith("."):
            continue
        parsed = parse(name)
        if parsed is not None:
            append(BaseFile(partition, parsed, size))
    return out


def _log_files_of(listing: Iterable[_Listed], *, cdc: bool = False) -> list[LogFile]:
    out = []
    for partition, name, size in listing:
        if not name.startswith("."):
            continue  # every log file name does (a base file's does not): no pattern match for those
        parsed = parse_log_file_name(name, cdc=cdc)
        if parsed is not None:
            out.append(LogFile(partition, parsed, size))
    return out


def list_base_files(storage: Storage, partitions: Iterable[str] | None = None) -> list[BaseFile]:
    """Every base file in the table (or in the given partitions), committed or not: a storage listing."""
    return _base_files(_list(storage, partitions))


def table_base_files(storage: Storage, timeline: Timeline, partitions: Iterable[str] | None = None) -> list[BaseFile]:
    """The base files a view of ``timeline`` may hold (:func:`table_listing`)."""
    return _base_files_of(_table_files(storage, timeline, partitions))


def table_group_files(storage: Storage, timeline: Timeline, partitions: Iterable[str] | None = None,
                      ) -> list[BaseFile | LogFile]:
    """The base and log files a view of ``timeline`` may hold (:func:`table_listing`), CDC log files included
    (they go with their file slice)."""
    listing = _table_files(storage, timeline, partitions)
    return [*_base_files_of(listing), *_log_files_of(listing, cdc=True)]


def list_group_files(storage: Storage, partitions: Iterable[str] | None = None) -> list[BaseFile | LogFile]:
    """Every base file and log file (data and CDC) in the table (or in the given partitions), committed or not."""
    listing = _named(_list(storage, partitions))
    return [*_base_files_of(listing), *_log_files_of(listing, cdc=True)]


def slice_instant(f: BaseFile | LogFile) -> str:
    """The instant a file's name carries: a base file's, a log file's slice base instant (table version 6) or
    deltacommit (versions 8 and 9)."""
    return f.instant_time if isinstance(f, BaseFile) else f.base_instant_time


def slice_instants(timeline: Timeline, files: Iterable[BaseFile | LogFile]) -> list[tuple[str, BaseFile | LogFile]]:
    """(base instant of the file slice it belongs to, file) for each file. Table version 6: the instant its name
    carries. Versions 8 and 9: a log file joins the newest base file of its group at or before its
    deltacommit's completion time (its own instant without one), as FileGroup.add_log_completed_at does."""
    files = list(files)
    if timeline.layout != LAYOUT_2:
        return [(slice_instant(f), f) for f in files]
    bases: dict[tuple[str, str], list[str]] = {}
    for f in files:
        if isinstance(f, BaseFile):
            bases.setdefault((f.partition_path, f.file_id), []).append(f.instant_time)
    out: list[tuple[str, BaseFile | LogFile]] = []
    for f in files:
        if isinstance(f, BaseFile):
            out.append((f.instant_time, f))
            continue
        done = timeline.completion_time(f.base_instant_time) or f.base_instant_time
        earlier = [t for t in bases.get((f.partition_path, f.file_id), []) if t <= done]
        out.append((max(earlier) if earlier else f.base_instant_time, f))
    return out


class FileSystemView:
    """File groups of a table as of an instant (None: the latest completed state)."""

    def __init__(self, timeline: Timeline, base_files: Iterable[BaseFile], as_of: str | None = None,
                 log_files: Iterable[LogFile] = ()):
        self.timeline = timeline
        self.as_of = as_of
        log_files = tuple(log_files)
        # Every listed log file, committed or not: a merge-on-read write numbers its new log file after them.
        self.listed_log_files = log_files
        replaced = set()
        for instant in timeline.completed_replacecommits():
            if as_of is None or instant.completed_at <= as_of:
                replaced |= timeline.commit_metadata(instant).replaced_file_ids()
        self.replaced_file_ids = replaced
        committed = timeline.committed(as_of)
        groups: dict[tuple[str, str], FileGroup] = {}

        def group(f: BaseFile | LogFile) -> FileGroup | None:
            key = (f.partition_path, f.file_id)
            if key in replaced:
                return None
            return groups.setdefault(key, FileGroup(f.partition_path, f.file_id))

        self._add_base_files(committed, base_files, groups, replaced)
        if timeline.layout == LAYOUT_2:
            self._add_logs_by_completion(timeline, committed, log_files, group)
        else:
            self._add_logs_by_base_instant(timeline, committed, log_files, group)
        self._groups = groups

    @staticmethod
    def _add_base_files(committed: CommittedInstants, base_files: Iterable[BaseFile],
                        groups: dict[tuple[str, str], FileGroup], replaced: set) -> None:
        """Each group's committed base files as its slices, oldest first (a later-listed base file of the same
        instant wins, as FileGroup.add leaves it): built once per group, not re-sorted per file."""
        by_group: dict[tuple[str, str], dict[str, BaseFile]] = {}
        verdicts: dict[str, bool] = {}  # a few instants for thousands of files
        for bf in base_files:
            name = bf.name
            instant = name.instant_time
            ok = verdicts.get(instant)
            if ok is None:
                ok = verdicts[instant] = instant in committed
            if ok:
                by_group.setdefault((bf.partition_path, name.file_id), {})[instant] = bf
        for key, files in by_group.items():
            if key not in replaced:
                groups[key] = FileGroup(key[0], key[1], [FileSlice(key[0], key[1], t, files[t]) for t in sorted(files)])

    @staticmethod
    def _add_logs_by_completion(timeline: Timeline, committed: CommittedInstants, log_files: Iterable[LogFile],
                                group: Callable[[LogFile], FileGroup | None]) -> None:
        """Table versions 8 and 9: each log is named after the deltacommit that wrote it and joins a slice by
        that deltacommit's completion time. Logs of writes not committed (as of the view) are left out: none
        of their blocks would count. A pending compaction's slice needs no place of its own here: Hudi reads
        it merged with the slice before it, where its logs land."""
        for lf in sorted(log_files, key=lambda f: f.name.order):
            if lf.base_instant_time in committed and (g := group(lf)) is not None:
                g.add_log_completed_at(lf, timeline.completion_time(lf.base_instant_time) or lf.base_instant_time)

    @staticmethod
    def _add_logs_by_base_instant(timeline: Timeline, committed: CommittedInstants,
                                  log_files: Iterable[LogFile],
                                  group: Callable[[LogFile], FileGroup | None]) -> None:
        """Table version 6: each log names the base instant of its slice."""
        # A compaction completes as a commit of the same time; its requested / inflight files stay.
        compacting = {i.timestamp for i in timeline.pending([Action.COMPACTION])
                      if not timeline.is_completed_write(i.timestamp)}
        deferred = []
        for lf in log_files:
            if lf.base_instant_time in compacting:
                deferred.append(lf)  # after every committed slice is in place
            elif lf.base_instant_time in committed and (g := group(lf)) is not None:
                g.add_log(lf)
        for lf in deferred:
            if (g := group(lf)) is not None:
                g.add_log(lf, pending_compaction=True)

    @classmethod
    def load(cls, storage: Storage, timeline: Timeline, *, as_of: str | None = None,
             partitions: Iterable[str] | None = None) -> FileSystemView:
        listing = _table_files(storage, timeline, partitions)
        return cls(timeline, _base_files_of(listing), as_of, _log_files_of(listing))

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
        """The base files of the latest slices (a slice of log files only has none)."""
        return [s.base_file for s in self.latest_file_slices(partitions) if s.base_file is not None]

    def is_replaced(self, partition_path: str, file_id: str) -> bool:
        return (partition_path, file_id) in self.replaced_file_ids

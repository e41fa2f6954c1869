"""Base files, log files, file slices and file groups."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from hoodpy.file_group.naming import BaseFileName, LogFileName, join_partition


@dataclass(frozen=True)
class _GroupFile:
    """A file of a file group in a partition: what base files and log files share."""

    partition_path: str
    name: BaseFileName | LogFileName
    size: int

    @property
    def file_id(self) -> str:
        return self.name.file_id

    @property
    def file_name(self) -> str:
        return self.name.name

    @property
    def path(self) -> str:
        """Relative to the table base path, as write stats record it."""
        return join_partition(self.partition_path, self.file_name)


@dataclass(frozen=True)
class BaseFile(_GroupFile):
    name: BaseFileName

    @property
    def instant_time(self) -> str:
        return self.name.instant_time


@dataclass(frozen=True)
class LogFile(_GroupFile):
    """A merge-on-read log file: blocks appended to the file slice with base instant ``base_instant_time``."""

    name: LogFileName

    @property
    def base_instant_time(self) -> str:
        return self.name.base_instant_time


def in_java_slice_order(log_files: Iterable[LogFile]) -> tuple[LogFile, ...]:
    """Log files in the order a Java FileSlice holds them (HoodieLogFile's reverse comparator), as Java's plans
    and procedures list them."""
    return tuple(sorted(log_files, key=lambda f: f.name.order, reverse=True))


@dataclass(frozen=True)
class FileSlice:
    """A version of a file group: a base file and the log files written on top of it, ordered by version
    then write token. Copy-on-write slices have no log files; a merge-on-read slice may have no base file
    (a file group written straight to logs)."""

    partition_path: str
    file_id: str
    base_instant_time: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)  # oldest first

    def _slice(self, base_instant_time: str) -> FileSlice:
        for s in self.slices:
            if s.base_instant_time == base_instant_time:
                return s
        return FileSlice(self.partition_path, self.file_id, base_instant_time)

    def _put(self, new: FileSlice) -> None:
        self.slices = [s for s in self.slices if s.base_instant_time != new.base_instant_time] + [new]
        self.slices.sort(key=lambda s: s.base_instant_time)

    def add(self, base_file: BaseFile) -> None:
        self._put(replace(self._slice(base_file.instant_time), base_file=base_file))

    def add_log(self, log_file: LogFile, *, pending_compaction: bool = False) -> None:
        """Add a log file to the slice of its base instant; ``pending_compaction``: its base instant is a
        compaction not yet completed, so (as Java reads it) the log extends the slice before it instead."""
        current = self._slice(log_file.base_instant_time)
        if pending_compaction:
            earlier = [s for s in self.slices if s.base_instant_time < log_file.base_instant_time]
            current = earlier[-1] if earlier else current
        self._append_log(current, log_file)

    def add_log_completed_at(self, log_file: LogFile, completion_time: str) -> None:
        """Add a log file of table versions 8 and 9 (named after the deltacommit that wrote it, which
        completed at ``completion_time``) as Hudi 1.x slices by completion time: to the newest slice whose
        base instant is at or before that completion time, so a log completed after a compaction started
        extends the compaction's slice; with no such slice it starts one at its own instant. Add base files
        first, and logs in name order."""
        earlier = [s for s in self.slices if s.base_instant_time <= completion_time]
        self._append_log(earlier[-1] if earlier else self._slice(log_file.base_instant_time), log_file)

    def _append_log(self, current: FileSlice, log_file: LogFile) -> None:
        logs = sorted((*current.log_files, log_file), key=lambda f: f.name.order)
        self._put(replace(current, log_files=tuple(logs)))

    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None

    def slice_as_of(self, instant_time: str) -> FileSlice | None:
        """The newest slice whose base instant is at or before ``instant_time``."""
        candidates = [s for s in self.slices if s.base_instant_time <= instant_time]
        return candidates[-1] if candidates else None

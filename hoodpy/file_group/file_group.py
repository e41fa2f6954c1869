"""Base files, file slices and file groups of a copy-on-write table."""

from __future__ import annotations

from dataclasses import dataclass, field

from hoodpy.file_group.naming import BaseFileName, join_partition


@dataclass(frozen=True)
class BaseFile:
    partition_path: str
    name: BaseFileName
    size: int

    @property
    def file_id(self) -> str:
        return self.name.file_id

    @property
    def instant_time(self) -> str:
        return self.name.instant_time

    @property
    def file_name(self) -> str:
        return self.name.name

    @property
    def path(self) -> str:
        """Relative to the table base path, as write stats record it."""
        return join_partition(self.partition_path, self.file_name)


@dataclass(frozen=True)
class FileSlice:
    """A version of a file group. Copy-on-write slices are a base file only (no log files)."""

    base_file: BaseFile

    @property
    def base_instant_time(self) -> str:
        return self.base_file.instant_time

    @property
    def file_id(self) -> str:
        return self.base_file.file_id

    @property
    def partition_path(self) -> str:
        return self.base_file.partition_path


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)  # oldest first

    def add(self, base_file: BaseFile) -> None:
        self.slices.append(FileSlice(base_file))
        self.slices.sort(key=lambda s: s.base_instant_time)

    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None

    def slice_as_of(self, instant_time: str) -> FileSlice | None:
        """The newest slice whose base instant is at or before ``instant_time``."""
        candidates = [s for s in self.slices if s.base_instant_time <= instant_time]
        return candidates[-1] if candidates else None

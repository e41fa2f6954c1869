"""File names in a file group: base files ``<fileId>_<writeToken>_<instantTime>.parquet`` and log files
``.<fileId>_<baseInstantTime>.log.<version>_<writeToken>`` (merge-on-read)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE_RE = re.compile(r"^(?P<file_id>[^_]+)_(?P<write_token>[^_]+)_(?P<instant>\d{14}(\d{3})?)\.parquet$")
# Java's FSUtils.LOG_FILE_PATTERN for data log files; CDC log files (a suffix after the token) are not data.
_LOG_FILE_RE = re.compile(
    r"^\.(?P<file_id>[^_]+)_(?P<instant>\d{14}(\d{3})?)\.log\.(?P<version>\d+)_(?P<write_token>\d+-\d+-\d+)$")


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str

    @property
    def name(self) -> str:
        return f"{self.file_id}_{self.write_token}_{self.instant_time}{BASE_FILE_EXTENSION}"


def parse_base_file_name(name: str) -> BaseFileName | None:
    """The parts of a base file name, or None when the name is not one."""
    m = _BASE_FILE_RE.match(name)
    if not m:
        return None
    return BaseFileName(m.group("file_id"), m.group("write_token"), m.group("instant"))


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    # Table version 6: the instant of the file slice the log belongs to, not the write's; versions 8 and 9:
    # the deltacommit that wrote it (its slice is then found by completion time, see FileGroup).
    base_instant_time: str
    version: int
    write_token: str

    @property
    def name(self) -> str:
        return f".{self.file_id}_{self.base_instant_time}.log.{self.version}_{self.write_token}"

    @property
    def order(self) -> tuple[str, int, str]:
        """Position among a slice's log files, as Java's HoodieLogFile comparator orders them: by base instant
        (a slice read during a pending compaction also holds the next slice's logs), version, then write
        token (compared as text)."""
        return self.base_instant_time, self.version, self.write_token


def parse_log_file_name(name: str) -> LogFileName | None:
    """The parts of a data log file name, or None when the name is not one."""
    m = _LOG_FILE_RE.match(name)
    if not m:
        return None
    return LogFileName(m.group("file_id"), m.group("instant"), int(m.group("version")), m.group("write_token"))


def new_file_id() -> str:
    """A new file group id: uuid4 plus Hudi's '-0' suffix (the file-group index, always 0 here)."""
    return f"{uuid.uuid4()}-0"


def write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


def base_file_name(file_id: str, token: str, instant_time: str) -> str:
    return BaseFileName(file_id, token, instant_time).name


def join_partition(partition_path: str, name: str) -> str:
    """Relative path of a file in a partition ("" is the non-partitioned root)."""
    return f"{partition_path}/{name}" if partition_path else name

"""File names in a file group: base files ``<fileId>_<writeToken>_<instantTime>.parquet``, log files
``.<fileId>_<baseInstantTime>.log.<version>_<writeToken>`` (merge-on-read) and CDC log files, a log file name
plus ``-cdc`` (Hudi 0.14's HoodieCDCUtils.CDC_LOGFILE_SUFFIX; tables with ``hoodie.table.cdc.enabled``)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE_RE = re.compile(r"^(?P<file_id>[^_]+)_(?P<write_token>[^_]+)_(?P<instant>\d{14}(\d{3})?)\.parquet$")
# Java's FSUtils.LOG_FILE_PATTERN for data log files; CDC log files (a suffix after the token) are not data.
_LOG_FILE_RE = re.compile(
    r"^\.(?P<file_id>[^_]+)_(?P<instant>\d{14}(\d{3})?)\.log\.(?P<version>\d+)_(?P<write_token>\d+-\d+-\d+)"
    r"(?P<suffix>-cdc)?$")
CDC_SUFFIX = "-cdc"


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
    suffix: str = ""  # CDC_SUFFIX for a CDC log file

    @property
    def name(self) -> str:
        return f".{self.file_id}_{self.base_instant_time}.log.{self.version}_{self.write_token}{self.suffix}"

    @property
    def is_cdc(self) -> bool:
        return self.suffix == CDC_SUFFIX

    @property
    def order(self) -> tuple[str, int, str]:
        """Position among a slice's log files, as Java's HoodieLogFile comparator orders them: by base instant
        (a slice read during a pending compaction also holds the next slice's logs), version, then write
        token (compared as text)."""
        return self.base_instant_time, self.version, self.write_token


def parse_log_file_name(name: str, *, cdc: bool = False) -> LogFileName | None:
    """The parts of a data log file name (with ``cdc``: of a CDC log file too), or None when the name is not
    one. CDC log files hold no table data: readers of file slices never see them; the cleaner, restore and
    rollback treat them as files of their slice (base instant: the commit that wrote them)."""
    m = _LOG_FILE_RE.match(name)
    if not m or (m.group("suffix") and not cdc):
        return None
    return LogFileName(m.group("file_id"), m.group("instant"), int(m.group("version")), m.group("write_token"),
                       m.group("suffix") or "")


def cdc_log_file_name(file_id: str, instant_time: str, token: str) -> str:
    """The CDC log file a copy-on-write merge of ``instant_time`` writes next to its new base file: version 1
    of a log named after the new file slice, as Java's HoodieCDCLogger starts it."""
    return LogFileName(file_id, instant_time, 1, token, CDC_SUFFIX).name


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

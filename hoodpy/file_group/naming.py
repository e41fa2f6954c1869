"""Base file names: ``<fileId>_<writeToken>_<instantTime>.parquet``."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE_RE = re.compile(r"^(?P<file_id>[^_]+)_(?P<write_token>[^_]+)_(?P<instant>\d{14}(\d{3})?)\.parquet$")


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

"""Write markers of merge-on-read log files.

A log file's name carries its file slice's base instant, not the write that created it. So before a task
creates a log file it records it in the write's marker folder, as Java Hudi 0.14 does with direct markers:
``.hoodie/.temp/<instant>/<partition>/<log file name>.marker.APPEND``. From the markers a commit finds the log
files of failed task attempts (written, named by no write stat) and a rollback those of a failed write. The
folder is removed once the write completed (or was rolled back).
"""

from __future__ import annotations

from hoodpy.file_group.naming import join_partition, parse_log_file_name
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import instant_temp_dir

APPEND = "APPEND"  # Java's IOType of a log file's marker
_SUFFIX = f".marker.{APPEND}"


def marker_path(instant_time: str, partition_path: str, file_name: str) -> str:
    """The marker of log file ``file_name`` in ``partition_path`` written by ``instant_time``."""
    return f"{instant_temp_dir(instant_time)}/{join_partition(partition_path, file_name)}{_SUFFIX}"


def create_marker(storage: Storage, instant_time: str, partition_path: str, file_name: str) -> None:
    """Record, before creating it, that ``instant_time`` writes log file ``file_name``."""
    storage.write_bytes(marker_path(instant_time, partition_path, file_name), b"")


def marked_log_files(storage: Storage, instant_time: str) -> list[str]:
    """The log files, CDC log files included (paths relative to the base path), that ``instant_time``'s markers
    name, whether or not they were written."""
    folder = instant_temp_dir(instant_time) + "/"
    out = []
    for f in storage.list_files(instant_temp_dir(instant_time), recursive=True):
        rel = f.path[len(folder):] if f.path.startswith(folder) else None
        if rel is None or not rel.endswith(_SUFFIX):
            continue
        rel = rel[:-len(_SUFFIX)]
        if parse_log_file_name(rel.rsplit("/", 1)[-1], cdc=True) is not None:
            out.append(rel)
    return sorted(out)

"""Write markers: the files a write creates, recorded before each file exists.

A log file's name carries its file slice's base instant, not the write that created it. So before a task
creates a file it records it in the write's marker folder, as Java Hudi 0.14 does with direct markers:
``.hoodie/.temp/<instant>/<partition>/<file name>.marker.<IOType>`` (APPEND for a log file, CREATE for a base
file). From the markers a commit finds the log files of failed task attempts (written, named by no write stat)
and a rollback those of a failed write. The folder is removed once the write completed (or was rolled back or
aborted): a task that finds its marker gone after closing its file deletes the file (:func:`confirm_marked`),
since no commit will name it, and a marker folder of an instant the timeline no longer holds names the files
a task wrote after its write was aborted (:func:`marker_folders`), which the next write removes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hoodpy.errors import WriteAbortedError
from hoodpy.file_group.naming import join_partition, parse_base_file_name, parse_log_file_name
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import TEMPFOLDER, instant_temp_dir

APPEND = "APPEND"  # Java's IOType of a log file's marker
CREATE = "CREATE"  # of a base file (Java marks a merged one MERGE; a rollback deletes both kinds alike)
_MARKER = re.compile(r"\.marker\.(APPEND|CREATE|MERGE)$")


def marker_path(instant_time: str, partition_path: str, file_name: str, io_type: str = APPEND) -> str:
    """The marker of file ``file_name`` in ``partition_path`` written by ``instant_time``."""
    return f"{instant_temp_dir(instant_time)}/{join_partition(partition_path, file_name)}.marker.{io_type}"


def create_marker(storage: Storage, instant_time: str, partition_path: str, file_name: str) -> None:
    """Record, before creating it, that ``instant_time`` writes log file ``file_name``."""
    storage.write_bytes(marker_path(instant_time, partition_path, file_name), b"")


def base_file_marker(rel_path: str) -> str | None:
    """The marker of the base file at ``rel_path`` (relative to the table), under the instant its name
    carries; None when the name is not a base file's."""
    partition, _, name = rel_path.rpartition("/")
    parsed = parse_base_file_name(name)
    return None if parsed is None else marker_path(parsed.instant_time, partition, name, CREATE)


def confirm_marked(storage: Storage, marker: str | None, written: Iterable[str]) -> None:
    """Check, once a task closed its file, that the file can still be committed: its ``marker`` is there. The
    folder goes when the write completes (after its tasks), is aborted or rolled back; a task still running then
    (a failed job's other task, a zombie attempt) wrote files no commit will name: ``written`` (the file and any
    other the task wrote for it) are deleted and the task fails with :class:`WriteAbortedError`."""
    if marker is None or storage.exists(marker):
        return
    written = list(written)
    for rel in written:
        storage.delete(rel)
    raise WriteAbortedError(written[0])


def marked_files(storage: Storage, instant_time: str) -> list[str]:
    """The files (relative to the base path) ``instant_time``'s markers name, whether or not they were
    written."""
    folder = instant_temp_dir(instant_time) + "/"
    listed = storage.list_files(instant_temp_dir(instant_time), recursive=True)
    return sorted(_MARKER.sub("", f.path[len(folder):]) for f in listed
                  if f.path.startswith(folder) and _MARKER.search(f.path))


def marker_folders(storage: Storage) -> list[str]:
    """The instant times that have a marker folder."""
    return sorted(t for t in (d.rsplit("/", 1)[-1] for d in storage.list_dirs(TEMPFOLDER)) if t.isdigit())


def marked_log_files(storage: Storage, instant_time: str) -> list[str]:
    """The log files, CDC log files included (paths relative to the base path), that ``instant_time``'s markers
    name, whether or not they were written."""
    return [rel for rel in marked_files(storage, instant_time)
            if parse_log_file_name(rel.rsplit("/", 1)[-1], cdc=True) is not None]

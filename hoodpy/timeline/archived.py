"""The archived timeline, read back: the instants archival moved off the active timeline.

Table version 6 (layout 1) archives into ``.hoodie/archived/.commits_.archive.<n>_<token>`` log files of
HoodieArchivedMetaEntry records (written by :mod:`hoodpy.services.archive`). Layout 2 (versions 8 and 9)
archives into the LSM timeline under ``.hoodie/timeline/history/``, whose data files are named
``<min instant>_<max instant>_<level>.parquet``: hoodpy reads only those names (which bound the instants a
file holds), not the files.

Reads that must not silently miss archived commits (incremental windows reaching before the active
timeline) ask :func:`newest_archived_write` for the newest archived write.
"""

from __future__ import annotations

import re
from typing import Any

from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.avro_models import AvroModel, decode_record
from hoodpy.timeline.instant import LAYOUT_2, METAFOLDER, Action, Instant, State, timeline_folder

ARCHIVE_FOLDER = f"{METAFOLDER}/archived"
HISTORY_FOLDER = f"{timeline_folder(LAYOUT_2)}/history"
_HISTORY_FILE = re.compile(r"^(\d+)_(\d+)_(\d+)\.parquet$")
_WRITE_ACTIONS = {Action.COMMIT.value, Action.DELTACOMMIT.value, Action.REPLACECOMMIT.value}


def read_archived_entries(storage: Storage) -> list[dict[str, Any]]:
    """Every HoodieArchivedMetaEntry in ``.hoodie/archived``, oldest first (one per instant and state)."""
    files = sorted((v, f.path) for f in storage.list_files(ARCHIVE_FOLDER)
                   if (v := log_format.archive_file_version(f.path.rsplit("/", 1)[-1])) is not None)
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _, rel in files:
        for block in log_format.read_blocks(storage.read_bytes(rel), storage.full_path(rel)):
            if block.block_type != log_format.AVRO_DATA_BLOCK:
                continue
            writer_schema = block.header.get(log_format.SCHEMA)
            for raw in log_format.avro_records(block):
                entry = decode_record(AvroModel.ARCHIVED_META_ENTRY, raw, writer_schema)
                key = (entry.get("commitTime") or "", entry.get("actionType") or "", entry.get("actionState") or "")
                seen[key] = entry  # an entry archived twice (a crash before the instant files went) counts once
    return [seen[k] for k in sorted(seen)]


def archived_instants(storage: Storage) -> list[Instant]:
    """Completed instants of the archived timeline (layout 1), oldest first."""
    out = []
    for e in read_archived_entries(storage):
        if e.get("actionState") == State.COMPLETED.value:
            try:
                out.append(Instant(e["commitTime"], Action(e["actionType"]), State.COMPLETED))
            except ValueError:
                continue
    return out


def newest_archived_write(storage: Storage, layout: int) -> str | None:
    """The instant time of the newest archived write (commit, deltacommit, replacecommit), None when none
    is archived. For layout 2 the bound is the newest instant any LSM history file holds, whatever its
    action (the files' names are all hoodpy reads of them)."""
    if layout == LAYOUT_2:
        names = (f.path.rsplit("/", 1)[-1] for f in storage.list_files(HISTORY_FOLDER))
        return max((m.group(2) for n in names if (m := _HISTORY_FILE.match(n))), default=None)
    if not any(log_format.archive_file_version(f.path.rsplit("/", 1)[-1]) is not None
               for f in storage.list_files(ARCHIVE_FOLDER)):
        return None  # no archive file: skip decoding (the common case)
    times = [i.timestamp for i in archived_instants(storage) if i.action.value in _WRITE_ACTIONS]
    return max(times, default=None)

"""The archived timeline, read back: the instants archival moved off the active timeline.

Table version 6 (layout 1) archives into ``.hoodie/archived/.commits_.archive.<n>_<token>`` log files of
HoodieArchivedMetaEntry records (written by :mod:`hoodpy.services.archive`). Layout 2 (versions 8 and 9)
archives into the LSM timeline under ``.hoodie/timeline/history/`` (:mod:`hoodpy.timeline.history`), whose
data files are named ``<min instant>_<max instant>_<level>.parquet``; its instants read back as the same
entries. The newest archived write of layout 2 comes from those names alone (they bound what a file holds).

Reads that must not silently miss archived commits (incremental windows reaching before the active
timeline) ask :func:`newest_archived_write` for the newest archived write.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import fastavro

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import InvalidInstantError
from hoodpy.storage import Storage
from hoodpy.timeline import log_format
from hoodpy.timeline.avro_models import AvroModel, decode_record, deserialize
from hoodpy.timeline.history import HistoryInstant, history_folder, read_history
from hoodpy.timeline.instant import LAYOUT_2, METAFOLDER, Action, Instant, State
from hoodpy.timeline.metadata import AVRO_MAGIC
from hoodpy.timeline.timeline import layout_of

ARCHIVE_FOLDER = f"{METAFOLDER}/archived"
_HISTORY_FILE = re.compile(r"^(\d+)_(\d+)_(\d+)\.parquet$")
_WRITE_ACTIONS = {Action.COMMIT.value, Action.DELTACOMMIT.value, Action.REPLACECOMMIT.value}


def read_archived_entries(storage: Storage) -> list[dict[str, Any]]:
    """Every HoodieArchivedMetaEntry in ``.hoodie/archived``, oldest first (one per instant and state); for a
    table of version 8 or 9 the same entries made from its LSM history (see :func:`history_entries`)."""
    props = load_table_properties(storage)
    if layout_of(props) == LAYOUT_2:
        return [e for h in read_history(storage, history_folder(props)) for e in history_entries(h)]
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
    """Completed instants of the archived timeline, oldest first."""
    out = []
    for e in read_archived_entries(storage):
        if e.get("actionState") == State.COMPLETED.value:
            try:
                out.append(Instant(e["commitTime"], Action(e["actionType"]), State.COMPLETED))
            except ValueError:
                continue
    return out


_METADATA_MODELS = {Action.CLEAN: ("hoodieCleanMetadata", AvroModel.CLEAN_METADATA),
                    Action.ROLLBACK: ("hoodieRollbackMetadata", AvroModel.ROLLBACK_METADATA),
                    Action.SAVEPOINT: ("hoodieSavePointMetadata", AvroModel.SAVEPOINT_METADATA)}
_COMMIT_KEYS = {Action.COMMIT: "hoodieCommitMetadata", Action.DELTACOMMIT: "hoodieCommitMetadata",
                Action.REPLACECOMMIT: "hoodieReplaceCommitMetadata"}


def _avro_record(data: bytes, source: str) -> dict[str, Any]:
    try:
        for record in fastavro.reader(io.BytesIO(data)):
            return record
    except Exception as e:  # fastavro reports corrupt input with many exception types
        raise InvalidInstantError(f"Archived instant {source} holds unreadable metadata: {e}") from e
    raise InvalidInstantError(f"Archived instant {source} holds no metadata record")


def history_entries(entry: HistoryInstant) -> list[dict[str, Any]]:
    """An archived instant of the LSM history as the HoodieArchivedMetaEntry dicts the version-6 archive
    holds: a REQUESTED entry at its instant time (in Hudi 1.x the requested time) and a COMPLETED one at its
    completion time, with the completed metadata decoded (commit metadata as its Avro record)."""
    source = f"{entry.instant_time}__{entry.action}"
    base = {"commitTime": entry.instant_time, "actionType": entry.action, "version": entry.version}
    done: dict[str, Any] = {**base, "actionState": State.COMPLETED.value, "stateTransitionTime": entry.completion_time}
    instant = entry.instant()
    if instant is not None and entry.metadata:
        if instant.action in _COMMIT_KEYS:
            record = (_avro_record(entry.metadata, source) if entry.metadata.startswith(AVRO_MAGIC)
                      else json.loads(entry.metadata.decode("utf-8")))
            done[_COMMIT_KEYS[instant.action]] = record
        elif instant.action in _METADATA_MODELS:
            key, model = _METADATA_MODELS[instant.action]
            done[key] = deserialize(model, entry.metadata, source=source)
    requested = {**base, "actionState": State.REQUESTED.value, "stateTransitionTime": entry.instant_time}
    return [requested, done]


def newest_archived_write(storage: Storage, layout: int) -> str | None:
    """The instant time of the newest archived write (commit, deltacommit, replacecommit), None when none
    is archived. For layout 2 the bound is the newest instant any LSM history file holds, whatever its
    action (the files' names are all hoodpy reads of them)."""
    if layout == LAYOUT_2:
        folder = history_folder(load_table_properties(storage))
        names = (f.path.rsplit("/", 1)[-1] for f in storage.list_files(folder))
        return max((m.group(2) for n in names if (m := _HISTORY_FILE.match(n))), default=None)
    if not any(log_format.archive_file_version(f.path.rsplit("/", 1)[-1]) is not None
               for f in storage.list_files(ARCHIVE_FOLDER)):
        return None  # no archive file: skip decoding (the common case)
    times = [i.timestamp for i in archived_instants(storage) if i.action.value in _WRITE_ACTIONS]
    return max(times, default=None)

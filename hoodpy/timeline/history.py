"""The archived timeline of table versions 8 and 9: Hudi 1.x's LSM history in ``.hoodie/timeline/history/``.

What is on storage (Java's LSMTimeline and LSMTimelineWriter):

* data files ``<min>_<max>_<layer>.parquet``, ``min`` / ``max`` the first and last instant time they hold,
  one row per archived instant in instant-time order (the HoodieLSMTimelineInstant record: ``instantTime``,
  ``completionTime``, ``action`` as the completed file names it, ``metadata`` = the completed instant
  file's bytes, ``plan`` = the plan's bytes, ``version`` = 1). Java writes them with parquet-avro and no
  meta fields: no bloom filter, the Avro schema in the footer (``parquet.avro.schema``);
* ``manifest_<N>``: the files of snapshot ``N``, as Jackson's pretty printer writes
  ``{"files": [{"fileName": ..., "fileLen": ...}]}``;
* ``_version_``: the latest ``N`` as text. A reader takes it (the largest manifest number when it is
  missing or unreadable), reads that manifest, then the files it lists.

Each archival writes one layer-0 file and a new snapshot. Once a layer holds
``hoodie.timeline.compaction.batch.size`` files, its oldest ones (that many at most, 1 GiB at most) are
merged into one file of the next layer, again a new snapshot, and so up the layers. Then snapshots older than
the newest ``3 + compactions`` are cleaned: their manifests first, then every data file no kept snapshot
lists. A file is complete before a manifest names it and a manifest before ``_version_`` points at it, so a
reader always sees a whole snapshot.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.errors import InvalidInstantError
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, LAYOUT_2_FOLDER, Action, Instant, State

VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
DEFAULT_HISTORY_PATH = "history"
COMPACTION_BATCH_SIZE = 10  # Java's hoodie.timeline.compaction.batch.size default
COMPACTION_MAX_BYTES = 1 << 30  # Java merges at most 1 GiB of files at once
SNAPSHOTS_KEPT = 3  # Java keeps the newest 3 snapshots (plus one per compaction of the last archival)
LSM_INSTANT_VERSION = 1
_MANIFEST_RE = re.compile(r"^manifest_(\d+)$")
_FILE_RE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
_COLUMNS = ("instantTime", "completionTime", "action", "metadata", "plan", "version")
# Parquet codecs by hoodpy's names (StorageConfig.PARQUET_COMPRESSION_CODEC) as pyarrow spells them.
_PYARROW_CODECS = {"uncompressed": "none", "lz4_raw": "lz4"}


def history_folder(props: Mapping[str, str] | None = None) -> str:
    """Where the history is: ``hoodie.timeline.history.path`` under the layout-2 timeline folder."""
    sub = (props or {}).get("hoodie.timeline.history.path") or DEFAULT_HISTORY_PATH
    return f"{LAYOUT_2_FOLDER}/{sub}"


@dataclass(frozen=True)
class HistoryInstant:
    """One archived instant (HoodieLSMTimelineInstant)."""

    instant_time: str
    completion_time: str | None
    action: str  # the completed file's action: a compaction is a commit, a clustering a replacecommit
    metadata: bytes | None = None  # the completed instant file's bytes (None: it was empty)
    plan: bytes | None = None
    version: int = LSM_INSTANT_VERSION

    def instant(self) -> Instant | None:
        """The completed instant (layout 2), or None for actions hoodpy does not model (e.g. indexing)."""
        try:
            action = Action(self.action)
        except ValueError:
            return None
        return Instant(self.instant_time, action, State.COMPLETED, self.completion_time, LAYOUT_2)


# -- snapshots ---------------------------------------------------------------------------------------------
def parse_file_name(name: str) -> tuple[str, str, int] | None:
    """(min instant, max instant, layer) of a data file name, None for other names."""
    m = _FILE_RE.match(name)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def _manifest_versions(storage: Storage, folder: str) -> list[int]:
    names = (f.path.rsplit("/", 1)[-1] for f in storage.list_files(folder))
    return sorted(int(m.group(1)) for m in map(_MANIFEST_RE.match, names) if m)


def latest_version(storage: Storage, folder: str) -> int | None:
    """The latest snapshot number: ``_version_``, else the largest manifest number; None for no snapshot."""
    rel = f"{folder}/{VERSION_FILE}"
    if storage.exists(rel):
        text = storage.read_bytes(rel).decode("utf-8", "replace").strip()
        if text.isdigit():
            return int(text)
    versions = _manifest_versions(storage, folder)
    return versions[-1] if versions else None


def read_manifest(storage: Storage, folder: str, version: int) -> list[tuple[str, int]]:
    """(file name, length) of the files of snapshot ``version``."""
    rel = f"{folder}/{MANIFEST_PREFIX}{version}"
    text = storage.read_bytes(rel).decode("utf-8")
    if not text.strip():
        return []  # Java reads an empty manifest as an empty snapshot
    try:
        files = json.loads(text).get("files") or []
        return [(str(f["fileName"]), int(f.get("fileLen") or 0)) for f in files]
    except (ValueError, AttributeError, KeyError, TypeError) as e:
        raise InvalidInstantError(f"LSM history manifest {storage.full_path(rel)} is not readable: {e}") from e


def manifest_json(files: Sequence[tuple[str, int]]) -> str:
    """A manifest as Java writes it (Jackson's default pretty printer, fields in declaration order)."""
    if not files:
        return '{\n  "files" : [ ]\n}'
    entries = "  }, {\n".join(f'    "fileName" : {json.dumps(name)},\n    "fileLen" : {int(size)}\n'
                            for name, size in files)
    return '{\n  "files" : [ {\n' + entries + "  } ]\n}"


def snapshot_files(storage: Storage, folder: str) -> list[tuple[str, int]]:
    """The latest snapshot's files, as its manifest lists them ([] when there is no history)."""
    version = latest_version(storage, folder)
    return [] if version is None else read_manifest(storage, folder, version)


# -- reading ------------------------------------------------------------------------------------------------
def _read_file(storage: Storage, folder: str, name: str, columns: Sequence[str]) -> list[HistoryInstant]:
    rel = f"{folder}/{name}"
    try:
        table = pq.read_table(pa.BufferReader(storage.read_bytes(rel)), columns=list(columns))
    except (pa.ArrowException, OSError) as e:
        raise InvalidInstantError(f"LSM history file {storage.full_path(rel)} is not readable parquet: {e}") from e
    rows = table.to_pylist()
    return [HistoryInstant(r["instantTime"], r.get("completionTime"), r["action"], r.get("metadata"),
                           r.get("plan"), r.get("version") or LSM_INSTANT_VERSION)
            for r in rows if r.get("instantTime") and r.get("action")]


def read_history(storage: Storage, folder: str | None = None, *, with_metadata: bool = True,
                 ) -> list[HistoryInstant]:
    """Every archived instant of the latest snapshot, in instant-time order (one per instant time and
    action). ``with_metadata`` False reads times and actions only."""
    folder = folder or history_folder()
    columns = _COLUMNS if with_metadata else ("instantTime", "completionTime", "action", "version")
    found: dict[tuple[str, str], HistoryInstant] = {}
    for name, _ in sorted(snapshot_files(storage, folder)):
        for entry in _read_file(storage, folder, name, columns):
            found[(entry.instant_time, entry.action)] = entry
    return [found[k] for k in sorted(found)]


# -- writing ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def avro_schema_json() -> str:
    """HoodieLSMTimelineInstant's schema as Java's ``Schema.toString()`` writes it into the footer."""
    text = resources.files(__package__).joinpath("avro", "table_version_8", "HoodieLSMTimelineInstant.avsc")
    return json.dumps(json.loads(text.read_text("utf-8")), separators=(",", ":"))


_ARROW_SCHEMA = pa.schema([
    pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()), pa.field("action", pa.string()),
    pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()),
    pa.field("version", pa.int32(), nullable=False),  # an Avro int without a union: a required column
])


def encode_file(entries: Iterable[HistoryInstant], compression: str = "gzip") -> bytes:
    """A data file's bytes: the rows in the given order, the Avro schema in the footer as parquet-avro
    writes it."""
    rows = [{"instantTime": e.instant_time, "completionTime": e.completion_time, "action": e.action,
             "metadata": e.metadata, "plan": e.plan, "version": e.version} for e in entries]
    table = pa.Table.from_pylist(rows, schema=_ARROW_SCHEMA)
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, _ARROW_SCHEMA, compression=_PYARROW_CODECS.get(compression, compression),
                          store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({"parquet.avro.schema": avro_schema_json(), "writer.model.name": "avro"})
    return sink.getvalue()


def _file_name(min_instant: str, max_instant: str, layer: int) -> str:
    return f"{min_instant}_{max_instant}_{layer}.parquet"


class HistoryWriter:
    """Adds archived instants to a table's history as Java's LSMTimelineWriter does (see the module doc)."""

    def __init__(self, storage: Storage, folder: str | None = None, *, compression: str = "gzip",
                 batch_size: int = COMPACTION_BATCH_SIZE):
        self.storage = storage
        self.folder = folder or history_folder()
        self.compression = compression
        self.batch_size = batch_size

    def _rel(self, name: str) -> str:
        return f"{self.folder}/{name}"

    def append(self, entries: Sequence[HistoryInstant]) -> str:
        """Write ``entries`` (instant-time order) as a new layer-0 file and publish it in a new snapshot;
        returns the file's name. A file a crashed earlier run wrote is reused when a snapshot lists it, and
        replaced when none does."""
        if not entries:
            raise ValueError("no instants to archive")
        name = _file_name(entries[0].instant_time, entries[-1].instant_time, 0)
        if name in {n for n, _ in snapshot_files(self.storage, self.folder)}:
            return name  # the archival that wrote it crashed after publishing, before removing the instants
        self.storage.write_atomic(self._rel(name), encode_file(entries, self.compression))
        self._publish(remove=(), add=name)
        return name

    def _publish(self, remove: Iterable[str], add: str) -> None:
        """A new snapshot: the latest one's files without ``remove``, plus ``add``."""
        current = latest_version(self.storage, self.folder)
        files = [] if current is None else read_manifest(self.storage, self.folder, current)
        gone = set(remove)
        sizes = {f.path.rsplit("/", 1)[-1]: f.size for f in self.storage.list_files(self.folder)}
        files = [f for f in files if f[0] not in gone] + [(add, sizes[add])]
        version = 1 if current is None else current + 1
        self.storage.write_atomic(self._rel(f"{MANIFEST_PREFIX}{version}"), manifest_json(files).encode("utf-8"))
        self.storage.write_atomic(self._rel(VERSION_FILE), str(version).encode("utf-8"))

    def compact_and_clean(self) -> list[str]:
        """Merge full layers into the next one, layer by layer, then clean old snapshots; returns the names
        of the files compaction wrote."""
        written = []
        layer = 0
        while (name := self._compact(layer)) is not None:
            written.append(name)
            layer += 1
        self._clean(len(written))
        return written

    def _compact(self, layer: int) -> str | None:
        files = sorted(f for f in snapshot_files(self.storage, self.folder)
                       if (parsed := parse_file_name(f[0])) is not None and parsed[2] == layer)
        if len(files) < self.batch_size:
            return None
        candidates: list[str] = []
        total = 0
        for name, size in files:
            total += size
            candidates.append(name)
            if len(candidates) >= self.batch_size:
                break
            if total > COMPACTION_MAX_BYTES:
                if len(candidates) < 2:
                    total, candidates = 0, []
                else:
                    break
        if len(candidates) < 2:
            return None
        parsed = [parse_file_name(n) for n in candidates]
        name = _file_name(min(p[0] for p in parsed), max(p[1] for p in parsed), layer + 1)
        entries = [e for n in candidates for e in _read_file(self.storage, self.folder, n, _COLUMNS)]
        self.storage.write_atomic(self._rel(name), encode_file(entries, self.compression))
        self._publish(remove=candidates, add=name)
        return name

    def _clean(self, compactions: int) -> None:
        versions = _manifest_versions(self.storage, self.folder)
        keep_count = SNAPSHOTS_KEPT + compactions
        if len(versions) <= keep_count:
            return
        kept = versions[-keep_count:]
        keep = {n for v in kept for n, _ in read_manifest(self.storage, self.folder, v)}
        for v in versions[:-keep_count]:  # manifests first: no snapshot may name a file that is gone
            self.storage.delete(self._rel(f"{MANIFEST_PREFIX}{v}"))
        for f in self.storage.list_files(self.folder):
            name = f.path.rsplit("/", 1)[-1]
            if name.endswith(".parquet") and name not in keep:
                self.storage.delete(f.path)

"""Where the metadata table keeps things, and how it names them.

The metadata table is a merge-on-read Hudi table of its own under ``<table>/.hoodie/metadata``, with HFile base
files. hoodpy writes its ``files`` partition: one file group ``files-0000-0`` (Java's
HoodieTableMetadataUtil.getFileIDForFileGroup: prefix, 4-digit index, ``-0``), base files
``files-0000-0_<writeToken>_<instant>.hfile`` and log files ``.files-0000-0_<instant>.log.<version>_<writeToken>``.

Instant times of its own (Java's HoodieBackedTableMetadataWriter):

* table version 6: a partition is initialised at ``<latest completed data instant>010`` (``00000000000000010``
  when the data table has none: the 14-digit SOLO_COMMIT_TIMESTAMP plus the suffix), a compaction runs at
  ``<latest deltacommit>001``; such 20-digit times sort after the data instant they extend and before the next;
* table versions 8 and 9: the files partition is initialised at ``00000000000000000`` (as the v9 samples show)
  and a compaction takes a fresh instant time.

Every other instant of the metadata table (its deltacommits) has the time of the data-table instant it
records. In table version 6 a log file names the base instant of its file slice; in versions 8 and 9 it names
the deltacommit that wrote it (one log file per deltacommit, version 1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hoodpy.config.metadata import FILES_PARTITION, METADATA_TABLE_FOLDER
from hoodpy.config.properties import table_checksum
from hoodpy.config.table import TableConfig
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2

FILES_PREFIX = "files-"
FILES_FILE_ID = "files-0000-0"
HFILE_EXTENSION = ".hfile"
# Java's HoodieLogFormat.DEFAULT_WRITE_TOKEN: the log file that creates a file group at partition initialisation.
INIT_WRITE_TOKEN = "0-0-0"
# hoodpy writes every metadata-table file from one process (no Spark task): task 0 of stage 1, attempt 0.
WRITE_TOKEN = "0-1-0"

SOLO_COMMIT_TIMESTAMP_V6 = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP in Hudi 0.x
FILES_INIT_INSTANT_V8 = "00000000000000000"  # Hudi 1.x: the first partition initialised (files)
PARTITION_INIT_SUFFIX = "010"  # table version 6
COMPACTION_SUFFIX = "001"  # table version 6

_STAMP = r"\d{14}(?:\d{3})*"
_BASE_RE = re.compile(rf"^(?P<file_id>[^_]+)_(?P<token>\d+-\d+-\d+)_(?P<instant>{_STAMP})\.hfile$")
_LOG_RE = re.compile(rf"^\.(?P<file_id>[^_]+)_(?P<instant>{_STAMP})\.log\.(?P<version>\d+)_(?P<token>\d+-\d+-\d+)$")


@dataclass(frozen=True)
class MetadataBaseFile:
    name: str
    file_id: str
    instant_time: str
    size: int
    partition: str = FILES_PARTITION

    @property
    def path(self) -> str:
        return f"{self.partition}/{self.name}"


@dataclass(frozen=True)
class MetadataLogFile:
    name: str
    file_id: str
    instant_time: str  # version 6: its slice's base instant; versions 8 and 9: the deltacommit that wrote it
    version: int
    token: str
    size: int
    partition: str = FILES_PARTITION

    @property
    def path(self) -> str:
        return f"{self.partition}/{self.name}"

    @property
    def order(self) -> tuple[str, int, str]:
        return self.instant_time, self.version, self.token


def base_file_name(instant_time: str, file_id: str = FILES_FILE_ID, token: str = WRITE_TOKEN) -> str:
    return f"{file_id}_{token}_{instant_time}{HFILE_EXTENSION}"


def log_file_name(instant_time: str, version: int, token: str = WRITE_TOKEN, file_id: str = FILES_FILE_ID) -> str:
    return f".{file_id}_{instant_time}.log.{version}_{token}"


def parse_base_file(name: str, size: int = 0, partition: str = FILES_PARTITION) -> MetadataBaseFile | None:
    m = _BASE_RE.match(name)
    return MetadataBaseFile(name, m.group("file_id"), m.group("instant"), size, partition) if m else None


def parse_log_file(name: str, size: int = 0, partition: str = FILES_PARTITION) -> MetadataLogFile | None:
    m = _LOG_RE.match(name)
    if not m:
        return None
    return MetadataLogFile(name, m.group("file_id"), m.group("instant"), int(m.group("version")), m.group("token"),
                           size, partition)


def metadata_storage(storage: Storage) -> Storage:
    """The metadata table as a table of its own: a Storage rooted at ``.hoodie/metadata``."""
    return Storage(f"{storage.base_uri}/{METADATA_TABLE_FOLDER}", dict(storage.base_uri.options))


def partition_init_instant(layout: int, latest_data_instant: str | None) -> str:
    """The instant at which the files partition is initialised (see the module docstring)."""
    if layout == LAYOUT_2:
        return FILES_INIT_INSTANT_V8
    return (latest_data_instant or SOLO_COMMIT_TIMESTAMP_V6) + PARTITION_INIT_SUFFIX


def unique_init_instant(layout: int, init: str, taken: set[str]) -> str:
    """Version 6: the first of ``init``, ``init`` + 1, ... (in its 3-digit suffix) no metadata instant in
    ``taken`` has, so that partitions built in one write get 011, 012, ... (Java's
    generateUniqueCommitInstantTime); versions 8 and 9: ``init``, each partition's own fixed instant."""
    if layout == LAYOUT_2:
        return init
    stem, offset = init[:-3], int(init[-3:])
    while f"{stem}{offset:03d}" in taken:
        offset += 1
    return f"{stem}{offset:03d}"


def metadata_table_properties(data_properties: dict[str, str], table_name: str) -> dict[str, str]:
    """hoodie.properties of a new metadata table, as Java's HoodieBackedTableMetadataWriter.initializeMetaClient
    creates it for the data table's version (the keys the v9 samples' metadata tables carry; for version 6 those
    Hudi 0.14 wrote)."""
    version = data_properties.get(TableConfig.VERSION.key, "6")
    name = f"{table_name}_metadata"
    props = {
        "hoodie.table.name": name,
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": version,
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.populate.meta.fields": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
    }
    if int(version) >= 8:
        props.update({
            "hoodie.table.initial.version": version,
            "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
            "hoodie.archivelog.folder": "history",
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "timeline",
            "hoodie.timeline.history.path": "history",
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
            "hoodie.record.merge.mode": "CUSTOM",
        })
    else:
        props.update({
            "hoodie.table.keygenerator.class": "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator",
            "hoodie.archivelog.folder": "archived",
            "hoodie.timeline.layout.version": "1",
        })
    props[TableConfig.CHECKSUM.key] = str(table_checksum(None, name))  # the v9 samples' value for their names
    return props

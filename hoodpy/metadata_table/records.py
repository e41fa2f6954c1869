"""HoodieMetadataRecord records of the ``files`` partition, and how two of them merge.

Keys: ``__all_partitions__`` (type 1, PARTITION_LIST: its map names the data table's partitions) and one key per
data partition (type 2, FILE_LIST: its map names the partition's base and log files, by file name, with their
sizes). A non-partitioned table's partition is ``.`` in both places (HoodieTableMetadata.NON_PARTITIONED_NAME).
A map entry ``{size, isDeleted}`` with ``isDeleted`` true is a tombstone.

Merging a newer record into an older one is Java's HoodieMetadataPayload.combineFileSystemMetadata: the newer
entries win, except that a tombstone removes the older entry (and itself) and two live entries of one file keep
the larger size (a log file only grows). A tombstone with nothing older to remove is kept: the older entry may
still come from a base file merged in later. The schema is Hudi 1.1's HoodieMetadataRecord, byte for byte as
its files carry it (a superset of what Hudi 0.14 reads; the fields hoodpy does not fill are null).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."
PARTITION_LIST = 1
FILE_LIST = 2
FILE_NAME_FIELD = "_hoodie_file_name"

# The schema text Java embeds in base-file info and log-block headers (8910 bytes, no trailing newline).
SCHEMA = resources.files(__package__).joinpath("HoodieMetadataRecord.avsc").read_text("utf-8").rstrip("\n")

# name -> (size, is_deleted)
Entries = dict[str, tuple[int, bool]]


def partition_key(partition_path: str) -> str:
    """The key (and __all_partitions__ entry) of a data partition."""
    return partition_path or NON_PARTITIONED_NAME


def partition_path_of(key: str) -> str:
    return "" if key == NON_PARTITIONED_NAME else key


def new_record(key: str, kind: int, entries: Mapping[str, tuple[int, bool]], file_name: str | None = None,
               ) -> dict[str, Any]:
    """A HoodieMetadataRecord datum; ``file_name`` fills ``_hoodie_file_name`` (base files after the first)."""
    return {
        "_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
        "_hoodie_partition_path": None, FILE_NAME_FIELD: file_name,
        "key": key, "type": kind,
        "filesystemMetadata": {n: {"size": int(s), "isDeleted": bool(d)} for n, (s, d) in entries.items()},
        "BloomFilterMetadata": None, "ColumnStatsMetadata": None, "recordIndexMetadata": None,
        "SecondaryIndexMetadata": None,
    }


def entries_of(record: Mapping[str, Any]) -> Entries:
    return {n: (int(info["size"]), bool(info["isDeleted"]))
            for n, info in (record.get("filesystemMetadata") or {}).items()}


def combine(older: Entries | None, newer: Entries) -> Entries:
    """Merge ``newer`` entries into ``older`` ones (HoodieMetadataPayload.combineFileSystemMetadata)."""
    out = dict(older or {})
    for name, (size, deleted) in newer.items():
        before = out.get(name)
        if before is None:
            out[name] = (size, deleted)
        elif deleted:
            # A tombstone removes a live entry; a repeated deletion stays a tombstone.
            if before[1]:
                out[name] = (size, True)
            else:
                del out[name]
        else:
            out[name] = (max(size, before[0]), False)
    return out


def live(entries: Entries) -> dict[str, int]:
    """The entries that name existing files (tombstones left out): name -> size."""
    return {n: s for n, (s, deleted) in entries.items() if not deleted}


@dataclass
class FilesChange:
    """What one data-table instant changes in the file listing: files added (or grown) and deleted per
    partition path, partitions added and deleted. ``records`` is what the instant's deltacommit writes."""

    added: dict[str, dict[str, int]] = field(default_factory=dict)
    deleted: dict[str, set[str]] = field(default_factory=dict)
    partitions_added: set[str] = field(default_factory=set)
    partitions_deleted: set[str] = field(default_factory=set)

    def add(self, partition_path: str, name: str, size: int) -> None:
        files = self.added.setdefault(partition_path, {})
        files[name] = max(size, files.get(name, 0))

    def delete(self, partition_path: str, names: Iterable[str]) -> None:
        self.deleted.setdefault(partition_path, set()).update(names)

    def is_empty(self) -> bool:
        return not (self.added or self.deleted or self.partitions_added or self.partitions_deleted)

    def records(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, record) of each metadata record this change writes, as HoodieTableMetadataUtil builds them:
        one record per touched partition, and the partition list when partitions were added or deleted."""
        out = []
        listed = {partition_key(p): (0, False) for p in self.partitions_added}
        listed.update({partition_key(p): (0, True) for p in self.partitions_deleted})
        if listed:
            out.append((ALL_PARTITIONS_KEY, new_record(ALL_PARTITIONS_KEY, PARTITION_LIST, listed)))
        for partition in sorted(set(self.added) | set(self.deleted)):
            entries: Entries = {n: (0, True) for n in self.deleted.get(partition, ())}
            entries.update({n: (s, False) for n, s in self.added.get(partition, {}).items()})
            key = partition_key(partition)
            out.append((key, new_record(key, FILE_LIST, entries)))
        return out


@dataclass
class FileListing:
    """The merged ``files`` partition: its records' entries by key (tombstones kept until a base file absorbs
    them)."""

    entries: dict[str, Entries] = field(default_factory=dict)

    def merge(self, key: str, newer: Entries) -> None:
        self.entries[key] = combine(self.entries.get(key), newer)

    def remove(self, key: str) -> None:
        self.entries.pop(key, None)

    def partitions(self) -> list[str]:
        """The data partition paths the listing names (``""`` for a non-partitioned table), sorted."""
        return sorted(partition_path_of(k) for k in live(self.entries.get(ALL_PARTITIONS_KEY, {})))

    def files(self, partition_path: str) -> dict[str, int]:
        """File name -> size of the files of one partition."""
        return live(self.entries.get(partition_key(partition_path), {}))

    def all_files(self) -> dict[str, dict[str, int]]:
        """partition path -> file name -> size, for every listed partition."""
        return {p: self.files(p) for p in self.partitions()}

    def records(self, file_name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The listing as the records of a base file (tombstones dropped: nothing older is left to remove)."""
        return [(key, new_record(key, PARTITION_LIST if key == ALL_PARTITIONS_KEY else FILE_LIST,
                                 {n: (s, False) for n, s in live(self.entries[key]).items()}, file_name))
                for key in sorted(self.entries)]

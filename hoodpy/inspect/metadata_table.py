"""The metadata table as rows: its partitions (``show_metadata_table_partitions``), a partition's files
(``show_metadata_table_files``), its listing checked against storage (``validate_metadata_table_files``), the
sizes of its partitions' latest slices (``show_metadata_table_stats``, bloom_filters included) and its
column_stats records (``show_metadata_table_column_stats``).

The listing is the metadata table's as of the data table's current timeline. The storage side of the check is
Hudi's FileSystemBackedTableMetadata: partitions are folders holding a partition metadata file, files are the
base and log files in them (committed or not: a file of a failed write shows up as missing from the metadata
table). A non-partitioned table's one partition is ``""``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from hoodpy.config.metadata import BLOOM_FILTERS_PARTITION, COLUMN_STATS_PARTITION, FILES_PARTITION
from hoodpy.config.properties import load_table_properties
from hoodpy.errors import MetadataTableError
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.metadata_table import bloom_filters
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable, has_files_partition
from hoodpy.metadata_table.records import FileListing
from hoodpy.metadata_table.writer import partition_files_on_storage
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

PARTITIONS = columns(("partition", "string"))
FILES = columns(("file_path", "string"))
VALIDATION = columns(("partition", "string"), ("file_name", "string"), ("is_present_in_fs", "boolean"),
                     ("is_present_in_metadata", "boolean"), ("fs_size", "long"), ("metadata_size", "long"))
STATS = columns(("stat_key", "string"), ("stat_value", "string"))
COLUMN_STATS = columns(("file_name", "string"), ("column_name", "string"), ("min_value", "string"),
                       ("max_value", "string"), ("null_num", "long"))


def has_metadata_table(storage: Storage) -> bool:
    """Whether hoodie.properties lists the metadata table's files partition."""
    return has_files_partition(load_table_properties(storage))


def read_listing(storage: Storage) -> FileListing:
    """The metadata table's listing; MetadataTableError when the table has none (Hudi: "Metadata Table not
    enabled/initialized")."""
    if not has_metadata_table(storage):
        raise MetadataTableError(storage.base_uri, "the table has no metadata table (hoodie.table.metadata.partitions "
                                 "does not list files); create it with create_metadata_table or write with "
                                 "hoodie.metadata.enable=true")
    return MetadataTable(storage).read(Timeline.load(storage))


def partitions(storage: Storage) -> Rows:
    return make_rows(PARTITIONS, [(p,) for p in read_listing(storage).partitions()])


def files(storage: Storage, partition: str = "", *, limit: int | None = None) -> Rows:
    """The file names the metadata table lists in ``partition``, sorted."""
    return make_rows(FILES, [(name,) for name in sorted(read_listing(storage).files(partition))], limit)


def validate_files(storage: Storage, *, verbose: bool = False) -> Rows:
    """One row per file in either listing (``verbose``), or per file whose presence or size differs."""
    listing = read_listing(storage)
    metadata = {p: listing.files(p) for p in listing.partitions()}
    on_storage = partition_files_on_storage(storage)
    rows = []
    for partition in sorted(set(metadata) | set(on_storage)):
        theirs, ours = on_storage.get(partition, {}), metadata.get(partition, {})
        for name in sorted(set(theirs) | set(ours)):
            row = (partition, name, name in theirs, name in ours, theirs.get(name, 0), ours.get(name, 0))
            if verbose or row[2] != row[3] or row[4] != row[5]:
                rows.append(row)
    return make_rows(VALIDATION, rows)


def stats(storage: Storage) -> Rows:
    """Per metadata partition hoodpy reads (files, column_stats, bloom_filters), the base / log file counts and
    sizes of its latest slices, and the data table's partition count (Hudi's HoodieMetadataMetrics.getStats keys),
    sorted."""
    listing = read_listing(storage)
    table = MetadataTable(storage)
    slices: dict[str, list[tuple[Any, Sequence[Any]]]] = {}
    file_slice = table.latest_slice()
    slices[FILES_PARTITION] = [(file_slice.base_file, file_slice.log_files)]
    if cs.has_column_stats(load_table_properties(storage)):
        slices[COLUMN_STATS_PARTITION] = [(s.base_file, s.log_files)
                                          for s in cs.ColumnStatsPartition(table).latest_slices()]
    if bloom_filters.has_partition(load_table_properties(storage)):
        slices[BLOOM_FILTERS_PARTITION] = [(s.base_file, s.log_files)
                                           for s in bloom_filters.BloomFiltersPartition(table).latest_slices()]
    out = {"partitionCount": str(len(listing.partitions()))}
    for partition, pairs in slices.items():
        bases = [b for b, _ in pairs if b is not None]
        logs = [lf for _, group in pairs for lf in group]
        out[f"{partition}.totalBaseFileSizeInBytes"] = str(sum(b.size for b in bases))
        out[f"{partition}.totalLogFileSizeInBytes"] = str(sum(lf.size for lf in logs))
        out[f"{partition}.baseFileCount"] = str(len(bases))
        out[f"{partition}.logFileCount"] = str(len(logs))
    return make_rows(STATS, sorted(out.items()))


def column_stats(storage: Storage, partition: str | None = None, target_columns: Sequence[str] = ()) -> Rows:
    """The live column_stats records (of data ``partition`` and ``target_columns`` when given), sorted by file
    and column; MetadataTableError when the table has no column_stats."""
    read_listing(storage)
    if not cs.has_column_stats(load_table_properties(storage)):
        raise MetadataTableError(storage.base_uri, "the metadata table has no column_stats partition; write with "
                                 "hoodie.metadata.index.column.stats.enable=true to build it")
    records = cs.read_column_stats(storage, Timeline.load(storage))
    wanted = {c for c in target_columns if c}
    rows = []
    for key, s in records.items():
        if partition is not None and key != cs.column_stats_key(s["columnName"], partition, s["fileName"]):
            continue
        if wanted and s["columnName"] not in wanted:
            continue
        rows.append((s["fileName"], s["columnName"], _shown(s.get("minValue"), s.get("valueType")),
                     _shown(s.get("maxValue"), s.get("valueType")), s.get("nullCount")))
    return make_rows(COLUMN_STATS, sorted(rows, key=lambda r: (r[0], r[1])))


def _shown(wrapped: Mapping[str, Any] | None, value_type: Mapping[str, Any] | None) -> str | None:
    """A wrapped min / max as Hudi prints it (the wrapper's value); decimals as their decimal text."""
    if wrapped is None:
        return None
    value = wrapped.get("value")
    if isinstance(value, Decimal) or (value_type or {}).get("typeOrdinal") == 10:
        return str(cs.unwrap_value(wrapped, value_type, None))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.hex()
    return str(value)

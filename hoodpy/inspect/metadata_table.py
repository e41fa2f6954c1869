"""The metadata table as rows: its partitions (``show_metadata_table_partitions``), a partition's files
(``show_metadata_table_files``) and its listing checked against storage (``validate_metadata_table_files``).

The listing is the metadata table's as of the data table's current timeline. The storage side of the check is
Hudi's FileSystemBackedTableMetadata: partitions are folders holding a partition metadata file, files are the
base and log files in them (committed or not: a file of a failed write shows up as missing from the metadata
table). A non-partitioned table's one partition is ``""``.
"""

from __future__ import annotations

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import MetadataTableError
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.metadata_table.reader import MetadataTable, has_files_partition
from hoodpy.metadata_table.records import FileListing
from hoodpy.metadata_table.writer import partition_files_on_storage
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

PARTITIONS = columns(("partition", "string"))
FILES = columns(("file_path", "string"))
VALIDATION = columns(("partition", "string"), ("file_name", "string"), ("is_present_in_fs", "boolean"),
                     ("is_present_in_metadata", "boolean"), ("fs_size", "long"), ("metadata_size", "long"))


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

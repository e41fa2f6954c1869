"""Table-scope keys: what hoodie.properties holds (Hudi's HoodieTableConfig)."""

from __future__ import annotations

from collections.abc import Mapping

from hoodpy.config import (
    ConfigKey, HoodieConfig, parse_bool, parse_csv, parse_enum, parse_int, parse_ordering_field,
)
from hoodpy.errors import (
    InvalidConfigError,
    UnsupportedServiceError,
    UnsupportedTableTypeError,
    UnsupportedTableVersionError,
)

SUPPORTED_TABLE_VERSION = 6
SUPPORTED_TIMELINE_LAYOUT = 1
WRITABLE_VERSIONS = (6, 8, 9)  # versions of the tables hoodpy creates
INITIAL_VERSION_KEY = "hoodie.table.initial.version"  # informational (see config.registry)
COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"
# HoodieCDCSupplementalLoggingMode: what a CDC log record holds besides op (and record key or commit time).
OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER = "OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"


def _parse_write_version(value: object) -> int:
    version = parse_int(value)
    if version not in WRITABLE_VERSIONS:
        raise ValueError(f"hoodpy creates tables of version {', '.join(map(str, WRITABLE_VERSIONS[:-1]))} or "
                         f"{WRITABLE_VERSIONS[-1]}")
    return version


class TableConfig:
    NAME = ConfigKey("hoodie.table.name", None, doc="Table name.", required=True,
                     aliases=("hoodie.datasource.write.table.name",))
    DATABASE_NAME = ConfigKey("hoodie.database.name", "default", doc="Database the table belongs to.")
    TYPE = ConfigKey(
        "hoodie.table.type", COPY_ON_WRITE, parse_enum(COPY_ON_WRITE, MERGE_ON_READ),
        doc="Table type, fixed at creation: COPY_ON_WRITE, or MERGE_ON_READ (table versions 6, 8 and 9: updates "
            "and deletes go to log files, writes are deltacommits). A DataFrame write (df.write.format('hoodpy')) "
            "that creates a table takes its type from here.",
        aliases=("hoodie.datasource.write.table.type",),
    )
    VERSION = ConfigKey("hoodie.table.version", 6, parse_int, doc="On-disk table version.")
    TIMELINE_LAYOUT_VERSION = ConfigKey(
        "hoodie.timeline.layout.version", 1, parse_int, doc="Timeline file layout version."
    )
    RECORD_KEY_FIELDS = ConfigKey(
        "hoodie.table.recordkey.fields", (), parse_csv,
        doc="Fields whose values form the record key.",
        aliases=("hoodie.datasource.write.recordkey.field",),
    )
    PARTITION_FIELDS = ConfigKey(
        "hoodie.table.partition.fields", (), parse_csv,
        doc="Fields whose values form the partition path (empty: non-partitioned).",
        aliases=("hoodie.datasource.write.partitionpath.field",),
    )
    PRECOMBINE_FIELD = ConfigKey(
        "hoodie.table.precombine.field", None, parse_ordering_field,
        doc="Ordering field: among records with one key, the largest value wins (table version 9 names it "
            "hoodie.table.ordering.fields). A comma-separated list (Hudi 1.x) orders by the fields as a tuple: "
            "the first decides, a tie goes to the next.",
        aliases=("hoodie.table.ordering.fields", "hoodie.datasource.write.precombine.field"),
    )
    KEY_GENERATOR_CLASS = ConfigKey(
        "hoodie.table.keygenerator.class", None,
        doc="Java key generator class name, recorded for Java readers and writers.",
        aliases=("hoodie.datasource.write.keygenerator.class",),
    )
    HIVE_STYLE_PARTITIONING = ConfigKey(
        "hoodie.datasource.write.hive_style_partitioning", False, parse_bool,
        doc="Partition folders named field=value instead of value.",
    )
    URL_ENCODE_PARTITIONING = ConfigKey(
        "hoodie.datasource.write.partitionpath.urlencode", False, parse_bool,
        doc="URL-encode partition values in paths.",
    )
    DROP_PARTITION_COLUMNS = ConfigKey(
        "hoodie.datasource.write.drop.partition.columns", False, parse_bool,
        doc="Drop partition columns from data files (hoodpy keeps them).",
    )
    ARCHIVELOG_FOLDER = ConfigKey("hoodie.archivelog.folder", "archived", doc="Archived timeline folder.")
    BASE_FILE_FORMAT = ConfigKey("hoodie.table.base.file.format", "PARQUET", doc="Base file format.")
    POPULATE_META_FIELDS = ConfigKey(
        "hoodie.populate.meta.fields", True, parse_bool, doc="Write the _hoodie_* meta columns."
    )
    TIMELINE_TIMEZONE = ConfigKey(
        "hoodie.table.timeline.timezone", "UTC", doc="Time zone of instant times (hoodpy uses UTC)."
    )
    CREATE_SCHEMA = ConfigKey("hoodie.table.create.schema", None, doc="Avro schema at creation.")
    CDC_ENABLED = ConfigKey(
        "hoodie.table.cdc.enabled", False, parse_bool,
        doc="Change data capture, set when the table is created: merges into existing base files also write CDC "
            "log files (.<fileId>_<instant>.log.1_<token>-cdc; a merge-on-read table's log appends write none, "
            "their changes are inferred from the log files), and incremental "
            "queries with hoodie.datasource.query.incremental.format=cdc (hudi_table_changes(t, 'cdc', ...), "
            "HoodieTable.read_cdc) return op, ts_ms, before, after per change.")
    CDC_SUPPLEMENTAL_LOGGING_MODE = ConfigKey(
        "hoodie.table.cdc.supplemental.logging.mode", DATA_BEFORE_AFTER,
        parse_enum(OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER),
        doc="What CDC log records hold, set at creation: OP_KEY_ONLY (op and record key; images are read from "
            "the file versions before and after), DATA_BEFORE (also the before image) or DATA_BEFORE_AFTER "
            "(op, commit time, both images).")
    CHECKSUM = ConfigKey("hoodie.table.checksum", None, parse_int, doc="CRC32 of '<db>.<table>'.")
    WRITE_TABLE_VERSION = ConfigKey(
        "hoodie.write.table.version", 6, _parse_write_version,
        doc="Table version of a table hoodpy creates: 6 (Hudi 0.14, the default), 8 (Hudi 1.0) or 9 (Hudi 1.1; "
            "both timeline layout 2). Writes into an existing table keep its version.")
    TIMELINE_PATH = ConfigKey(
        "hoodie.timeline.path", "timeline",
        doc="Folder under .hoodie/ of the active timeline in timeline layout 2 (table versions 8 and 9); hoodpy "
            "reads and writes the default only.")
    TIMELINE_HISTORY_PATH = ConfigKey(
        "hoodie.timeline.history.path", "history",
        doc="Folder under the timeline folder of the LSM archived timeline (table versions 8 and 9).")


# (table version, timeline layout) pairs hoodpy reads: Hudi 0.12 / 0.13 (5, read only: its timeline and
# commit metadata are version 6's), 0.14 (6) and Hudi 1.0 / 1.1 (8 / 9).
SUPPORTED_VERSIONS = {5: 1, 6: 1, 8: 2, 9: 2}
READ_ONLY_VERSIONS = (5,)
_SUPPORTED_TEXT = "table version 5 (read only) or 6 (timeline layout 1), or 8 / 9 (timeline layout 2)"


def check_ordering_field_kept(table_config: HoodieConfig, options: Mapping[str, object] | None) -> None:
    """Refuse options that name another ordering field than the table records, under any of its names (Hudi's
    HoodieWriterUtils.validateTableConfig refuses this "Config conflict" too): which record wins a merge is a
    property of the table's files. A table without one takes the option's."""
    given = HoodieConfig.of(options)
    key = TableConfig.PRECOMBINE_FIELD
    if not given.is_set(key) or not table_config.is_set(key):
        return
    if given.get(key) != table_config.get(key):
        name = next(n for n in key.names() if n in given.options)
        raise InvalidConfigError(name, given.raw(key), f"the table has ordering field {table_config.get(key)!r}, "
                                 "fixed when it was created")


def check_supported(base_uri: str, props: Mapping[str, str]) -> None:
    """Raise UnsupportedTableVersionError unless ``hoodie.properties`` describes a table hoodpy reads:
    table version 6 with timeline layout 1, or 8 / 9 with layout 2 in ``.hoodie/timeline`` (copy-on-write or
    merge-on-read)."""
    version = props.get(TableConfig.VERSION.key, "")
    layout = props.get(TableConfig.TIMELINE_LAYOUT_VERSION.key, "1")
    found = f"table version {version or '?'} / timeline layout {layout}"
    if not version.isdigit() or SUPPORTED_VERSIONS.get(int(version)) != (int(layout) if layout.isdigit() else None):
        if version.isdigit() and int(version) > max(SUPPORTED_VERSIONS):
            found += f" (newer than the newest version hoodpy knows, {max(SUPPORTED_VERSIONS)})"
        elif version.isdigit() and int(version) < min(SUPPORTED_VERSIONS):
            found += " (written by a Hudi older than 0.12; upgrade it with Java Hudi first)"
        raise UnsupportedTableVersionError(base_uri, found, _SUPPORTED_TEXT)
    timeline_path = props.get(TableConfig.TIMELINE_PATH.key, TableConfig.TIMELINE_PATH.default)
    if int(layout) == 2 and timeline_path != TableConfig.TIMELINE_PATH.default:
        raise UnsupportedTableVersionError(base_uri, f"its timeline in .hoodie/{timeline_path}",
                                           f"a timeline in .hoodie/{TableConfig.TIMELINE_PATH.default}")
    table_type = props.get(TableConfig.TYPE.key, COPY_ON_WRITE)
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise UnsupportedTableVersionError(base_uri, f"table type {table_type}", f"{COPY_ON_WRITE} / {MERGE_ON_READ}")


def check_writable(base_uri: str, table_type: str, operation: str = "write to", *,
                   merge_on_read: bool = False) -> None:
    """Raise UnsupportedTableTypeError unless hoodpy can ``operation`` a table of ``table_type``: copy-on-write
    tables always; merge-on-read tables when ``merge_on_read`` says the caller handles them (writes and
    rollbacks: compaction and the log-aware clean, clustering, archival and savepoints are not built yet)."""
    if table_type != COPY_ON_WRITE and not (merge_on_read and table_type == MERGE_ON_READ):
        raise UnsupportedTableTypeError(base_uri, table_type, operation)


def check_merge_on_read_writable(base_uri: str, config: HoodieConfig) -> None:
    """Raise UnsupportedTableTypeError unless hoodpy writes a merge-on-read table so configured: table versions
    6, 8 and 9 (8 and 9 name each log file after the deltacommit that wrote it), with meta fields or virtual
    keys (``hoodie.populate.meta.fields=false``: log records keep the meta columns null, as Java writes them)."""
    version = config.get(TableConfig.VERSION)
    if version not in (6, 8, 9):
        raise UnsupportedTableTypeError(base_uri, MERGE_ON_READ, f"write to it at table version {version} (hoodpy "
                                        "writes merge-on-read tables of table versions 6, 8 and 9)")


def writes_merge_on_read(base_uri: str, properties: Mapping[str, str], config: HoodieConfig) -> bool:
    """Whether a write with ``config`` into the table of ``properties`` (hoodie.properties) is a merge-on-read
    write. The table's type decides: an option naming another one is an InvalidConfigError; a merge-on-read
    table hoodpy does not write is refused (:func:`check_merge_on_read_writable`)."""
    table_type = properties.get(TableConfig.TYPE.key, COPY_ON_WRITE)
    if config.get(TableConfig.TYPE) != table_type:
        raise InvalidConfigError(TableConfig.TYPE.key, config.raw(TableConfig.TYPE),
                                 f"the table is {table_type}; its type cannot change")
    if table_type == MERGE_ON_READ:
        check_merge_on_read_writable(base_uri, config)
    return table_type == MERGE_ON_READ


def check_version_writable(base_uri: str, version: int) -> None:
    """Raise UnsupportedServiceError for a table version hoodpy reads but does not write into."""
    if version in READ_ONLY_VERSIONS:
        raise UnsupportedServiceError(base_uri, "Writing", str(version),
                                      "table versions 6, 8 and 9 (upgrade the table with Java Hudi to write)")


def cdc_properties(base_uri: str, requested: HoodieConfig) -> dict[str, str]:
    """The CDC properties a new table records (none unless ``hoodie.table.cdc.enabled``): the flag and the
    supplemental logging mode (Java's enum name). Both table types: a merge-on-read table's log appends are
    read back as changes against the slice before them (Hudi's LOG_FILE inference)."""
    if not requested.get(TableConfig.CDC_ENABLED):
        return {}
    return {TableConfig.CDC_ENABLED.key: "true",
            TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE.key: requested.get(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE)}


def cdc_mode(properties: Mapping[str, str]) -> str | None:
    """The supplemental logging mode of a table with change data capture (its hoodie.properties), else None."""
    config = HoodieConfig.of(dict(properties))
    return config.get(TableConfig.CDC_SUPPLEMENTAL_LOGGING_MODE) if config.get(TableConfig.CDC_ENABLED) else None

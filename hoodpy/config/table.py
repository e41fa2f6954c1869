"""Table-scope keys: what hoodie.properties holds (Hudi's HoodieTableConfig)."""

from __future__ import annotations

from collections.abc import Mapping

from hoodpy.config import ConfigKey, parse_bool, parse_csv, parse_enum, parse_int
from hoodpy.errors import UnsupportedTableTypeError, UnsupportedTableVersionError

SUPPORTED_TABLE_VERSION = 6
SUPPORTED_TIMELINE_LAYOUT = 1
COPY_ON_WRITE, MERGE_ON_READ = "COPY_ON_WRITE", "MERGE_ON_READ"


class TableConfig:
    NAME = ConfigKey("hoodie.table.name", None, doc="Table name.", required=True)
    DATABASE_NAME = ConfigKey("hoodie.database.name", "default", doc="Database the table belongs to.")
    TYPE = ConfigKey(
        "hoodie.table.type", COPY_ON_WRITE, parse_enum(COPY_ON_WRITE, MERGE_ON_READ),
        doc="Table type; hoodpy reads both and writes COPY_ON_WRITE only.",
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
        "hoodie.table.precombine.field", None,
        doc="Ordering field: among records with one key, the largest value wins.",
        aliases=("hoodie.datasource.write.precombine.field",),
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
    CHECKSUM = ConfigKey("hoodie.table.checksum", None, parse_int, doc="CRC32 of '<db>.<table>'.")


def check_supported(base_uri: str, props: Mapping[str, str]) -> None:
    """Raise UnsupportedTableVersionError unless ``hoodie.properties`` describes a table hoodpy reads:
    table version 6, timeline layout 1, copy-on-write or merge-on-read."""
    version = props.get(TableConfig.VERSION.key, "")
    layout = props.get(TableConfig.TIMELINE_LAYOUT_VERSION.key, "1")
    if version != str(SUPPORTED_TABLE_VERSION) or layout != str(SUPPORTED_TIMELINE_LAYOUT):
        raise UnsupportedTableVersionError(
            base_uri, f"table version {version or '?'} / timeline layout {layout}",
            f"table version {SUPPORTED_TABLE_VERSION} / timeline layout {SUPPORTED_TIMELINE_LAYOUT}")
    table_type = props.get(TableConfig.TYPE.key, COPY_ON_WRITE)
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise UnsupportedTableVersionError(base_uri, f"table type {table_type}", f"{COPY_ON_WRITE} / {MERGE_ON_READ}")


def check_writable(base_uri: str, table_type: str, operation: str = "write to") -> None:
    """Raise UnsupportedTableTypeError unless hoodpy writes tables of ``table_type`` (copy-on-write only:
    merge-on-read writes, compaction and log-aware services are not built yet)."""
    if table_type != COPY_ON_WRITE:
        raise UnsupportedTableTypeError(base_uri, table_type, operation)

"""HoodieTable: the public façade over one Hudi table (table version 6): copy-on-write and merge-on-read tables
are read (merge-on-read: snapshot, read-optimized, time travel, incremental) and written (merge-on-read: as
deltacommits appending log files, folded in by compaction).

Example:
    >>> t = HoodieTable.create(spark, "/lake/trips", table_name="trips",
    ...                        record_key_fields=["trip_id"], partition_fields=["city"],
    ...                        precombine_field="ts")
    >>> t.upsert(batch_df)
    >>> t.read().filter("city = 'sf'").show()
    >>> t.read(as_of=t.timeline.completed_commits()[0].timestamp)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from hoodpy.config import HoodieConfig, ordering_fields
from hoodpy.config.read import ReadConfig
from hoodpy.config.properties import load_table_properties, save_table_properties, table_checksum
from hoodpy.config.registry import check_options, check_table_properties
from hoodpy.config.table import (
    cdc_properties,
    COPY_ON_WRITE,
    MERGE_ON_READ,
    SUPPORTED_TABLE_VERSION,
    SUPPORTED_TIMELINE_LAYOUT,
    TableConfig,
    check_merge_on_read_writable,
    check_ordering_field_kept,
    check_supported,
)
from hoodpy.config.table_version import merge_on_read_properties, versioned_properties
from hoodpy.config.write import WriteConfig
from hoodpy.errors import (
    InvalidConfigError,
    TableAlreadyExistsError,
    TableNotFoundError,
)
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.index.bucket import BucketSpec
from hoodpy.keygen import KeyGenerator, key_generator_for_write, split_partition_types, table_defining_properties
from hoodpy.keygen import key_generator_class as resolve_key_generator_class
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.read.cdc import read_cdc
from hoodpy.read.query import Filter, incremental, snapshot
from hoodpy.schema import (
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    avro_schema_to_json,
    normalize_arrow_schema,
    parse_avro_schema,
    to_create_schema_form,
)
from hoodpy.services.archive import archive_after_commit
from hoodpy.services.metadata_archive import archive_metadata_table_after_commit
from hoodpy.services.clean.service import clean_after_commit, validate_after_commit_services
from hoodpy.services.clustering.service import cluster_after_commit, resume_pending_clustering
from hoodpy.services.compaction.service import compact_after_commit, validate_compaction_options
from hoodpy.storage import Storage, open_storage
from hoodpy.timeline.instant import timeline_folder
from hoodpy.timeline.timeline import Timeline, layout_of
from hoodpy.write.operation import WriteOperation
from hoodpy.write.writer import CommitResult, Writer


class HoodieTable:
    """One table at a base path. Cheap to construct; the timeline is re-read on each operation."""

    def __init__(self, spark: SparkSession, storage: Storage, properties: dict[str, str],
                 options: Mapping[str, Any] | None = None):
        self.spark = spark
        self.storage = storage
        self.properties = properties
        self.options = dict(options or {})
        check_table_properties(properties, properties.get(TableConfig.NAME.key, storage.base_uri))
        check_options(self.options)
        self.config = HoodieConfig.of(properties, self.options)
        # Options under any name override the table's properties in self.config; those that would change how
        # keys, partition paths or merges come out are refused naming them (completions are taken).
        recorded = HoodieConfig.of(properties)
        check_ordering_field_kept(recorded, self.options)
        self.keygen = key_generator_for_write(KeyGenerator.from_config(recorded), recorded, self.options)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def create(cls, spark: SparkSession, path: str, *, table_name: str, record_key_fields: Sequence[str],
               partition_fields: Sequence[str] = (), precombine_field: str | None = None,
               hive_style_partitioning: bool = False, database_name: str = "default",
               key_generator_class: str | None = None, schema: StructType | None = None,
               options: Mapping[str, Any] | None = None,
               table_properties: Mapping[str, Any] | None = None, table_type: str | None = None) -> HoodieTable:
        """Create an empty table: writes ``.hoodie/hoodie.properties``; data arrives with the first write.

        Empty ``record_key_fields``: Hudi's auto-generated record keys (inserts and bulk inserts make keys
        ``<instant>_<task partition>_<row>``; updates and deletes take ``_hoodie_record_key`` from the rows).

        ``table_type``: ``COPY_ON_WRITE`` (the default) or ``MERGE_ON_READ``, else ``hoodie.table.type`` from
        ``table_properties`` / ``options``.

        ``table_properties`` may carry what else defines the table's keys and files: the key generator type,
        ``hoodie.keygen.timebased.*``, CustomKeyGenerator's ``field:TYPE`` partition fields
        (``hoodie.datasource.write.partitionpath.field``), url-encoded partitions and
        ``hoodie.populate.meta.fields``; they are recorded in hoodie.properties."""
        storage = open_storage(spark, path, options)
        if storage.exists(".hoodie/hoodie.properties"):
            raise TableAlreadyExistsError(storage.base_uri)
        keys = tuple(record_key_fields) if not isinstance(record_key_fields, str) else (record_key_fields,)
        parts = tuple(partition_fields) if not isinstance(partition_fields, str) else (partition_fields,)
        defining = table_defining_properties(parts, table_properties)
        parts = split_partition_types(parts)[0]
        props: dict[str, str] = {
            TableConfig.NAME.key: table_name,
            TableConfig.DATABASE_NAME.key: database_name,
            TableConfig.TYPE.key: COPY_ON_WRITE,
            TableConfig.VERSION.key: str(SUPPORTED_TABLE_VERSION),
            TableConfig.TIMELINE_LAYOUT_VERSION.key: str(SUPPORTED_TIMELINE_LAYOUT),
            TableConfig.KEY_GENERATOR_CLASS.key: key_generator_class or resolve_key_generator_class(
                HoodieConfig.of(table_properties), keys, parts),
            TableConfig.HIVE_STYLE_PARTITIONING.key: str(bool(hive_style_partitioning)).lower(),
            TableConfig.URL_ENCODE_PARTITIONING.key: "false",
            TableConfig.DROP_PARTITION_COLUMNS.key: "false",
            TableConfig.ARCHIVELOG_FOLDER.key: "archived",
            TableConfig.BASE_FILE_FORMAT.key: "PARQUET",
            TableConfig.POPULATE_META_FIELDS.key: "true",
            TableConfig.TIMELINE_TIMEZONE.key: "UTC",
            **defining,
        }
        if keys:  # none: keys are generated on insert, and hoodie.properties names none (as Hudi's)
            props[TableConfig.RECORD_KEY_FIELDS.key] = ",".join(keys)
        if parts:
            props[TableConfig.PARTITION_FIELDS.key] = ",".join(parts)
        if precombine_field:
            props[TableConfig.PRECOMBINE_FIELD.key] = precombine_field = HoodieConfig(
                {TableConfig.PRECOMBINE_FIELD.key: precombine_field}).get(TableConfig.PRECOMBINE_FIELD)
        if schema is not None:
            missing = [f for f in (*keys, *parts, *ordering_fields(precombine_field))
                       if f not in schema.fieldNames()]
            if missing:
                raise InvalidConfigError("schema", schema.simpleString(),
                                         f"lacks configured field(s) {', '.join(missing)}")
            arrow = normalize_arrow_schema(to_arrow_schema(schema))
            props[TableConfig.CREATE_SCHEMA.key] = avro_schema_to_json(
                to_create_schema_form(avro_schema_from_arrow(arrow, table_name)))
        props[TableConfig.CHECKSUM.key] = str(table_checksum(database_name, table_name))
        keygen = KeyGenerator.from_config(HoodieConfig.of(props))  # validates before anything is written
        requested = HoodieConfig.of(props, table_properties, options,
                                    {TableConfig.TYPE.key: table_type} if table_type else None)
        props[TableConfig.TYPE.key] = requested.get(TableConfig.TYPE)
        if props[TableConfig.TYPE.key] == MERGE_ON_READ:
            check_merge_on_read_writable(storage.base_uri, HoodieConfig.of(requested.options, {
                TableConfig.VERSION.key: requested.get(TableConfig.WRITE_TABLE_VERSION)}))
            if requested.get(TableConfig.WRITE_TABLE_VERSION) == 6:  # 1.x records the merge mode instead
                props.update(merge_on_read_properties(requested, precombine_field))
        BucketSpec.of(requested)  # a bad bucket index layout fails before the table exists
        props.update(cdc_properties(storage.base_uri, requested))
        props = versioned_properties(props, requested.get(TableConfig.WRITE_TABLE_VERSION),
                                     requested.get(WriteConfig.RECORD_MERGE_MODE), keygen.kind)
        for folder in (".hoodie/.temp", ".hoodie/.aux", ".hoodie/archived", ".hoodie/.schema",
                       timeline_folder(layout_of(props))):
            storage.mkdirs(folder)
        save_table_properties(storage, props)
        return cls(spark, storage, props, options)

    @classmethod
    def for_path(cls, spark: SparkSession, path: str, *, options: Mapping[str, Any] | None = None,
                 ) -> HoodieTable:
        """Open the table at ``path`` (written by hoodpy or by Java Hudi)."""
        storage = open_storage(spark, path, options)
        props = load_table_properties(storage)
        if props is None:
            raise TableNotFoundError(storage.base_uri)
        check_supported(storage.base_uri, props)
        return cls(spark, storage, props, options)

    @classmethod
    def exists(cls, path: str) -> bool:
        return Storage(path).exists(".hoodie/hoodie.properties")

    # -- what the table is -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.properties[TableConfig.NAME.key]

    @property
    def base_path(self) -> str:
        return self.storage.base_uri

    @property
    def timeline(self) -> Timeline:
        """A fresh load of the active timeline."""
        return Timeline.load(self.storage)

    def file_system_view(self, as_of: str | None = None) -> FileSystemView:
        """The view as of an instant; raises InstantNotRetainedError when cleaning removed files it needs."""
        timeline = self.timeline
        if as_of is not None:
            from hoodpy.services.clean.retention import check_retained

            check_retained(self.storage, timeline, as_of)
        return FileSystemView.load(self.storage, timeline, as_of=as_of)

    def arrow_schema(self, timeline: Timeline | None = None, as_of: str | None = None) -> pa.Schema | None:
        """The data schema (no meta columns) of the newest commit at or before ``as_of``."""
        timeline = timeline or self.timeline
        # As of an instant: the commits completed by then, archived ones of versions 8 and 9 included.
        commits = (timeline.completed_commits() if as_of is None
                   else timeline.completed_commits_in_range(None, as_of, archived=True))
        for instant in reversed(commits):
            text = timeline.commit_metadata(instant).schema
            if text:
                return arrow_schema_from_avro(parse_avro_schema(text))
        create = self.properties.get(TableConfig.CREATE_SCHEMA.key)
        return arrow_schema_from_avro(parse_avro_schema(create)) if create else None

    def spark_schema(self, as_of: str | None = None, timeline: Timeline | None = None) -> StructType:
        """Meta columns followed by the data columns, as reads return them; no meta columns for a table
        with virtual keys (as Hudi's schema resolver and hudi-rs read one)."""
        arrow = self.arrow_schema(timeline, as_of=as_of)
        meta = [StructField(c, StringType(), True) for c in META_COLUMNS] if self.populates_meta_fields else []
        data = from_arrow_schema(arrow, prefer_timestamp_ntz=True).fields if arrow is not None else []
        return StructType(meta + list(data))

    @property
    def populates_meta_fields(self) -> bool:
        """False for a table with virtual keys (``hoodie.populate.meta.fields=false``)."""
        return self.config.get(TableConfig.POPULATE_META_FIELDS)

    @property
    def clustering(self):
        """Clustering: ``schedule(...)`` a plan, ``execute(plan)`` it, or ``run(...)`` both."""
        from hoodpy.services.clustering.service import ClusteringService

        return ClusteringService.of(self)

    @property
    def compaction(self):
        """Compaction (merge-on-read tables): ``schedule(...)`` a plan, ``execute(plan)`` it, or ``run(...)``
        both; ``instants()`` lists them."""
        from hoodpy.services.compaction.service import CompactionService

        return CompactionService.of(self)

    @property
    def cleaning(self):
        """Cleaning: ``schedule(options)`` a plan, ``execute(plan)`` it, or ``run(options)`` both."""
        from hoodpy.services.clean.service import CleanService

        return CleanService.of(self)

    @property
    def savepoints(self):
        """Savepoints: ``create(instant_time)``, ``list()``, ``delete(instant_time)``, ``rollback_to(instant_time)``."""
        from hoodpy.services.savepoint import SavepointService

        return SavepointService.of(self)

    def archive(self, options: Mapping[str, Any] | None = None):
        """Move old completed instants into ``.hoodie/archived`` (``hoodie.keep.min/max.commits``)."""
        from hoodpy.services.archive import ArchiveService

        return ArchiveService.of(self).run(options)

    # -- writes ------------------------------------------------------------------------------
    def write(self, df: DataFrame, operation: str | WriteOperation | None = None, *,
              options: Mapping[str, Any] | None = None) -> CommitResult:
        """Write ``df`` with ``operation`` (default: ``hoodie.datasource.write.operation``, i.e. upsert)."""
        check_options(options)
        config = self.config.with_options(options)
        op = WriteOperation(operation if isinstance(operation, WriteOperation)
                            else (str(operation).lower() if operation else config.get(WriteConfig.OPERATION)))
        validate_after_commit_services(config)  # a bad clean / archival option fails before anything is written
        validate_compaction_options(config)
        resume_pending_clustering(self, options)
        result = Writer(self, options).write(df, op)
        self._record_create_schema(result)
        cluster_after_commit(self, options)
        compact_after_commit(self, options)  # merge-on-read tables only
        clean_after_commit(self, options)
        archive_after_commit(self, options)
        archive_metadata_table_after_commit(self, options)
        return result

    def _record_create_schema(self, result: CommitResult) -> None:
        # As Java's first datasource write does: with the schema in hoodie.properties, a table whose commits
        # were all rolled back still reads with its columns instead of meta columns only.
        if TableConfig.CREATE_SCHEMA.key in self.properties or result.metadata is None:
            return
        text = result.metadata.schema
        if not text:
            return
        current = load_table_properties(self.storage) or self.properties
        if TableConfig.CREATE_SCHEMA.key not in current:
            current[TableConfig.CREATE_SCHEMA.key] = avro_schema_to_json(
                to_create_schema_form(parse_avro_schema(text)))
            save_table_properties(self.storage, current)
        self.properties = current

    def upsert(self, df: DataFrame, *, options: Mapping[str, Any] | None = None) -> CommitResult:
        return self.write(df, WriteOperation.UPSERT, options=options)

    def insert(self, df: DataFrame, *, options: Mapping[str, Any] | None = None) -> CommitResult:
        return self.write(df, WriteOperation.INSERT, options=options)

    def bulk_insert(self, df: DataFrame, *, options: Mapping[str, Any] | None = None) -> CommitResult:
        return self.write(df, WriteOperation.BULK_INSERT, options=options)

    def delete(self, df: DataFrame, *, options: Mapping[str, Any] | None = None) -> CommitResult:
        """Delete the records whose keys ``df`` holds (key fields, plus partition fields when present)."""
        return self.write(df, WriteOperation.DELETE, options=options)

    def insert_overwrite(self, df: DataFrame, *, options: Mapping[str, Any] | None = None) -> CommitResult:
        """Replace the partitions present in ``df`` with its records (a replacecommit)."""
        return self.write(df, WriteOperation.INSERT_OVERWRITE, options=options)

    def insert_overwrite_table(self, df: DataFrame, *, options: Mapping[str, Any] | None = None,
                               ) -> CommitResult:
        """Replace the whole table with ``df`` (a replacecommit)."""
        return self.write(df, WriteOperation.INSERT_OVERWRITE_TABLE, options=options)

    def delete_partitions(self, partitions: Sequence[str], *, options: Mapping[str, Any] | None = None,
                          ) -> CommitResult:
        """Hudi's delete_partition: one replacecommit replacing every file group of ``partitions`` (partition
        paths, '*' wildcards allowed); the files stay until the cleaner removes them."""
        listed = [partitions] if isinstance(partitions, str) else list(partitions)
        opts = {**(options or {}), WriteConfig.PARTITIONS_TO_DELETE.key: ",".join(listed)}
        return self.write(self.spark.createDataFrame([], "x int"), WriteOperation.DELETE_PARTITION, options=opts)

    def rollback_to_instant(self, instant_time: str):
        """Undo the latest completed commit (Hudi's rollback_to_instant); returns the rollback instant."""
        from hoodpy.errors import RollbackError
        from hoodpy.services.rollback import RollbackService, rollback_failed_writes

        service = RollbackService.of(self)
        # Failed writes after the target go first (per the failed-writes policy), as the next write would.
        timeline = rollback_failed_writes(service.context.transaction(merge_on_read=True), self.timeline)
        target = next((i for i in timeline.completed_commits() if i.timestamp == instant_time), None)
        if target is None:
            raise RollbackError(f"{instant_time} is not a completed commit of {self.name}")
        return service.run(target=target)

    # -- reads -------------------------------------------------------------------------------
    def read(self, *, as_of: str | None = None, filters: Sequence[Filter] = (), query_type: str | None = None,
             columns: Sequence[str] | None = None) -> DataFrame:
        """Snapshot (or time travel ``as_of`` an instant) with partition and key-range pruning.

        ``query_type``: ``snapshot`` (merge-on-read slices merged with their log files) or ``read_optimized``
        (base files only); default: the ``hoodie.datasource.query.type`` option, else snapshot.
        ``columns``: only these columns, in this order (default: all). Worth giving for a merge-on-read
        table with log files: Spark cannot prune the columns of the rows merged with log records, so without
        it those are decoded and handed to Spark whole, whatever the query selects.
        """
        query = query_type or self.config.raw(ReadConfig.QUERY_TYPE)
        return snapshot(self, as_of=as_of, filters=filters, query=query, columns=columns)

    def read_incremental(self, start: str, end: str | None = None) -> DataFrame:
        """Records committed after ``start`` up to and including ``end`` (their latest version as of ``end``).

        Raises :class:`~hoodpy.errors.ChangesNotReadableError` when the window reaches archived commits or
        cleaned file versions, unless the table was opened with the option
        ``hoodie.datasource.read.incr.fallback.fulltablescan.enable=true`` (then a full scan reads it)."""
        if not self.populates_meta_fields:
            raise InvalidConfigError(TableConfig.POPULATE_META_FIELDS.key, "false",
                                     "incremental reads need the commit time of each row, which a table with "
                                     "virtual keys does not keep (Hudi refuses them too)")
        return incremental(self, start, end)

    def read_cdc(self, start: str, end: str | None = None) -> DataFrame:
        """Change data capture: one row per change committed after ``start`` up to and including ``end``, with
        Hudi's columns ``op`` (``i``, ``u``, ``d``), ``ts_ms`` (the commit's instant time), ``before`` and
        ``after`` (JSON of the record images). The table must have been created with
        ``hoodie.table.cdc.enabled=true`` (either table type); :mod:`hoodpy.read.cdc` says where each change is
        read from."""
        return read_cdc(self, start, end)

    def __repr__(self) -> str:
        return f"HoodieTable({self.name!r}, {self.base_path!r})"

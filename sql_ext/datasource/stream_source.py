"""``spark.readStream.format("hoodpy").load(path)``: a hoodpy table as a Structured Streaming source, a Python
data source (``pyspark.sql.datasource``) registered as ``hoodpy``.

Offsets are instants: ``{"instant": t}`` means every commit that completed by ``t`` was read (completion time in
table versions 8 / 9, instant time in version 6, as incremental queries order commits). A micro-batch over
(start, end] emits what the incremental query over that window returns (:func:`hoodpy.read.query.plan_incremental`):
the latest version, as of ``end``, of each record written by the commits in the window, with its meta columns.
Where the query starts when its checkpoint holds no offset is ``hoodie.datasource.streaming.startOffset``:
``earliest`` (default; every record), ``latest`` (commits after the newest one at start) or an instant time
(commits after it), as Hudi's streaming source takes it.

With ``hoodie.datasource.query.incremental.format=cdc`` (a table with ``hoodie.table.cdc.enabled``) the stream
emits change data capture rows instead, as Hudi's streaming source does with CDC: ``op``, ``ts_ms``, ``before``,
``after`` of each change the commits in (start, end] made (:func:`hoodpy.read.cdc.plan_cdc`; deletes included),
one task per group of (commit, file group) splits, the same rows a batch CDC query over that window returns.

Planning runs in a Python worker on the driver without a SparkSession (timeline and file listing through
pyarrow); each task reads its file slices with pyarrow (merge-on-read slices merged with their log files) and
filters rows by commit time. The schema is the table's when the query starts (the four CDC columns with
``cdc``). As in Hudi without CDC, deletes are not emitted (a deleted record simply stops appearing), and with
concurrent writers on a version 6 table a commit that completes after a later-started one can be missed
(ordering by instant time). Batch reads and writes through
this source are refused: ``spark.read`` / ``df.write`` with ``format("hoodpy")`` take the native route
(:mod:`sql_ext.datasource`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from hoodpy.errors import InvalidConfigError, UnsupportedApiError
from hoodpy.timeline.instant import EARLIEST_INSTANT

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType

    from hoodpy.read.cdc import CdcSplit
    from hoodpy.read.query import CommitWindow
    from hoodpy.table import HoodieTable
    from hoodpy.timeline.timeline import CommittedInstants

MAX_PARTITIONS = 64  # slices are spread over at most this many tasks per micro-batch
_INSTANT = re.compile(r"^\d{14}(\d{3})?$")
_OFFSET = "instant"


def _open(options: Mapping[str, str]) -> HoodieTable:
    from hoodpy.table import HoodieTable
    from sql_ext.datasource.options import hoodpy_options, table_path

    opts = hoodpy_options(dict(options))
    return HoodieTable.for_path(None, table_path(None, opts, "readStream.load()"),
                                options={k: v for k, v in opts.items() if k.startswith("hoodie.")})


def _is_cdc(options: Mapping[str, str]) -> bool:
    """Whether the stream emits change data capture rows (``hoodie.datasource.query.incremental.format``)."""
    from hoodpy.config import HoodieConfig
    from hoodpy.config.read import CDC, ReadConfig
    from sql_ext.datasource.options import hoodpy_options

    return HoodieConfig.of(hoodpy_options(options)).get(ReadConfig.INCREMENTAL_FORMAT) == CDC


class HoodpyDataSource(DataSource):
    """The ``hoodpy`` data source: a stream reader; batch reads and writes go the native route instead."""

    @classmethod
    def name(cls) -> str:
        return "hoodpy"

    def schema(self) -> StructType:
        table = _open(self.options)
        if _is_cdc(self.options):
            from pyspark.sql.types import StringType, StructField, StructType

            from hoodpy.read.cdc import CDC_COLUMNS_DDL, check_cdc_table

            check_cdc_table(table)  # a clear error at start on a table that does not capture changes
            # Parsed here: this runs in a Python worker without a JVM to parse DDL (every CDC column is a string).
            return StructType([StructField(c.split()[0], StringType()) for c in CDC_COLUMNS_DDL.split(",")])
        if not table.populates_meta_fields:
            raise InvalidConfigError("hoodie.populate.meta.fields", "false", "a streaming read emits each record's "
                                     "commit time, which a table with virtual keys does not keep")
        if table.arrow_schema() is None:
            raise InvalidConfigError("path", table.base_path, "the table has no schema yet (no commit and no "
                                     "create schema): write to it first")
        return table.spark_schema()

    def streamReader(self, schema: StructType) -> HoodpyStreamReader:
        return HoodpyStreamReader(dict(self.options), schema)

    def reader(self, schema: StructType):
        raise UnsupportedApiError("A batch read through the hoodpy data source",
                                  "call sql_ext.enable(spark) so that spark.read.format('hoodpy') takes Spark's "
                                  "native parquet scan")

    def writer(self, schema: StructType, overwrite: bool):
        raise UnsupportedApiError("A batch write through the hoodpy data source",
                                  "call sql_ext.enable(spark) so that df.write.format('hoodpy') runs hoodpy's write")

    def streamWriter(self, schema: StructType, overwrite: bool):
        raise UnsupportedApiError("A streaming write through the hoodpy data source",
                                  "call sql_ext.enable(spark) so that writeStream.format('hoodpy') runs hoodpy's "
                                  "foreachBatch sink")


@dataclass(frozen=True)
class SlicePartition(InputPartition):
    """One task's share of a micro-batch: file slices (base file, log files; paths relative to the table) and
    what decides which of their rows belong to the batch."""

    slices: tuple[tuple[str | None, tuple[str, ...]], ...]
    window: CommitWindow
    committed: CommittedInstants
    ordering_field: str | None


@dataclass(frozen=True)
class CdcPartition(InputPartition):
    """One task's share of a CDC micro-batch: the changes of some (commit, file group) pairs."""

    splits: tuple[CdcSplit, ...]


class HoodpyStreamReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str], schema: StructType):
        self.options = dict(options)
        self.schema = schema
        self.cdc = _is_cdc(self.options)
        self._initial: dict | None = None

    def initialOffset(self) -> dict:
        """Asked until the query's first batch is logged in its checkpoint; fixed once computed, so that
        ``latest`` means the newest commit when the query started, not when data arrived."""
        if self._initial is None:
            self._initial = self._first_offset()
        return self._initial

    def _first_offset(self) -> dict:
        from hoodpy.config import HoodieConfig
        from hoodpy.config.read import EARLIEST, LATEST, ReadConfig
        from sql_ext.datasource.options import hoodpy_options

        start = str(HoodieConfig.of(hoodpy_options(self.options)).get(ReadConfig.STREAMING_START_OFFSET)).strip()
        if start.lower() == EARLIEST:
            return {_OFFSET: EARLIEST_INSTANT}
        if start.lower() == LATEST:
            return self.latestOffset()
        if _INSTANT.match(start):
            return {_OFFSET: start if len(start) == 17 else start + "000"}
        raise InvalidConfigError(ReadConfig.STREAMING_START_OFFSET.key, start,
                                 "expected earliest, latest or an instant time (yyyyMMddHHmmss[SSS])")

    def latestOffset(self) -> dict:
        commits = _open(self.options).timeline.completed_commits()
        return {_OFFSET: max((i.completed_at for i in commits), default=EARLIEST_INSTANT)}

    def partitions(self, start: dict, end: dict) -> list[SlicePartition] | list[CdcPartition]:
        from hoodpy.config.write import event_time_ordering_field
        from hoodpy.read.cdc import plan_cdc
        from hoodpy.read.query import plan_incremental

        if end[_OFFSET] <= start[_OFFSET]:
            return []
        table = _open(self.options)
        if self.cdc:
            splits = plan_cdc(table, start[_OFFSET], end[_OFFSET])
            tasks = max(1, min(len(splits), MAX_PARTITIONS))
            return [CdcPartition(tuple(splits[i::tasks])) for i in range(tasks) if splits[i::tasks]]
        plan = plan_incremental(table, start[_OFFSET], end[_OFFSET])
        if not plan.window.commit_times and not plan.window.archived:
            return []
        slices = [(s.base_file.path if s.base_file is not None else None, tuple(lf.path for lf in s.log_files))
                  for s in plan.slices]
        tasks = max(1, min(len(slices), MAX_PARTITIONS))
        ordering = event_time_ordering_field(table.config)
        return [SlicePartition(tuple(slices[i::tasks]), plan.window, plan.committed, ordering)
                for i in range(tasks) if slices[i::tasks]]

    def read(self, partition: SlicePartition | CdcPartition) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        from hoodpy.meta_fields import COMMIT_TIME
        from hoodpy.read.cdc import split_changes
        from hoodpy.read.slice_scan import slice_rows
        from hoodpy.storage import open_storage
        from sql_ext.datasource.options import hoodpy_options, table_path

        opts = hoodpy_options(self.options)
        storage = open_storage(None, table_path(None, opts, "readStream.load()"), opts)
        schema = to_arrow_schema(self.schema)
        if isinstance(partition, CdcPartition):
            for split in partition.splits:
                changes = split_changes(storage, split)
                if changes:
                    yield pa.RecordBatch.from_pylist([dict(zip(schema.names, c, strict=True)) for c in changes],
                                                     schema=schema)
            return
        for base, logs in partition.slices:
            rows = slice_rows(storage, base, logs, schema, partition.committed, partition.ordering_field)
            kept = rows.filter(partition.window.mask(rows.column(COMMIT_TIME)))
            yield from kept.to_batches()

    def commit(self, end: dict) -> None:
        pass  # nothing to release: offsets are instants on the table's own timeline

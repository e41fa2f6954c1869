"""The metadata-table procedures: ``create_metadata_table``, ``init_metadata_table``,
``delete_metadata_table``, ``show_metadata_table_partitions``, ``show_metadata_table_files``,
``validate_metadata_table_files``, ``show_metadata_table_stats`` and ``show_metadata_table_column_stats``.

Parameters and columns are Hudi's (``CreateMetadataTableProcedure``, ``InitMetadataTableProcedure``,
``DeleteMetadataTableProcedure``, ``ShowMetadataTablePartitionsProcedure``, ``ShowMetadataTableFilesProcedure``,
``ValidateMetadataTableFilesProcedure``, ``ShowMetadataTableStatsProcedure``,
``ShowMetadataTableColumnStatsProcedure``), with ``path`` appended. hoodpy's metadata table holds the ``files``
partition (:mod:`hoodpy.metadata_table`); the rows come from :mod:`hoodpy.inspect.metadata_table`. Where Hudi
throws "Metadata Table not enabled/initialized", hoodpy raises
:class:`~hoodpy.errors.MetadataTableError` saying how to create one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from hoodpy.config.metadata import METADATA_TABLE_FOLDER
from hoodpy.inspect import metadata_table as rows
from hoodpy.metadata_table.writer import create_metadata_table, delete_metadata_table
from hoodpy.services.table_service import ServiceContext
from sql_ext.procedures.base import (
    BOOLEAN,
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    spark_output,
)

RESULT = spark_output((("result", "string"),))


class CreateMetadataTableProcedure(Procedure):
    """Build the table's metadata table (its files partition) from the committed files."""

    name = "create_metadata_table"
    parameters = (TABLE, PATH)
    output = RESULT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        context = ServiceContext.of(ctx.table(args))
        started = time.monotonic()
        with context.transaction().locked():
            create_metadata_table(context.storage, context.config)
        return [(f"Created Metadata Table in {context.storage.full_path(METADATA_TABLE_FOLDER)} "
                 f"(duration={time.monotonic() - started:.3f}secs)",)]


class InitMetadataTableProcedure(Procedure):
    """Build the metadata table unless the table has one (``read_only``: only check that it can be read)."""

    name = "init_metadata_table"
    parameters = (TABLE, Parameter.optional("read_only", BOOLEAN, False), PATH)
    output = RESULT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        context = ServiceContext.of(ctx.table(args))
        started = time.monotonic()
        if args["read_only"]:
            rows.read_listing(context.storage)
            action = "Opened"
        else:
            with context.transaction().locked():
                if not rows.has_metadata_table(context.storage):
                    create_metadata_table(context.storage, context.config)
            action = "Initialized"
        return [(f"{action} Metadata Table in {context.storage.full_path(METADATA_TABLE_FOLDER)} "
                 f"(duration={time.monotonic() - started:.3f}secs)",)]


class DeleteMetadataTableProcedure(Procedure):
    """Remove the table's metadata table (hoodie.table.metadata.partitions emptied first, then the folder)."""

    name = "delete_metadata_table"
    parameters = (TABLE, PATH)
    output = RESULT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        context = ServiceContext.of(ctx.table(args))
        with context.transaction().locked():
            delete_metadata_table(context.storage)
        return [(f"Deleted Metadata Table at '{context.storage.full_path(METADATA_TABLE_FOLDER)}'",)]


class ShowMetadataTablePartitionsProcedure(Procedure):
    """The data partitions the metadata table lists."""

    name = "show_metadata_table_partitions"
    parameters = (TABLE, PATH)
    output = spark_output(rows.PARTITIONS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return rows.partitions(ctx.table(args).storage).rows


class ShowMetadataTableFilesProcedure(Procedure):
    """The files the metadata table lists in one partition (``""``: a non-partitioned table's)."""

    name = "show_metadata_table_files"
    parameters = (TABLE, Parameter.optional("partition", STRING, ""), Parameter.optional("limit", INTEGER, 100),
                  Parameter.optional("filter", STRING, "", doc="A predicate over the output columns."), PATH)
    output = spark_output(rows.FILES)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return rows.files(ctx.table(args).storage, args["partition"], limit=args["limit"]).rows


class ValidateMetadataTableFilesProcedure(Procedure):
    """Files whose presence or size differs between the metadata table and storage (``verbose``: every file)."""

    name = "validate_metadata_table_files"
    parameters = (TABLE, Parameter.optional("verbose", BOOLEAN, False), PATH)
    output = spark_output(rows.VALIDATION)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return rows.validate_files(ctx.table(args).storage, verbose=args["verbose"]).rows


class ShowMetadataTableStatsProcedure(Procedure):
    """Base / log file counts and sizes of the metadata partitions' latest slices, and the partition count."""

    name = "show_metadata_table_stats"
    parameters = (TABLE, PATH)
    output = spark_output(rows.STATS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return rows.stats(ctx.table(args).storage).rows


class ShowMetadataTableColumnStatsProcedure(Procedure):
    """The column_stats records: min / max value and null count per file and column."""

    name = "show_metadata_table_column_stats"
    parameters = (TABLE, Parameter.optional("partition", STRING, None, doc="A data partition path (all: unset)."),
                  Parameter.optional("targetColumns", STRING, "", doc="Comma-separated columns (all: empty)."),
                  PATH)
    output = spark_output(rows.COLUMN_STATS)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        columns = [c.strip() for c in (args["targetColumns"] or "").split(",")]
        return rows.column_stats(ctx.table(args).storage, args["partition"], columns).rows

"""``install(spark)``: Spark's DataFrame and streaming API on hoodpy tables for one session (called by
:func:`sql_ext.enable`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sql_ext.datasource.builders import flavour_of, patch_builders, set_read_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def install(spark: SparkSession, *, read_table: Callable[[str, dict], DataFrame | None] | None = None,
            ) -> SparkSession:
    """Route ``format("hoodpy")`` reads, writes and stream writes through hoodpy (process-wide, idempotent),
    register the ``hoodpy`` streaming source with ``spark``, and let ``spark.read.table(name)`` resolve names
    through ``read_table`` (the SQL layer's catalog)."""
    from sql_ext.datasource.stream_source import HoodpyDataSource

    patch_builders(flavour_of(spark))
    sources = getattr(spark, "dataSource", None)  # absent on stand-in sessions (unit tests)
    if sources is not None:
        try:
            sources.register(HoodpyDataSource)
        except Exception as e:
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(e):  # registered by another session of this application
                raise
    set_read_table(spark, read_table)
    return spark


def uninstall(spark: SparkSession) -> Any:
    """Stop resolving ``spark.read.table`` through the SQL layer (the builders stay patched: they pass every
    other format on unchanged)."""
    set_read_table(spark, None)
    return spark

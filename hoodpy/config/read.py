"""Read-scope keys (Hudi's DataSourceReadOptions)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_enum

SNAPSHOT, READ_OPTIMIZED, INCREMENTAL = "snapshot", "read_optimized", "incremental"


class ReadConfig:
    QUERY_TYPE = ConfigKey(
        "hoodie.datasource.query.type", SNAPSHOT, parse_enum(SNAPSHOT, READ_OPTIMIZED, INCREMENTAL),
        doc="snapshot: the latest committed rows (merge-on-read slices merged with their log files); "
            "read_optimized: base files only (for merge-on-read, the rows as of the last compaction); "
            "incremental: HoodieTable.read_incremental.",
    )

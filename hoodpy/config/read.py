"""Read-scope keys (Hudi's DataSourceReadOptions)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_enum

SNAPSHOT, READ_OPTIMIZED, INCREMENTAL = "snapshot", "read_optimized", "incremental"
LATEST_STATE, CDC = "latest_state", "cdc"
EARLIEST, LATEST = "earliest", "latest"


class ReadConfig:
    QUERY_TYPE = ConfigKey(
        "hoodie.datasource.query.type", SNAPSHOT, parse_enum(SNAPSHOT, READ_OPTIMIZED, INCREMENTAL),
        doc="snapshot: the latest committed rows (merge-on-read slices merged with their log files); "
            "read_optimized: base files only (for merge-on-read, the rows as of the last compaction); "
            "incremental: HoodieTable.read_incremental; in SQL (session SET or table OPTIONS), reads of hoodpy "
            "tables return the records committed after hoodie.datasource.read.begin.instanttime.",
    )
    BEGIN_INSTANTTIME = ConfigKey(
        "hoodie.datasource.read.begin.instanttime", None,
        doc="Incremental query (SQL reads with hoodie.datasource.query.type=incremental): records committed "
            "after this instant (exclusive; yyyyMMddHHmmss[SSS], or 000 for the beginning). Required then.",
    )
    END_INSTANTTIME = ConfigKey(
        "hoodie.datasource.read.end.instanttime", None,
        doc="Incremental query: records committed up to this instant (inclusive); the latest commit when unset.",
    )
    INCREMENTAL_FORMAT = ConfigKey(
        "hoodie.datasource.query.incremental.format", LATEST_STATE, parse_enum(LATEST_STATE, CDC),
        doc="latest_state: an incremental query returns the latest version of each record committed in the "
            "window; cdc: change data capture, one row per change (op, ts_ms, before, after) of a table with "
            "hoodie.table.cdc.enabled (HoodieTable.read_cdc).",
    )
    AS_OF_INSTANT = ConfigKey(
        "as.of.instant", None,
        doc="Time travel of spark.read.format('hoodpy'): the table as of an instant (yyyyMMddHHmmss[SSS]) or a "
            "timestamp ('yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd', in the session time zone).",
    )
    STREAMING_START_OFFSET = ConfigKey(
        "hoodie.datasource.streaming.startOffset", EARLIEST,
        doc="Where spark.readStream.format('hoodpy') starts when its checkpoint holds no offset: earliest (every "
            "committed record), latest (commits after the latest one at start) or an instant time (commits after "
            "it). Later runs resume from the checkpoint.",
    )
    INCR_FALLBACK_FULL_TABLE_SCAN = ConfigKey(
        "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, parse_bool,
        doc="Incremental reads (read_incremental, hudi_table_changes, incremental SQL reads) whose window reaches "
            "archived commits or file versions the cleaner removed fail naming the earliest readable start; "
            "true reads such a window by a full scan of the latest snapshot instead, keeping the records whose "
            "commit time is in the window (Hudi's fallback).",
    )

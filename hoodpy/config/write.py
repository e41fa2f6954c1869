"""Write-scope keys: operation, ordering, combining and merge mode (Hudi's HoodieWriteConfig)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, HoodieConfig, parse_bool, parse_enum, parse_int
from hoodpy.config.table import TableConfig

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"


class WriteConfig:
    OPERATION = ConfigKey(
        "hoodie.datasource.write.operation", "upsert",
        parse_enum("insert", "upsert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"),
        doc="Write operation of a DataFrame write.",
    )
    COMBINE_BEFORE_INSERT = ConfigKey(
        "hoodie.combine.before.insert", False, parse_bool,
        doc="Combine duplicate keys within an insert / bulk_insert batch.",
    )
    COMBINE_BEFORE_UPSERT = ConfigKey(
        "hoodie.combine.before.upsert", True, parse_bool,
        doc="Combine duplicate keys within an upsert batch (the largest ordering value wins).",
    )
    RECORD_MERGE_MODE = ConfigKey(
        "hoodie.write.record.merge.mode", None, parse_enum(EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING),
        doc="EVENT_TIME_ORDERING: a stored record with a larger ordering value survives an update; "
        "COMMIT_TIME_ORDERING: the latest write wins. Default: event time when an ordering field is set.",
        aliases=("hoodie.record.merge.mode",),
    )
    SCHEMA_ALLOW_COLUMN_DROP = ConfigKey(
        "hoodie.datasource.write.schema.allow.auto.evolution.column.drop", False, parse_bool,
        doc="Allow a batch without some table columns (they are written as null).",
    )
    WRITE_PARALLELISM = ConfigKey(
        "hoodie.upsert.shuffle.parallelism", 0, parse_int,
        doc="Spark partitions for the merge stage; 0 lets hoodpy pick one per file group.",
        aliases=("hoodie.insert.shuffle.parallelism", "hoodie.bulkinsert.shuffle.parallelism"),
    )


def event_time_ordering_field(config: HoodieConfig) -> str | None:
    """The ordering (precombine) field when records merge by event time; None when the latest write wins
    (commit-time ordering, or no ordering field). Writes and merge-on-read reads merge by the same rule."""
    field = config.get(TableConfig.PRECOMBINE_FIELD)
    mode = config.get(WriteConfig.RECORD_MERGE_MODE)
    if mode is None:
        mode = EVENT_TIME_ORDERING if field else COMMIT_TIME_ORDERING
    return field if mode == EVENT_TIME_ORDERING else None

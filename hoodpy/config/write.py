"""Write-scope keys: operation, ordering, combining and merge mode (Hudi's HoodieWriteConfig).

How a stored record and an incoming one with the same key merge is one of hoodpy's two merge modes. Hudi
states it three ways (its merge mode, a payload class, a record merger strategy); each is accepted where it
means one of the two modes, and refused, naming the value, where it means anything else: ignoring it would
change which record survives.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, HoodieConfig, parse_bool, parse_csv, parse_enum, parse_int, parse_str
from hoodpy.config.table import TableConfig

EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM = "CUSTOM"

_MODEL = "org.apache.hudi.common.model."
# Payload classes whose merge is one of hoodpy's merge modes: as Hudi 1.1 maps them when it upgrades a table
# to version 9 (EightToNineUpgradeHandler) and infers a merge mode (HoodieTableConfig.inferCorrectMergingBehavior).
PAYLOAD_MERGE_MODES = {
    _MODEL + "DefaultHoodieRecordPayload": EVENT_TIME_ORDERING,  # the stored record wins on a larger ordering value
    _MODEL + "EventTimeAvroPayload": EVENT_TIME_ORDERING,  # DefaultHoodieRecordPayload without event-time metadata
    _MODEL + "OverwriteWithLatestAvroPayload": COMMIT_TIME_ORDERING,  # the incoming record always wins
}
# Why the other payloads Hudi ships merge differently (Hudi 1.1 gives them a partial-update mode or delete
# markers on top of a merge mode).
UNSUPPORTED_PAYLOADS = {
    _MODEL + "PartialUpdateAvroPayload": "keeps stored values where the incoming record has nulls",
    _MODEL + "OverwriteNonDefaultsWithLatestAvroPayload": "keeps stored values where the incoming record has "
    "default (null) values",
    _MODEL + "AWSDmsAvroPayload": "deletes records whose Op column is 'D'",
    _MODEL + "debezium.PostgresDebeziumAvroPayload": "orders by the Debezium LSN and deletes by its op column",
    _MODEL + "debezium.MySqlDebeziumAvroPayload": "orders by the binlog position and deletes by its op column",
    "org.apache.hudi.metadata.HoodieMetadataPayload": "is the metadata table's own payload",
}
# Record merger strategy ids of Hudi's built-in merges (HoodieRecordMerger): event time (also 0.14's default,
# which defers to the payload class), commit time, and "defer to the payload class" (1.x).
EVENT_TIME_MERGE_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_MERGE_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
PAYLOAD_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"
BUILTIN_MERGE_STRATEGIES = (EVENT_TIME_MERGE_STRATEGY, COMMIT_TIME_MERGE_STRATEGY, PAYLOAD_MERGE_STRATEGY)
# The record merger implementation that merges through the payload class (0.14's default).
AVRO_RECORD_MERGER = _MODEL + "HoodieAvroRecordMerger"
_MERGE_MODES = (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING)


def parse_merge_mode(value: object) -> str:
    text = str(value).strip().upper().replace("-", "_")
    if text == CUSTOM:
        raise ValueError("the CUSTOM merge mode (a record merger or payload of your own) is not supported by "
                         f"hoodpy; use {EVENT_TIME_ORDERING} or {COMMIT_TIME_ORDERING}")
    if text not in _MERGE_MODES:
        raise ValueError(f"expected one of {', '.join(_MERGE_MODES)}")
    return text


# hoodie.datasource.write.payload.type names (Hudi's RecordPayloadType) and the payload class each stands for.
PAYLOAD_TYPES = {
    "HOODIE_AVRO_DEFAULT": _MODEL + "DefaultHoodieRecordPayload",
    "EVENT_TIME_AVRO": _MODEL + "EventTimeAvroPayload",
    "OVERWRITE_LATEST_AVRO": _MODEL + "OverwriteWithLatestAvroPayload",
    "OVERWRITE_NON_DEF_LATEST_AVRO": _MODEL + "OverwriteNonDefaultsWithLatestAvroPayload",
    "PARTIAL_UPDATE_AVRO": _MODEL + "PartialUpdateAvroPayload",
    "AWS_DMS_AVRO": _MODEL + "AWSDmsAvroPayload",
    "MYSQL_DEBEZIUM_AVRO": _MODEL + "debezium.MySqlDebeziumAvroPayload",
    "POSTGRES_DEBEZIUM_AVRO": _MODEL + "debezium.PostgresDebeziumAvroPayload",
    "HOODIE_METADATA": "org.apache.hudi.metadata.HoodieMetadataPayload",
}


def parse_payload_class(value: object) -> str:
    # Tables from Hudi's incubator days name payloads under com.uber.hoodie; Hudi reads them as org.apache.hudi.
    name = str(value).strip().replace("com.uber.hoodie", "org.apache.hudi")
    if name in PAYLOAD_MERGE_MODES:
        return name
    why = UNSUPPORTED_PAYLOADS.get(name, "is a payload hoodpy does not know")
    raise ValueError(f"hoodpy merges records as {', '.join(c.rsplit('.', 1)[1] for c in PAYLOAD_MERGE_MODES)} do; "
                     f"{name} {why}, so ignoring it would change which records survive")


def parse_payload_type(value: object) -> str:
    """A payload type name, as the payload class it stands for (refused like that class when hoodpy cannot
    merge as it does)."""
    text = str(value).strip().upper()
    if text not in PAYLOAD_TYPES:
        raise ValueError(f"hoodpy merges records as the payload types {', '.join(list(PAYLOAD_TYPES)[:3])} do; "
                         f"{text} is not one of them")
    return parse_payload_class(PAYLOAD_TYPES[text])


def parse_merge_strategy(value: object) -> str:
    text = str(value).strip()
    if text not in BUILTIN_MERGE_STRATEGIES:
        raise ValueError("a record merger strategy of your own is not supported by hoodpy (built in: "
                         f"{', '.join(BUILTIN_MERGE_STRATEGIES)})")
    return text


def parse_merger_impls(value: object) -> str:
    classes = [c.strip() for c in str(value).split(",") if c.strip()]
    if any(c != AVRO_RECORD_MERGER for c in classes):
        raise ValueError(f"record merger implementations are not supported by hoodpy (only {AVRO_RECORD_MERGER}, "
                         "which merges through the payload class)")
    return ",".join(classes)


class WriteConfig:
    OPERATION = ConfigKey(
        "hoodie.datasource.write.operation", "upsert",
        parse_enum("insert", "upsert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                   "delete_partition"),
        doc="Write operation of a DataFrame write.",
    )
    PARTITIONS_TO_DELETE = ConfigKey(
        "hoodie.datasource.write.partitions.to.delete", (), parse_csv,
        doc="The partition paths a delete_partition write replaces (comma-separated; '*' and '?' match as in "
        "Hudi's wildcard partitions). Not set: the partitions of the batch's rows.",
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
        "hoodie.write.record.merge.mode", None, parse_merge_mode,
        doc="EVENT_TIME_ORDERING: a stored record with a larger ordering value survives an update; "
        "COMMIT_TIME_ORDERING: the latest write wins; CUSTOM is refused. Default: from the payload class, "
        "else event time when an ordering field is set.",
        aliases=("hoodie.record.merge.mode",),
    )
    PAYLOAD_CLASS = ConfigKey(
        "hoodie.datasource.write.payload.class", None, parse_payload_class,
        doc="Hudi payload class, honoured as the merge mode it equals (when hoodie.write.record.merge.mode is "
        "not set): DefaultHoodieRecordPayload and EventTimeAvroPayload as EVENT_TIME_ORDERING, "
        "OverwriteWithLatestAvroPayload as COMMIT_TIME_ORDERING; any other class is refused.",
        aliases=("hoodie.compaction.payload.class",),
    )
    PAYLOAD_TYPE = ConfigKey(
        "hoodie.datasource.write.payload.type", None, parse_payload_type,
        doc="Hudi payload type, used when no payload class is set: HOODIE_AVRO_DEFAULT and EVENT_TIME_AVRO as "
        "EVENT_TIME_ORDERING, OVERWRITE_LATEST_AVRO as COMMIT_TIME_ORDERING; any other type is refused.",
        aliases=("hoodie.compaction.payload.type",),
    )
    MERGE_STRATEGY_ID = ConfigKey(
        "hoodie.record.merge.strategy.id", None, parse_merge_strategy,
        doc="Record merger strategy id: Hudi's built-in event-time, commit-time and payload-based ids are "
        "accepted (the merge mode or payload class decides); a strategy of your own is refused.",
        aliases=("hoodie.write.record.merge.strategy.id", "hoodie.datasource.write.record.merger.strategy",
                 "hoodie.compaction.record.merger.strategy"),
    )
    MERGER_IMPLS = ConfigKey(
        "hoodie.write.record.merge.custom.implementation.classes", "", parse_merger_impls,
        doc="Record merger classes: only HoodieAvroRecordMerger (merging through the payload class) is accepted.",
        aliases=("hoodie.datasource.write.record.merger.impls",),
    )
    SCHEMA_ALLOW_COLUMN_DROP = ConfigKey(
        "hoodie.datasource.write.schema.allow.auto.evolution.column.drop", False, parse_bool,
        doc="Allow a batch without some table columns (they are written as null).",
    )
    COMMIT_METADATA_KEY_PREFIX = ConfigKey(
        "hoodie.datasource.write.commitmeta.key.prefix", "_", parse_str,
        doc="Write options whose key starts with this prefix are stored in the commit's extraMetadata (as "
        "Hudi's datasource does): a pipeline records its checkpoint in the same commit as its data.",
    )
    STREAMING_CHECKPOINT_IDENTIFIER = ConfigKey(
        "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
        doc="The streaming sink (df.writeStream.format('hoodpy')) records each micro-batch's id under this name "
            "in the commit's extraMetadata (_hudi_streaming_sink_checkpoint, as Hudi's sink does) and skips a "
            "batch it already committed; give each query writing into one table its own identifier.",
    )
    WRITE_PARALLELISM = ConfigKey(
        "hoodie.upsert.shuffle.parallelism", 0, parse_int,
        doc="Spark partitions for the merge stage; 0 lets hoodpy pick one per file group.",
        aliases=("hoodie.insert.shuffle.parallelism", "hoodie.bulkinsert.shuffle.parallelism"),
    )
    BULK_INSERT_SORT_MODE = ConfigKey(
        "hoodie.bulkinsert.sort.mode", "NONE",
        parse_enum("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                   "PARTITION_PATH_REPARTITION_AND_SORT"),
        doc="How bulk_insert orders rows before writing (Hudi's BulkInsertSortMode). NONE (Hudi's default): "
            "each Spark task writes its rows as they come, a new file group per partition path whenever a file "
            "is full; no shuffle, but files' key ranges overlap. GLOBAL_SORT: rows sorted by partition path and "
            "record key across the batch (a sample job and a shuffle), so files have narrow, disjoint key ranges "
            "that bloom-index range pruning uses on later upserts. PARTITION_SORT: sorted within each task, no "
            "shuffle. PARTITION_PATH_REPARTITION(_AND_SORT): rows of a partition path brought to one task "
            "(then sorted by record key).",
    )


def merge_mode(config: HoodieConfig, ordering_field: str | None) -> str:
    """The merge mode a write uses: hoodie.write.record.merge.mode, else the payload class's (or payload
    type's), else event time when there is an ordering field (commit time without one)."""
    mode = config.get(WriteConfig.RECORD_MERGE_MODE)
    if mode is not None:
        return mode
    payload = config.get(WriteConfig.PAYLOAD_CLASS) or config.get(WriteConfig.PAYLOAD_TYPE)
    if payload is not None:
        return PAYLOAD_MERGE_MODES[payload]
    return EVENT_TIME_ORDERING if ordering_field else COMMIT_TIME_ORDERING


def event_time_ordering_field(config: HoodieConfig) -> str | None:
    """The ordering (precombine) field when records merge by event time; None when the latest write wins
    (commit-time ordering, or no ordering field). Writes and merge-on-read reads merge by the same rule."""
    field = config.get(TableConfig.PRECOMBINE_FIELD)
    return field if field and merge_mode(config, field) == EVENT_TIME_ORDERING else None

"""Table versions hoodpy writes: what ``hoodie.properties`` says at each (Hudi 0.14: 6; Hudi 1.0: 8;
Hudi 1.1: 9).

A new table is version 6 unless ``hoodie.write.table.version`` asks for 8 or 9. Versions 8 and 9 keep their
timeline in ``.hoodie/timeline`` (layout 2) and record a few keys version 6 does not have; the values below
are those of the Hudi 1.0 and 1.1 fixtures (``hudi-samples/hudi-rs/sample_table/cow/v8_*`` and ``v9_*``).
Version 9 names the ordering field ``hoodie.table.ordering.fields``, records ``hoodie.table.format=native``
and the key generator by type only, and no merge strategy id for the two ordering merge modes.
"""

from __future__ import annotations

from collections.abc import Mapping

from hoodpy.config import HoodieConfig
from hoodpy.config.keygen import KeyGeneratorConfig
from hoodpy.config.table import INITIAL_VERSION_KEY, WRITABLE_VERSIONS, TableConfig
from hoodpy.config.write import (
    COMMIT_TIME_ORDERING,
    EVENT_TIME_MERGE_STRATEGY,
    EVENT_TIME_ORDERING,
    WriteConfig,
    merge_mode,
)
from hoodpy.errors import InvalidConfigError

# Hudi's HoodieRecordMerger strategy ids of the two merge modes (as Hudi 1.0 records them with the mode).
MERGE_STRATEGY_IDS = {
    EVENT_TIME_ORDERING: "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    COMMIT_TIME_ORDERING: "ce9acb64-bde0-424c-9b91-f6ebba25356d",
}
MERGE_MODE_PROPERTY = WriteConfig.RECORD_MERGE_MODE.aliases[0]  # hoodie.record.merge.mode, as tables store it
ORDERING_FIELDS_PROPERTY = "hoodie.table.ordering.fields"  # version 9's name of hoodie.table.precombine.field
TABLE_FORMAT_PROPERTY = "hoodie.table.format"
NATIVE_TABLE_FORMAT = "native"
PAYLOAD_CLASS_PROPERTY = "hoodie.compaction.payload.class"  # as version-6 tables store the payload class
MERGE_STRATEGY_PROPERTY = "hoodie.compaction.record.merger.strategy"
_PAYLOAD_OF_MODE = {
    EVENT_TIME_ORDERING: "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    COMMIT_TIME_ORDERING: "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
}


def versioned_properties(props: Mapping[str, str], version: int, merge_mode: str | None = None,
                         key_generator_type: str | None = None) -> dict[str, str]:
    """``props`` (a new version-6 table's properties) turned into those of a new table of ``version``;
    ``merge_mode``: the configured record merge mode (default: event time with an ordering field);
    ``key_generator_type``: Hudi's type name of the table's key generator (versions 8 and 9 record it)."""
    if version not in WRITABLE_VERSIONS:
        raise InvalidConfigError(TableConfig.WRITE_TABLE_VERSION.key, version, f"must be one of {WRITABLE_VERSIONS}")
    out = dict(props)
    out[TableConfig.VERSION.key] = str(version)
    if version == 6:
        out[TableConfig.TIMELINE_LAYOUT_VERSION.key] = "1"
        return out
    out[TableConfig.TIMELINE_LAYOUT_VERSION.key] = "2"
    out[INITIAL_VERSION_KEY] = str(version)
    out[TableConfig.TIMELINE_PATH.key] = TableConfig.TIMELINE_PATH.default
    out[TableConfig.TIMELINE_HISTORY_PATH.key] = TableConfig.TIMELINE_HISTORY_PATH.default
    mode = merge_mode or (EVENT_TIME_ORDERING if out.get(TableConfig.PRECOMBINE_FIELD.key) else COMMIT_TIME_ORDERING)
    out[MERGE_MODE_PROPERTY] = mode
    if key_generator_type:
        out[KeyGeneratorConfig.TYPE.key] = key_generator_type
    if version == 8:
        if mode in MERGE_STRATEGY_IDS:
            out[WriteConfig.MERGE_STRATEGY_ID.key] = MERGE_STRATEGY_IDS[mode]
        return out
    ordering = out.pop(TableConfig.PRECOMBINE_FIELD.key, None)
    if ordering:
        out[ORDERING_FIELDS_PROPERTY] = ordering
    out[TABLE_FORMAT_PROPERTY] = NATIVE_TABLE_FORMAT
    if key_generator_type:
        out.pop(TableConfig.KEY_GENERATOR_CLASS.key, None)  # the type says it, as Hudi 1.1 records it
    return out


def merge_on_read_properties(config: HoodieConfig, precombine_field: str | None) -> dict[str, str]:
    """What a new merge-on-read table of version 6 records besides a copy-on-write one, as Java Hudi 0.14 does
    (the v6 merge-on-read samples' hoodie.properties): the payload class and record merger strategy its readers
    and compaction merge log records with. The payload class is the one of the table's merge mode, so that
    Java merges as hoodpy does: DefaultHoodieRecordPayload (event time) or OverwriteWithLatestAvroPayload
    (commit time, Java's default)."""
    payload = _PAYLOAD_OF_MODE[merge_mode(config, precombine_field)]
    return {PAYLOAD_CLASS_PROPERTY: payload, MERGE_STRATEGY_PROPERTY: EVENT_TIME_MERGE_STRATEGY}

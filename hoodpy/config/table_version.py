"""Table versions hoodpy writes: what ``hoodie.properties`` says at each (Hudi 0.14: 6; Hudi 1.0: 8).

A new table is version 6 unless ``hoodie.write.table.version`` asks for 8. Version 8 keeps its timeline in
``.hoodie/timeline`` (layout 2) and records a few keys version 6 does not have; the values below are those
of the Hudi 1.0 fixtures (``hudi-samples/hudi-rs/sample_table/cow/v8_*``).
"""

from __future__ import annotations

from collections.abc import Mapping

from hoodpy.config import ConfigKey, parse_int
from hoodpy.config.table import TableConfig
from hoodpy.config.write import COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING, WriteConfig
from hoodpy.errors import InvalidConfigError

WRITABLE_VERSIONS = (6, 8)
# Hudi's HoodieRecordMerger strategy ids of the two merge modes (as Hudi 1.0 records them with the mode).
MERGE_STRATEGY_IDS = {
    EVENT_TIME_ORDERING: "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    COMMIT_TIME_ORDERING: "ce9acb64-bde0-424c-9b91-f6ebba25356d",
}
# hoodie.table.keygenerator.type of the key generator classes hoodpy creates tables with.
KEY_GENERATOR_TYPES = {
    "org.apache.hudi.keygen.SimpleKeyGenerator": "SIMPLE",
    "org.apache.hudi.keygen.ComplexKeyGenerator": "COMPLEX",
    "org.apache.hudi.keygen.NonpartitionedKeyGenerator": "NON_PARTITION",
    "org.apache.hudi.keygen.TimestampBasedKeyGenerator": "TIMESTAMP",
    "org.apache.hudi.keygen.CustomKeyGenerator": "CUSTOM",
}
KEY_GENERATOR_TYPE = ConfigKey(
    "hoodie.table.keygenerator.type", None,
    doc="Key generator type (table versions 8 and 9 record it beside or instead of the class).")
MERGE_STRATEGY_ID = ConfigKey(
    "hoodie.record.merge.strategy.id", None,
    doc="Record merger strategy id Hudi 1.x records with the merge mode (event time or commit time).")


def _parse_write_version(value: str | int) -> int:
    version = parse_int(value)
    if version not in WRITABLE_VERSIONS:
        raise ValueError(f"hoodpy creates tables of version {' or '.join(map(str, WRITABLE_VERSIONS))}")
    return version


WRITE_TABLE_VERSION = ConfigKey(
    "hoodie.write.table.version", 6, _parse_write_version,
    doc="Table version of a table hoodpy creates: 6 (Hudi 0.14, the default) or 8 (Hudi 1.0, timeline "
        "layout 2). Writes into an existing table keep its version.")


MERGE_MODE_PROPERTY = WriteConfig.RECORD_MERGE_MODE.aliases[0]  # hoodie.record.merge.mode, as tables store it


def versioned_properties(props: Mapping[str, str], version: int, merge_mode: str | None = None) -> dict[str, str]:
    """``props`` (a new version-6 table's properties) turned into those of a new table of ``version``;
    ``merge_mode``: the configured record merge mode (default: event time with an ordering field)."""
    if version not in WRITABLE_VERSIONS:
        raise InvalidConfigError(WRITE_TABLE_VERSION.key, version, f"must be one of {WRITABLE_VERSIONS}")
    out = dict(props)
    out[TableConfig.VERSION.key] = str(version)
    if version == 6:
        out[TableConfig.TIMELINE_LAYOUT_VERSION.key] = "1"
        return out
    out[TableConfig.TIMELINE_LAYOUT_VERSION.key] = "2"
    out[TableConfig.INITIAL_VERSION.key] = str(version)
    out[TableConfig.TIMELINE_PATH.key] = TableConfig.TIMELINE_PATH.default
    out[TableConfig.TIMELINE_HISTORY_PATH.key] = TableConfig.TIMELINE_HISTORY_PATH.default
    mode = merge_mode or (EVENT_TIME_ORDERING if out.get(TableConfig.PRECOMBINE_FIELD.key) else COMMIT_TIME_ORDERING)
    out[MERGE_MODE_PROPERTY] = mode
    if mode in MERGE_STRATEGY_IDS:
        out[MERGE_STRATEGY_ID.key] = MERGE_STRATEGY_IDS[mode]
    key_type = KEY_GENERATOR_TYPES.get(out.get(TableConfig.KEY_GENERATOR_CLASS.key, ""))
    if key_type:
        out[KEY_GENERATOR_TYPE.key] = key_type
    return out

"""Clean-scope keys: which file versions the cleaner keeps and when it runs (Hudi 0.14's HoodieCleanConfig),
and archival keys: how many instants stay on the active timeline (HoodieArchivalConfig)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, HoodieConfig, parse_bool, parse_enum, parse_int
from hoodpy.errors import InvalidConfigError

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
NUM_COMMITS = "NUM_COMMITS"


class CleanConfig:
    AUTOMATIC = ConfigKey(
        "hoodie.clean.automatic", True, parse_bool,
        doc="Clean right after each commit (when the trigger strategy says so).",
    )
    POLICY = ConfigKey(
        "hoodie.cleaner.policy", KEEP_LATEST_COMMITS,
        parse_enum(KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS),
        doc="KEEP_LATEST_COMMITS: keep what queries as of the last N commits read; KEEP_LATEST_FILE_VERSIONS: "
        "keep N versions per file group; KEEP_LATEST_BY_HOURS: keep what queries of the last N hours read. "
        "Unset: inferred from the one *.retained key that is set, else KEEP_LATEST_COMMITS.",
    )
    COMMITS_RETAINED = ConfigKey(
        "hoodie.cleaner.commits.retained", 10, parse_int,
        doc="KEEP_LATEST_COMMITS: number of latest commits whose snapshots stay readable.",
    )
    FILE_VERSIONS_RETAINED = ConfigKey(
        "hoodie.cleaner.fileversions.retained", 3, parse_int,
        doc="KEEP_LATEST_FILE_VERSIONS: versions kept per file group.",
    )
    HOURS_RETAINED = ConfigKey(
        "hoodie.cleaner.hours.retained", 24, parse_int,
        doc="KEEP_LATEST_BY_HOURS: hours (before the latest instant) whose snapshots stay readable.",
    )
    TRIGGER_STRATEGY = ConfigKey(
        "hoodie.clean.trigger.strategy", NUM_COMMITS, parse_enum(NUM_COMMITS),
        doc="When an automatic clean is planned: NUM_COMMITS (after hoodie.clean.max.commits commits).",
    )
    MAX_COMMITS = ConfigKey(
        "hoodie.clean.max.commits", 1, parse_int,
        doc="Commits since the last clean before a clean is planned.",
    )
    INCREMENTAL_MODE = ConfigKey(
        "hoodie.cleaner.incremental.mode", True, parse_bool,
        doc="Scan only the partitions written since the last clean's earliest retained commit.",
    )

    @staticmethod
    def policy(config: HoodieConfig) -> str:
        """The policy, inferred as Hudi does when unset: from the single *.retained key that is set."""
        if config.is_set(CleanConfig.POLICY):
            return config.get(CleanConfig.POLICY)
        inferred = [policy for policy, key in RETAINED_BY_POLICY.items() if config.is_set(key)]
        return inferred[0] if len(inferred) == 1 else KEEP_LATEST_COMMITS

    @staticmethod
    def validate(config: HoodieConfig) -> None:
        for key in (CleanConfig.AUTOMATIC, CleanConfig.POLICY, CleanConfig.TRIGGER_STRATEGY,
                    CleanConfig.INCREMENTAL_MODE):
            config.get(key)
        for key, low in ((CleanConfig.COMMITS_RETAINED, 1), (CleanConfig.FILE_VERSIONS_RETAINED, 1),
                         (CleanConfig.HOURS_RETAINED, 0), (CleanConfig.MAX_COMMITS, 1)):
            value = config.get(key)
            if value < low:
                raise InvalidConfigError(key.key, value, f"must be at least {low}")



# Each policy's retention key: what N means under it.
RETAINED_BY_POLICY = {KEEP_LATEST_COMMITS: CleanConfig.COMMITS_RETAINED,
                      KEEP_LATEST_FILE_VERSIONS: CleanConfig.FILE_VERSIONS_RETAINED,
                      KEEP_LATEST_BY_HOURS: CleanConfig.HOURS_RETAINED}

class ArchivalConfig:
    AUTOMATIC = ConfigKey(
        "hoodie.archive.automatic", True, parse_bool,
        doc="Archive old instants right after each commit.",
    )
    MIN_COMMITS = ConfigKey(
        "hoodie.keep.min.commits", 20, parse_int,
        doc="Archival trims the active timeline down to this many instants (per action group).",
    )
    MAX_COMMITS = ConfigKey(
        "hoodie.keep.max.commits", 30, parse_int,
        doc="Archival starts once the active timeline holds more than this many instants.",
    )
    BATCH = ConfigKey(
        "hoodie.commits.archival.batch", 10, parse_int,
        doc="Instants per Avro data block in the archive log file (table version 6).",
    )
    TIMELINE_COMPACTION_BATCH = ConfigKey(
        "hoodie.timeline.compaction.batch.size", 10, parse_int,
        doc="Table versions 8 and 9: once a layer of the LSM history holds this many files, they are merged "
            "into one file of the next layer.",
    )

    @staticmethod
    def validate(config: HoodieConfig) -> None:
        config.get(ArchivalConfig.AUTOMATIC)
        low, high = config.get(ArchivalConfig.MIN_COMMITS), config.get(ArchivalConfig.MAX_COMMITS)
        if low < 1:
            raise InvalidConfigError(ArchivalConfig.MIN_COMMITS.key, low, "must be at least 1")
        if high <= low:
            raise InvalidConfigError(ArchivalConfig.MAX_COMMITS.key, high,
                                     f"must be larger than {ArchivalConfig.MIN_COMMITS.key} ({low})")
        if config.get(ArchivalConfig.BATCH) < 1:
            raise InvalidConfigError(ArchivalConfig.BATCH.key, config.get(ArchivalConfig.BATCH), "must be at least 1")
        compaction = config.get(ArchivalConfig.TIMELINE_COMPACTION_BATCH)
        if compaction < 1:
            raise InvalidConfigError(ArchivalConfig.TIMELINE_COMPACTION_BATCH.key, compaction, "must be at least 1")

"""Compaction-scope keys: when writers compact a merge-on-read table, and which file slices a plan takes
(Hudi's HoodieCompactionConfig, 0.14 defaults)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, HoodieConfig, parse_bool, parse_enum, parse_int
from hoodpy.errors import InvalidConfigError

LOG_FILE_SIZE_BASED_STRATEGY = "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy"

# hoodie.compact.inline.trigger.strategy (Hudi's CompactionTriggerStrategy)
NUM_COMMITS = "NUM_COMMITS"
TIME_ELAPSED = "TIME_ELAPSED"
NUM_AND_TIME = "NUM_AND_TIME"
NUM_OR_TIME = "NUM_OR_TIME"


class CompactionConfig:
    INLINE = ConfigKey(
        "hoodie.compact.inline", False, parse_bool,
        doc="Merge-on-read tables: after each write, schedule a compaction when the trigger strategy says so and "
            "execute it (pending compactions an earlier run left are finished first).",
    )
    SCHEDULE_INLINE = ConfigKey(
        "hoodie.compact.schedule.inline", False, parse_bool,
        doc="Writers only schedule compactions (when the trigger strategy says so and none is pending); another "
            "job executes them (run_compaction). hoodie.compact.inline=true wins over it.",
    )
    INLINE_MAX_DELTA_COMMITS = ConfigKey(
        "hoodie.compact.inline.max.delta.commits", 5, parse_int,
        doc="NUM_COMMITS trigger: deltacommits (in any state) since the last completed commit or replacecommit.",
    )
    INLINE_MAX_DELTA_SECONDS = ConfigKey(
        "hoodie.compact.inline.max.delta.seconds", 3600, parse_int,
        doc="TIME_ELAPSED trigger: seconds from the last completed commit or replacecommit (else the first "
            "deltacommit) to the new compaction instant.",
    )
    INLINE_TRIGGER_STRATEGY = ConfigKey(
        "hoodie.compact.inline.trigger.strategy", NUM_COMMITS,
        parse_enum(NUM_COMMITS, TIME_ELAPSED, NUM_AND_TIME, NUM_OR_TIME),
        doc="When an automatic (inline or schedule-inline) compaction is scheduled: NUM_COMMITS, TIME_ELAPSED, "
            "NUM_AND_TIME or NUM_OR_TIME. Explicit calls (run_compaction, HoodieTable.compaction) always plan.",
    )
    STRATEGY = ConfigKey(
        "hoodie.compaction.strategy", LOG_FILE_SIZE_BASED_STRATEGY, parse_enum(LOG_FILE_SIZE_BASED_STRATEGY),
        doc="Which file slices a plan takes; hoodpy implements Hudi's default, LogFileSizeBasedCompactionStrategy: "
            "slices whose log files reach logfile.size.threshold, largest logs first, while target.io lasts.",
    )
    TARGET_IO = ConfigKey(
        "hoodie.compaction.target.io", 512000, parse_int,
        doc="IO budget of one plan in MB (base file + logs read, base file written per slice); the slice that "
            "exhausts it is the last one taken.",
    )
    LOG_FILE_SIZE_THRESHOLD = ConfigKey(
        "hoodie.compaction.logfile.size.threshold", 0, parse_int,
        doc="Only slices whose log files total at least this many bytes are compacted.",
    )

    @staticmethod
    def validate(config: HoodieConfig) -> None:
        """Raise InvalidConfigError for values Hudi refuses."""
        config.get(CompactionConfig.STRATEGY)
        config.get(CompactionConfig.INLINE_TRIGGER_STRATEGY)
        for key in (CompactionConfig.INLINE_MAX_DELTA_COMMITS, CompactionConfig.INLINE_MAX_DELTA_SECONDS,
                    CompactionConfig.TARGET_IO):
            if config.get(key) <= 0:
                raise InvalidConfigError(key.key, config.raw(key), "must be positive")
        if config.get(CompactionConfig.LOG_FILE_SIZE_THRESHOLD) < 0:
            raise InvalidConfigError(CompactionConfig.LOG_FILE_SIZE_THRESHOLD.key,
                                     config.raw(CompactionConfig.LOG_FILE_SIZE_THRESHOLD), "must not be negative")

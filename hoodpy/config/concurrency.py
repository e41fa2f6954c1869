"""Concurrency-scope keys: write concurrency mode, locks, heartbeats and failed-write cleanup
(Hudi's HoodieLockConfig, HoodieWriteConfig and the failed-writes cleaner policy)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, HoodieConfig, parse_enum, parse_int

SINGLE_WRITER = "SINGLE_WRITER"
OPTIMISTIC_CONCURRENCY_CONTROL = "OPTIMISTIC_CONCURRENCY_CONTROL"
EAGER = "EAGER"
LAZY = "LAZY"
NEVER = "NEVER"
FILE_SYSTEM_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"


class ConcurrencyConfig:
    WRITE_CONCURRENCY_MODE = ConfigKey(
        "hoodie.write.concurrency.mode", SINGLE_WRITER,
        parse_enum(SINGLE_WRITER, OPTIMISTIC_CONCURRENCY_CONTROL),
        doc="SINGLE_WRITER, or OPTIMISTIC_CONCURRENCY_CONTROL: writers take a lock at commit and fail on "
        "overlapping file groups.",
    )
    FAILED_WRITES_POLICY = ConfigKey(
        "hoodie.cleaner.policy.failed.writes", None, parse_enum(EAGER, LAZY, NEVER),
        doc="EAGER: the next writer rolls failed writes back first; LAZY: rolled back once their "
        "heartbeat expired; default EAGER, LAZY under optimistic concurrency.",
    )
    LOCK_PROVIDER = ConfigKey(
        "hoodie.write.lock.provider", FILE_SYSTEM_LOCK,
        parse_enum(FILE_SYSTEM_LOCK, IN_PROCESS_LOCK),
        doc="Lock provider class: the file-system lock (.hoodie/lock) or an in-process lock.",
    )
    LOCK_WAIT_TIME_MS = ConfigKey(
        "hoodie.write.lock.wait_time_ms", 60000, parse_int, doc="How long to wait for the lock in total."
    )
    LOCK_RETRY_WAIT_MS = ConfigKey(
        "hoodie.write.lock.wait_time_ms_between_retry", 1000, parse_int, doc="First wait between attempts."
    )
    LOCK_MAX_RETRY_WAIT_MS = ConfigKey(
        "hoodie.write.lock.max_wait_time_ms_between_retry", 16000, parse_int,
        doc="Cap of the doubling wait between attempts.",
    )
    FILESYSTEM_LOCK_EXPIRE_MINUTES = ConfigKey(
        "hoodie.write.lock.filesystem.expire", 0, parse_int,
        doc="Minutes after which a file-system lock is considered abandoned and may be taken over "
        "(0: never).",
    )
    HEARTBEAT_INTERVAL_MS = ConfigKey(
        "hoodie.client.heartbeat.interval_in_ms", 60000, parse_int, doc="Heartbeat refresh interval."
    )
    HEARTBEAT_TOLERABLE_MISSES = ConfigKey(
        "hoodie.client.heartbeat.tolerable.misses", 2, parse_int,
        doc="Missed heartbeats after which a writer counts as dead.",
    )
    NUM_RETRIES_ON_CONFLICT = ConfigKey(
        "hoodie.write.num.retries.on.conflict.failures", 0, parse_int,
        doc="Times a write that failed on a conflict is retried from the start.",
    )

    @staticmethod
    def is_optimistic(config: HoodieConfig) -> bool:
        return config.get(ConcurrencyConfig.WRITE_CONCURRENCY_MODE) == OPTIMISTIC_CONCURRENCY_CONTROL

    @staticmethod
    def failed_writes_policy(config: HoodieConfig) -> str:
        policy = config.get(ConcurrencyConfig.FAILED_WRITES_POLICY)
        if policy is not None:
            return policy
        return LAZY if ConcurrencyConfig.is_optimistic(config) else EAGER

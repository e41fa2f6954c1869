"""Lock providers for optimistic concurrency: a lock file under .hoodie/ and an in-process lock.

The file lock is created with put-if-absent semantics and records its owner and lease expiry, so a
crashed holder's lock can be taken over safely after it expired, and release checks it still owns it.
On S3 the take-over and the release are compare-and-swap requests on the lock object's ETag, so two
writers can never both believe they hold it (Hudi's own file-system lock is not safe there). Stores
without put-if-absent (or whose probe showed they ignore the conditional headers) are refused.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Protocol

from hoodpy.config import HoodieConfig
from hoodpy.config.concurrency import IN_PROCESS_LOCK, ConcurrencyConfig
from hoodpy.errors import LockAcquisitionError, LockLostError, UnsafeStorageConfigError
from hoodpy.storage import Storage

LOCK_FILE = ".hoodie/lock"


class LockProvider(Protocol):
    def acquire(self) -> None: ...

    def release(self) -> None: ...


@dataclass(frozen=True)
class LockTiming:
    wait_ms: int = 60000
    retry_ms: int = 1000
    max_retry_ms: int = 16000

    @classmethod
    def from_config(cls, config: HoodieConfig) -> LockTiming:
        return cls(config.get(ConcurrencyConfig.LOCK_WAIT_TIME_MS), config.get(ConcurrencyConfig.LOCK_RETRY_WAIT_MS),
                   config.get(ConcurrencyConfig.LOCK_MAX_RETRY_WAIT_MS))


def _owner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


class FileSystemLock:
    """``.hoodie/lock`` holding {"owner", "acquired_ms", "expires_ms"} (expires_ms 0: no expiry)."""

    def __init__(self, storage: Storage, timing: LockTiming, expire_minutes: int = 0):
        self.storage = storage
        self.timing = timing
        self.expire_ms = expire_minutes * 60000
        self.owner = _owner_id()
        self.path = storage.full_path(LOCK_FILE)
        self._version: str | None = None  # the ETag of our lock object (S3)

    def _read(self) -> dict | None:
        try:
            return json.loads(self.storage.read_bytes(LOCK_FILE))
        except Exception:  # noqa: BLE001 - absent, or caught mid-write: treat as unreadable
            return None

    def _try_once(self) -> bool:
        now = int(time.time() * 1000)
        body = {"owner": self.owner, "acquired_ms": now,
                "expires_ms": now + self.expire_ms if self.expire_ms else 0}
        if self.storage.supports_conditional_replace:
            return self._try_once_conditional(body, now)
        if self.storage.create_exclusive(LOCK_FILE, json.dumps(body).encode()):
            return True
        held = self._read()
        if held and held.get("expires_ms") and held["expires_ms"] < now:
            # The holder's lease ran out: remove its lock only if it is still that same lock, then race
            # for a fresh one with put-if-absent like everyone else.
            again = self._read()
            if again == held:
                self.storage.delete(LOCK_FILE)
            return self.storage.create_exclusive(LOCK_FILE, json.dumps(body).encode())
        return False

    def _try_once_conditional(self, body: dict, now: int) -> bool:
        data = json.dumps(body).encode()
        if not self.storage.create_exclusive(LOCK_FILE, data):
            current = self.storage.read_versioned(LOCK_FILE)
            if current is None:
                return False  # released meanwhile: the next attempt races for it
            try:
                held = json.loads(current[0])
            except ValueError:
                held = None
            # An expired lease is replaced only if the object is still the one we judged expired.
            if not (held and held.get("expires_ms") and held["expires_ms"] < now):
                return False
            if not self.storage.replace_if_match(LOCK_FILE, data, current[1]):
                return False
        mine = self.storage.read_versioned(LOCK_FILE)
        if mine is None or json.loads(mine[0]).get("owner") != self.owner:
            return False
        self._version = mine[1]
        return True

    def acquire(self) -> None:
        start = time.monotonic()
        pause = self.timing.retry_ms
        while True:
            if self._try_once():
                return
            waited = int((time.monotonic() - start) * 1000)
            if waited >= self.timing.wait_ms:
                holder = (self._read() or {}).get("owner")
                raise LockAcquisitionError(self.path, waited, holder)
            time.sleep(min(pause, max(1, self.timing.wait_ms - waited)) / 1000)
            pause = min(pause * 2, self.timing.max_retry_ms)

    def release(self) -> None:
        held = self._read()
        if not held or held.get("owner") != self.owner:
            raise LockLostError(self.path, f"now held by {held.get('owner') if held else 'nobody'}")
        if self.storage.supports_conditional_replace:
            # Delete only our own version: a take-over after our check must not lose its lock.
            if self._version is None or not self.storage.delete_if_match(LOCK_FILE, self._version):
                raise LockLostError(self.path, "the lock object changed before release")
            self._version = None
            return
        self.storage.delete(LOCK_FILE)

    def check_held(self) -> None:
        """Raise if the lock was taken over (e.g. our lease expired during a long commit)."""
        held = self._read()
        if not held or held.get("owner") != self.owner:
            raise LockLostError(self.path, f"now held by {held.get('owner') if held else 'nobody'}")


_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


class InProcessLock:
    """A lock shared by writers in this Python process (one per table base path)."""

    def __init__(self, storage: Storage, timing: LockTiming):
        with _process_locks_guard:
            self._lock = _process_locks.setdefault(storage.base_uri, threading.Lock())
        self.timing = timing
        self.name = f"in-process lock of {storage.base_uri}"

    def acquire(self) -> None:
        if not self._lock.acquire(timeout=self.timing.wait_ms / 1000):
            raise LockAcquisitionError(self.name, self.timing.wait_ms)

    def release(self) -> None:
        try:
            self._lock.release()
        except RuntimeError as e:
            raise LockLostError(self.name, "released while not held") from e

    def check_held(self) -> None:
        if not self._lock.locked():
            raise LockLostError(self.name, "not held")


def lock_provider(storage: Storage, config: HoodieConfig) -> FileSystemLock | InProcessLock:
    timing = LockTiming.from_config(config)
    provider = config.get(ConcurrencyConfig.LOCK_PROVIDER)
    if provider == IN_PROCESS_LOCK:
        return InProcessLock(storage, timing)
    alternatives = (f"use {ConcurrencyConfig.WRITE_CONCURRENCY_MODE.key}=SINGLE_WRITER, or {IN_PROCESS_LOCK} "
                    "when all writers share one process")
    # On S3 this runs the store's conditional-request probe, before the write has written anything.
    if not storage.supports_exclusive_create:
        raise UnsafeStorageConfigError(
            ConcurrencyConfig.LOCK_PROVIDER.key, provider, storage.base_uri,
            f"{storage.exclusive_create_problem}, so two writers could both take the file-system lock "
            f"(on S3 install boto3, on a store that honours If-None-Match); {alternatives}")
    expire_minutes = config.get(ConcurrencyConfig.FILESYSTEM_LOCK_EXPIRE_MINUTES)
    found = storage.conditional_requests()
    if expire_minutes and found is not None and not found.replace:
        # Taking over an expired lease needs a compare-and-swap; without it two writers could both win.
        raise UnsafeStorageConfigError(
            ConcurrencyConfig.FILESYSTEM_LOCK_EXPIRE_MINUTES.key, expire_minutes, storage.base_uri,
            f"{found.where}: {found.problem}; set it to 0 (a lock never expires) or {alternatives}")
    return FileSystemLock(storage, timing, expire_minutes)

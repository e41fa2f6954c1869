"""Writer heartbeats: ``.hoodie/.heartbeat/<instant>`` refreshed while a write runs.

Under LAZY failed-write cleanup (multi-writer), a pending instant whose heartbeat stopped longer than
``interval * tolerable misses`` ago belongs to a dead writer and may be rolled back.
"""

from __future__ import annotations

import threading
import time

from hoodpy.storage import Storage

HEARTBEAT_FOLDER = ".hoodie/.heartbeat"


def heartbeat_path(instant_time: str) -> str:
    return f"{HEARTBEAT_FOLDER}/{instant_time}"


class Heartbeat:
    """Keeps one instant's heartbeat fresh from a daemon thread until stopped."""

    def __init__(self, storage: Storage, instant_time: str, interval_ms: int):
        self.storage = storage
        self.instant_time = instant_time
        self.interval_s = max(0.01, interval_ms / 1000)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        self.storage.touch(heartbeat_path(self.instant_time))
        self._thread = threading.Thread(target=self._beat, name=f"hoodpy-heartbeat-{self.instant_time}",
                                        daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.storage.touch(heartbeat_path(self.instant_time))
            except OSError:
                pass  # a missed beat; enough of them and others will treat the write as failed

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.storage.delete(heartbeat_path(self.instant_time))

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def is_expired(storage: Storage, instant_time: str, interval_ms: int, tolerable_misses: int,
               now_ns: int | None = None) -> bool:
    """True when the instant has no heartbeat, or its last beat is older than the tolerance."""
    mtime = storage.modification_time_ns(heartbeat_path(instant_time))
    if mtime is None:
        return True
    now_ns = now_ns if now_ns is not None else time.time_ns()
    return now_ns - mtime > (tolerable_misses + 1) * interval_ms * 1_000_000

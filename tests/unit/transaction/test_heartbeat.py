import time

from hoodpy.storage import Storage
from hoodpy.transaction.heartbeat import Heartbeat, heartbeat_path, is_expired


def test_heartbeat_keeps_fresh_then_expires_after_stop(tmp_path):
    storage = Storage(str(tmp_path))
    t = "20240101000000001"
    assert is_expired(storage, t, 50, 2)  # no heartbeat at all
    with Heartbeat(storage, t, 20):
        first = storage.modification_time_ns(heartbeat_path(t))
        time.sleep(0.15)
        assert storage.modification_time_ns(heartbeat_path(t)) > first
        assert not is_expired(storage, t, 20, 2)
    assert not storage.exists(heartbeat_path(t))
    assert is_expired(storage, t, 20, 2)


def test_a_dead_writers_heartbeat_expires(tmp_path):
    storage = Storage(str(tmp_path))
    storage.touch(heartbeat_path("20240101000000002"))
    mtime = storage.modification_time_ns(heartbeat_path("20240101000000002"))
    assert not is_expired(storage, "20240101000000002", 1000, 2, now_ns=mtime + 2_000_000_000)
    assert is_expired(storage, "20240101000000002", 1000, 2, now_ns=mtime + 3_100_000_000)

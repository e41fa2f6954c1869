import json
import threading
import time

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import LockAcquisitionError, LockLostError
from hoodpy.storage import Storage
from hoodpy.transaction.lock import LOCK_FILE, FileSystemLock, InProcessLock, LockTiming, lock_provider

FAST = LockTiming(wait_ms=300, retry_ms=10, max_retry_ms=50)


@pytest.fixture
def storage(tmp_path):
    return Storage(str(tmp_path))


def test_file_lock_is_exclusive_and_names_the_holder(storage):
    first = FileSystemLock(storage, FAST)
    first.acquire()
    held = json.loads(storage.read_bytes(LOCK_FILE))
    assert held["owner"] == first.owner and held["expires_ms"] == 0
    second = FileSystemLock(storage, FAST)
    with pytest.raises(LockAcquisitionError, match=first.owner.split(":")[0]) as err:
        second.acquire()
    assert err.value.waited_ms >= 300
    first.release()
    second.acquire()
    second.release()
    assert not storage.exists(LOCK_FILE)


def test_expired_lock_is_taken_over_and_the_old_owner_learns_it_lost_it(storage):
    stale = FileSystemLock(storage, FAST, expire_minutes=1)
    stale.acquire()
    body = json.loads(storage.read_bytes(LOCK_FILE))
    body["expires_ms"] = int(time.time() * 1000) - 1
    storage.write_bytes(LOCK_FILE, json.dumps(body).encode())
    fresh = FileSystemLock(storage, FAST, expire_minutes=1)
    fresh.acquire()
    with pytest.raises(LockLostError, match="now held by"):
        stale.release()
    with pytest.raises(LockLostError):
        stale.check_held()
    fresh.check_held()
    fresh.release()


def test_unexpired_lock_is_not_taken_over(storage):
    FileSystemLock(storage, FAST, expire_minutes=10).acquire()
    with pytest.raises(LockAcquisitionError):
        FileSystemLock(storage, FAST, expire_minutes=10).acquire()


def test_file_lock_serializes_threads(storage):
    counter = {"inside": 0, "max": 0}
    timing = LockTiming(wait_ms=10000, retry_ms=1, max_retry_ms=5)

    def work():
        lock = FileSystemLock(storage, timing)
        for _ in range(5):
            lock.acquire()
            counter["inside"] += 1
            counter["max"] = max(counter["max"], counter["inside"])
            time.sleep(0.002)
            counter["inside"] -= 1
            lock.release()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter["max"] == 1


def test_in_process_lock_and_provider_choice(storage):
    a, b = InProcessLock(storage, FAST), InProcessLock(storage, FAST)
    a.acquire()
    with pytest.raises(LockAcquisitionError):
        b.acquire()
    a.release()
    with pytest.raises(LockLostError):
        a.release()
    config = HoodieConfig.of({"hoodie.write.lock.provider":
                              "org.apache.hudi.client.transaction.lock.InProcessLockProvider"})
    assert isinstance(lock_provider(storage, config), InProcessLock)
    assert isinstance(lock_provider(storage, HoodieConfig()), FileSystemLock)

"""Storage on S3 (moto's server on 127.0.0.1): put-if-absent for completed instants and the lock file,
compare-and-swap lock take-over and release, options travelling with the base URI, and refusal of
configurations that cannot be made safe. No Spark."""

from __future__ import annotations

import json
import pickle
import threading

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import (
    IllegalInstantTransitionError,
    LockAcquisitionError,
    LockLostError,
    UnsafeStorageConfigError,
    UnsupportedStorageError,
)
from hoodpy.storage import Storage, StorageUri, resolve_storage_options
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.lock import LOCK_FILE, FileSystemLock, LockTiming, lock_provider

OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"}
FAST = LockTiming(wait_ms=300, retry_ms=20, max_retry_ms=50)


@pytest.fixture
def storage(bucket, s3_options) -> Storage:
    return Storage(f"s3://{bucket}/tbl", resolve_storage_options(f"s3://{bucket}/tbl", s3_options))


def test_put_if_absent_creates_once(storage):
    assert storage.supports_exclusive_create
    assert storage.create_exclusive("x/first", b"one")
    assert not storage.create_exclusive("x/first", b"two")
    assert storage.read_bytes("x/first") == b"one"


def test_concurrent_put_if_absent_has_one_winner(storage):
    wins = []
    barrier = threading.Barrier(8)

    def race(i):
        barrier.wait()
        wins.append(i) if storage.create_exclusive("race", str(i).encode()) else None

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert storage.read_bytes("race") == str(wins[0]).encode()


def test_completed_instant_is_published_once(storage):
    requested = transitions.create_requested(storage, "20260101000000000", Action.COMMIT)
    inflight = transitions.transition_to_inflight(storage, requested)
    transitions.complete(storage, inflight, b'{"first": true}')
    with pytest.raises(IllegalInstantTransitionError, match="already completed"):
        transitions.complete(storage, inflight, b'{"second": true}')
    assert storage.read_bytes(".hoodie/20260101000000000.commit") == b'{"first": true}'
    assert [i.timestamp for i in Timeline.load(storage).completed_commits()] == ["20260101000000000"]
    # Single PUTs, no temporary objects left next to the instants.
    assert not [f.path for f in storage.list_files(".hoodie") if f.path.endswith(".tmp")]


def test_lock_excludes_a_second_holder_and_releases_by_version(storage):
    a, b = FileSystemLock(storage, FAST), FileSystemLock(storage, FAST)
    a.acquire()
    with pytest.raises(LockAcquisitionError) as e:
        b.acquire()
    assert e.value.holder == a.owner
    a.release()
    b.acquire()
    assert json.loads(storage.read_bytes(LOCK_FILE))["owner"] == b.owner
    b.release()
    assert not storage.exists(LOCK_FILE)


def test_expired_lease_is_taken_over_once_and_the_old_holder_cannot_release(storage):
    old = FileSystemLock(storage, FAST, expire_minutes=1)
    old.acquire()
    body = json.loads(storage.read_bytes(LOCK_FILE))
    body["expires_ms"] = 1  # the holder's lease ran out long ago
    storage.write_bytes(LOCK_FILE, json.dumps(body).encode())
    contenders = [FileSystemLock(storage, LockTiming(wait_ms=0, retry_ms=1, max_retry_ms=1)) for _ in range(6)]
    won, barrier = [], threading.Barrier(len(contenders))

    def grab(lock):
        barrier.wait()
        try:
            lock.acquire()
            won.append(lock)
        except LockAcquisitionError:
            pass

    threads = [threading.Thread(target=grab, args=(c,)) for c in contenders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    with pytest.raises(LockLostError):
        old.release()
    assert json.loads(storage.read_bytes(LOCK_FILE))["owner"] == won[0].owner
    won[0].release()


def test_base_uri_carries_options_into_pickled_tasks(storage, s3_endpoint):
    uri = pickle.loads(pickle.dumps(storage.base_uri))
    assert isinstance(uri, StorageUri) and uri == storage.base_uri
    assert dict(uri.options)["spark.hadoop.fs.s3a.endpoint"] == s3_endpoint
    storage.write_bytes("p/f", b"data")
    assert Storage(uri).read_bytes("p/f") == b"data"  # what an executor does with ctx.base_uri
    assert pickle.loads(pickle.dumps(storage)).read_bytes("p/f") == b"data"


def test_environment_fills_unset_options(monkeypatch, s3_env, s3_endpoint, bucket):
    for k, v in s3_env.items():
        monkeypatch.setenv(k, v)
    storage = Storage(f"s3a://{bucket}/env")  # s3a is an alias of s3
    storage.write_bytes("a", b"1")
    assert storage.exists("a") and storage.uri("a") == f"s3a://{bucket}/env/a"
    options = resolve_storage_options(f"s3://{bucket}/env", {"spark.hadoop.fs.s3a.endpoint": "http://other:1"})
    assert options["spark.hadoop.fs.s3a.endpoint"] == "http://other:1"  # an option beats the environment
    assert options["hoodie.aws.access.key"] == s3_env["AWS_ACCESS_KEY_ID"]
    assert resolve_storage_options("/local/table") == {}


def test_file_system_lock_is_refused_where_there_is_no_put_if_absent(tmp_path):
    gcs = Storage("gs://some-bucket/table")
    assert not gcs.supports_exclusive_create
    with pytest.raises(UnsafeStorageConfigError) as e:
        lock_provider(gcs, HoodieConfig.of(OCC))
    assert e.value.key == "hoodie.write.lock.provider"
    assert "hoodie.write.concurrency.mode" in str(e.value)
    in_process = HoodieConfig.of(OCC, {
        "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"})
    lock_provider(gcs, in_process)  # one process: allowed


def test_unknown_scheme_is_refused():
    with pytest.raises(UnsupportedStorageError, match="ftp"):
        Storage("ftp://host/table")

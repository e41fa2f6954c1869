"""The conditional-request probe on S3 (moto's server on 127.0.0.1): a store that honours If-None-Match and
If-Match passes; a store that silently ignores them (simulated by stripping the headers from boto3's
requests before they are sent, as a gateway that drops them would) is treated as having no put-if-absent,
so the file-system lock is refused before anything is written, while a single writer keeps working.
No Spark."""

from __future__ import annotations

import pytest

import hoodpy.storage.conditional as conditional_module
from hoodpy.config import HoodieConfig
from hoodpy.errors import UnsafeStorageConfigError
from hoodpy.storage import PROBE_PREFIX, S3Settings, Storage, resolve_storage_options
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action
from hoodpy.timeline.timeline import Timeline
from hoodpy.transaction.lock import FileSystemLock, lock_provider

OCC = {"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"}


@pytest.fixture(autouse=True)
def fresh_probe_cache(monkeypatch):
    """Each test probes its own store (the cache is per process)."""
    monkeypatch.setattr(conditional_module, "_probed", {})


@pytest.fixture
def requests_sent(monkeypatch) -> list[tuple[str, str]]:
    """(operation, conditional header) of every conditional request boto3 sends."""
    sent: list[tuple[str, str]] = []
    original = S3Settings.boto3_client

    def recording(self):
        client = original(self)

        def record(request, operation_name, **_):
            for header in ("If-None-Match", "If-Match"):
                if header in request.headers:
                    sent.append((operation_name, header))

        client.meta.events.register("before-sign.s3", record)
        return client

    monkeypatch.setattr(S3Settings, "boto3_client", recording)
    return sent


def ignoring(monkeypatch, *headers: str) -> None:
    """Make every boto3 client drop ``headers`` from its requests: the store never sees the condition."""
    original = S3Settings.boto3_client

    def stripping(self):
        client = original(self)

        def strip(request, **_):
            for header in headers:
                if header in request.headers:
                    del request.headers[header]

        client.meta.events.register("before-sign.s3", strip)
        return client

    monkeypatch.setattr(S3Settings, "boto3_client", stripping)


def open_table_storage(bucket: str, s3_options: dict, name: str = "tbl") -> Storage:
    uri = f"s3://{bucket}/{name}"
    return Storage(uri, resolve_storage_options(uri, s3_options))


def all_objects(storage: Storage) -> dict[str, bytes]:
    return {f.path: storage.read_bytes(f.path) for f in storage.list_files("", recursive=True)}


def test_an_honouring_store_passes_once_per_store_and_leaves_nothing(bucket, s3_options, s3_endpoint,
                                                                     requests_sent):
    storage = open_table_storage(bucket, s3_options)
    assert storage.supports_exclusive_create and storage.supports_conditional_replace
    found = storage.conditional_requests()
    assert (found.create, found.replace, found.problem) == (True, True, "")
    assert found.where == f"S3 endpoint {s3_endpoint} (bucket {bucket!r})"
    assert requests_sent == [("PutObject", "If-None-Match"), ("PutObject", "If-None-Match"),
                             ("PutObject", "If-Match"), ("DeleteObject", "If-Match")]
    assert all_objects(storage) == {}  # the probe object is gone
    # Another table in the same bucket, another Storage: no second probe in this process.
    other = open_table_storage(bucket, s3_options, "other")
    assert other.supports_exclusive_create
    lock_provider(other, HoodieConfig.of(OCC)).acquire()
    assert ("PutObject", "If-None-Match") in requests_sent[4:]  # the lock's own put-if-absent
    assert len(requests_sent) == 5


def test_a_store_ignoring_if_none_match_refuses_the_lock_and_leaves_the_table_untouched(
        bucket, s3_options, s3_endpoint, monkeypatch):
    storage = open_table_storage(bucket, s3_options)
    requested = transitions.create_requested(storage, "20260101000000000", Action.COMMIT)
    transitions.complete(storage, transitions.transition_to_inflight(storage, requested), b'{"n": 1}')
    before = all_objects(storage)
    # Another process, reaching the same objects through a gateway that drops the headers.
    monkeypatch.setattr(conditional_module, "_probed", {})
    ignoring(monkeypatch, "If-None-Match", "If-Match")
    storage = open_table_storage(bucket, s3_options)
    with pytest.raises(UnsafeStorageConfigError) as e:
        lock_provider(storage, HoodieConfig.of(OCC))
    message = str(e.value)
    assert e.value.key == "hoodie.write.lock.provider"
    assert s3_endpoint in message and bucket in message
    assert "ignores If-None-Match" in message and "SINGLE_WRITER" in message
    assert all_objects(storage) == before  # the probe object went too


def test_a_single_writer_on_such_a_store_still_commits_exactly_once(bucket, s3_options, monkeypatch):
    ignoring(monkeypatch, "If-None-Match", "If-Match")
    storage = open_table_storage(bucket, s3_options)
    assert not storage.supports_exclusive_create
    assert "ignores If-None-Match" in storage.exclusive_create_problem
    requested = transitions.create_requested(storage, "20260101000000000", Action.COMMIT)
    inflight = transitions.transition_to_inflight(storage, requested)
    transitions.complete(storage, inflight, b'{"first": true}')  # check-then-write, as on gs:// or hdfs://
    with pytest.raises(Exception, match="already completed"):
        transitions.complete(storage, inflight, b'{"second": true}')
    assert storage.read_bytes(".hoodie/20260101000000000.commit") == b'{"first": true}'
    assert [i.timestamp for i in Timeline.load(storage).completed_commits()] == ["20260101000000000"]
    assert not [p for p in all_objects(storage) if PROBE_PREFIX.rsplit("/", 1)[1] in p]


def test_a_store_ignoring_only_if_match_keeps_the_lock_but_not_lease_take_over(bucket, s3_options,
                                                                               s3_endpoint, monkeypatch):
    ignoring(monkeypatch, "If-Match")
    storage = open_table_storage(bucket, s3_options)
    assert storage.supports_exclusive_create and not storage.supports_conditional_replace
    lock = lock_provider(storage, HoodieConfig.of(OCC))  # a lock that never expires needs no If-Match
    assert isinstance(lock, FileSystemLock)
    lock.acquire()
    lock.release()
    with pytest.raises(UnsafeStorageConfigError) as e:
        lock_provider(storage, HoodieConfig.of(OCC, {"hoodie.write.lock.filesystem.expire": "5"}))
    assert e.value.key == "hoodie.write.lock.filesystem.expire"
    assert "ignores If-Match" in str(e.value) and s3_endpoint in str(e.value)
    assert all_objects(storage) == {}


def test_a_store_not_implementing_conditional_puts_is_named(bucket, s3_options, monkeypatch):
    original = S3Settings.boto3_client

    def not_implemented(self):
        client = original(self)

        def refuse(params, **_):
            if "IfNoneMatch" in params:
                from botocore.exceptions import ClientError

                raise ClientError({"Error": {"Code": "NotImplemented", "Message": "A header you provided "
                                             "implies functionality that is not implemented"},
                                   "ResponseMetadata": {"HTTPStatusCode": 501}}, "PutObject")

        client.meta.events.register("provide-client-params.s3.PutObject", refuse)
        return client

    monkeypatch.setattr(S3Settings, "boto3_client", not_implemented)
    storage = open_table_storage(bucket, s3_options)
    with pytest.raises(UnsafeStorageConfigError, match="was not implemented"):
        lock_provider(storage, HoodieConfig.of(OCC))
    assert all_objects(storage) == {}


@pytest.mark.spark
def test_an_optimistic_write_through_such_a_store_fails_before_writing_anything(spark, bucket, s3_options,
                                                                                 s3_endpoint, monkeypatch):
    from hoodpy import HoodieTable

    ignoring(monkeypatch, "If-None-Match", "If-Match")
    path = f"s3://{bucket}/rides"
    t = HoodieTable.create(spark, path, table_name="rides", record_key_fields=["id"], precombine_field="ts",
                           options=s3_options)
    before = all_objects(t.storage)
    with pytest.raises(UnsafeStorageConfigError) as e:
        t.upsert(spark.createDataFrame([(1, 1)], "id int, ts int"), options=OCC)
    assert s3_endpoint in str(e.value) and "ignores If-None-Match" in str(e.value)
    assert all_objects(t.storage) == before  # no instant, heartbeat, lock, base file or probe object

"""Which storage options apply to a table path, and how they map onto S3 settings (no network)."""

from __future__ import annotations

import pytest

from hoodpy.storage import S3Settings, Storage, StorageUri, resolve_storage_options


def test_options_beat_spark_conf_beat_environment(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://env:1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    conf = {"spark.hadoop.fs.s3a.endpoint": "http://conf:2", "spark.hadoop.fs.s3a.access.key": "conf-key"}
    got = resolve_storage_options("s3://b/t", {"fs.s3a.endpoint": "http://opt:3"}, conf)
    assert got["spark.hadoop.fs.s3a.endpoint"] == "http://opt:3"
    assert got["hoodie.aws.access.key"] == "conf-key"  # Hadoop's name is an alias of Hudi's
    assert resolve_storage_options("s3a://b/t")["spark.hadoop.fs.s3a.endpoint"] == "http://env:1"
    assert resolve_storage_options("/tmp/local", {"fs.s3a.endpoint": "x"}) == {}


def test_s3_settings_from_keys():
    s = S3Settings.of({"spark.hadoop.fs.s3a.endpoint": "minio:9000",
                       "spark.hadoop.fs.s3a.connection.ssl.enabled": "false"})
    assert s.endpoint_url == "http://minio:9000" and s.path_style and s.region == "us-east-1"
    aws = S3Settings.of({"spark.hadoop.fs.s3a.endpoint.region": "eu-west-1"})
    assert aws.endpoint_url is None and not aws.path_style and aws.region == "eu-west-1"
    forced = S3Settings.of({"fs.s3a.endpoint": "https://s3.example", "fs.s3a.path.style.access": "false"})
    assert forced.endpoint_url == "https://s3.example" and not forced.path_style


@pytest.mark.parametrize("path", ["/tmp/x/t", "file:///tmp/x/t"])
def test_local_paths(path):
    s = Storage(path)
    assert s.is_local and s.supports_exclusive_create and s.uri("p/f") == "file:///tmp/x/t/p/f"
    assert isinstance(s.base_uri, StorageUri) and s.base_uri.options == ()


def test_local_create_exclusive_is_whole_and_once(tmp_path):
    s = Storage(str(tmp_path))
    assert s.create_exclusive(".hoodie/lock", b"mine") and not s.create_exclusive(".hoodie/lock", b"theirs")
    assert s.read_bytes(".hoodie/lock") == b"mine"
    assert s.publish(".hoodie/1.commit", b"{}") and not s.publish(".hoodie/1.commit", b"{2}")
    assert sorted(f.path for f in s.list_files(".hoodie")) == [".hoodie/1.commit", ".hoodie/lock"]


def test_reopening_by_a_storage_uri_keeps_its_options():
    from hoodpy.storage import open_storage

    first = Storage("s3://b/t", {"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:1", "hoodie.aws.access.key": "k"})
    again = open_storage(None, first.base_uri, {"hoodie.aws.access.key": "k2"})
    assert dict(again.base_uri.options)["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:1"
    assert dict(again.base_uri.options)["hoodie.aws.access.key"] == "k2"

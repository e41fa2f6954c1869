"""File system access for a table, through pyarrow.fs, chosen from the table path's scheme.

Paths handed around inside hoodpy are *relative to the table base path* (as Hudi's write stats are);
:class:`Storage` turns them into file-system paths. Executors rebuild a Storage from the base URI, which
carries its resolved storage options (:class:`StorageUri`), so nothing depends on driver-local state.

Schemes: plain paths and ``file://`` (local), ``s3://`` / ``s3a://`` (S3 and S3-compatible stores),
``gs://``, ``abfs://`` / ``abfss://`` and ``hdfs://`` (whatever pyarrow builds for them).

Commit safety. A completed instant must appear whole and at most once, and the lock file must be created
by exactly one writer. Local files use ``O_EXCL`` and hard links; S3 uses conditional requests
(``If-None-Match: *`` to create, ``If-Match: <etag>`` to take over or release a lock) through boto3, since
pyarrow has no conditional put. Other stores write objects atomically but have no put-if-absent here:
they are safe for a single writer only, and the lock refuses to run on them.

Some S3-compatible stores (older MinIO and Ceph, some gateways) silently ignore the conditional headers,
which would make put-if-absent a plain overwrite without anyone noticing. So before relying on them, a
process probes each (endpoint, bucket) once (:func:`probe_conditional_requests`); a store that fails the
probe counts as having no put-if-absent: a single writer still works, the file-system lock is refused.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from hoodpy.config import HoodieConfig
from hoodpy.config.filesystem import ENV_FALLBACKS, FileSystemConfig
from hoodpy.errors import HoodieIOError, UnsupportedStorageError

_log = logging.getLogger(__name__)

S3_SCHEMES = ("s3", "s3a")
OBJECT_STORE_SCHEMES = (*S3_SCHEMES, "gs", "gcs", "abfs", "abfss")
KNOWN_SCHEMES = ("", "file", "local", *OBJECT_STORE_SCHEMES, "hdfs", "viewfs")


@dataclass(frozen=True)
class FileInfo:
    path: str  # relative to the base path
    size: int
    mtime_ns: int | None


def scheme_of(uri: str) -> str:
    return uri.split("://", 1)[0].lower() if "://" in uri else ""


class StorageUri(str):
    """A base URI that carries the storage options (endpoint, credentials) it was opened with.

    It is a ``str`` everywhere (messages, equality, Spark paths); pickled into a task it keeps its options,
    so ``Storage(ctx.base_uri)`` on an executor reaches the same store as the driver did.
    """

    options: tuple[tuple[str, str], ...]

    def __new__(cls, uri: str, options: Mapping[str, str] | tuple = ()):
        self = super().__new__(cls, uri)
        items = options.items() if isinstance(options, Mapping) else options
        self.options = tuple(sorted((str(k), str(v)) for k, v in items if v is not None))
        return self

    def __reduce__(self):
        return StorageUri, (str(self), self.options)


def resolve_storage_options(uri: str, options: Mapping[str, object] | None = None,
                            spark_conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The file-system keys that apply to ``uri``: options, then Spark conf, then the environment.

    Only object-store tables resolve anything; a local table gets ``{}``.
    """
    if scheme_of(uri) not in S3_SCHEMES:
        return {}
    # Layer by layer, so that any spelling in the options beats any spelling in the Spark conf.
    layers = [HoodieConfig.of(options), HoodieConfig.of(spark_conf)]
    out: dict[str, str] = {}
    for key in FileSystemConfig.keys():
        value = next((v for v in (layer.raw(key) for layer in layers) if v is not None), None)
        if value is None:
            value = next((os.environ[e] for e in ENV_FALLBACKS.get(key.key, ()) if os.environ.get(e)), None)
        if value is not None:
            out[key.key] = str(value)
    return out


def spark_storage_conf(spark, uri: str) -> dict[str, str]:
    """The session's ``spark.hadoop.fs.s3a.*`` values for an S3 table (works over Spark Connect too)."""
    if scheme_of(uri) not in S3_SCHEMES or spark is None:
        return {}
    out = {}
    for key in FileSystemConfig.keys():
        for name in key.names():
            if name.startswith("spark."):
                try:
                    value = spark.conf.get(name, None)
                except Exception:  # noqa: BLE001 - a conf the session refuses to show counts as unset
                    value = None
                if value:
                    out[name] = value
    return out


def open_storage(spark, uri: str, options: Mapping[str, object] | None = None) -> Storage:
    """The Storage of a table path, configured from ``options``, then the session's conf, then the env
    (a :class:`StorageUri`'s own options count as given options, below ``options``)."""
    if isinstance(uri, StorageUri) and uri.options:
        options = {**dict(uri.options), **dict(options or {})}
    return Storage(str(uri), resolve_storage_options(str(uri), options, spark_storage_conf(spark, str(uri))))


@dataclass(frozen=True)
class S3Settings:
    """How to reach one S3-compatible store, from resolved options."""

    access_key: str | None
    secret_key: str | None
    session_token: str | None
    endpoint_url: str | None  # with scheme
    region: str | None
    path_style: bool

    @classmethod
    def of(cls, options: Mapping[str, str]) -> S3Settings:
        config = HoodieConfig.of(options)
        endpoint = config.get(FileSystemConfig.S3_ENDPOINT)
        ssl = config.get(FileSystemConfig.S3_SSL_ENABLED)
        if endpoint and "://" not in endpoint:
            endpoint = ("http://" if ssl is False else "https://") + endpoint
        path_style = config.get(FileSystemConfig.S3_PATH_STYLE_ACCESS)
        region = config.get(FileSystemConfig.S3_REGION) or ("us-east-1" if endpoint else None)
        return cls(config.get(FileSystemConfig.S3_ACCESS_KEY), config.get(FileSystemConfig.S3_SECRET_KEY),
                   config.get(FileSystemConfig.S3_SESSION_TOKEN), endpoint, region,
                   bool(endpoint) if path_style is None else path_style)

    def arrow_file_system(self) -> pafs.S3FileSystem:
        kwargs: dict[str, object] = {"region": self.region, "force_virtual_addressing": not self.path_style}
        if self.access_key and self.secret_key:
            kwargs.update(access_key=self.access_key, secret_key=self.secret_key, session_token=self.session_token)
        if self.endpoint_url:
            parts = urlsplit(self.endpoint_url)
            kwargs.update(endpoint_override=parts.netloc + parts.path.rstrip("/"), scheme=parts.scheme)
        return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})

    def boto3_client(self):
        try:
            import boto3
            from botocore.config import Config
        except ImportError:  # the caller names what needs it
            return None
        return boto3.client(
            "s3", endpoint_url=self.endpoint_url, region_name=self.region, aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key, aws_session_token=self.session_token,
            config=Config(s3={"addressing_style": "path" if self.path_style else "auto"},
                          retries={"max_attempts": 5, "mode": "standard"}))


class _S3Conditional:
    """The few conditional S3 requests pyarrow cannot make (boto3; created lazily, never pickled)."""

    def __init__(self, settings: S3Settings, bucket: str):
        self.settings, self.bucket = settings, bucket
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = self.settings.boto3_client()
            if self._client is None:
                raise ImportError("boto3")
        return self._client

    @staticmethod
    def _precondition_failed(e: Exception) -> bool:
        response = getattr(e, "response", None) or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        # 409 ConditionalRequestConflict: a concurrent conditional write to the same key is in flight.
        return code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412)

    def put_if_absent(self, key: str, data: bytes) -> str | None:
        """The new object's ETag, or None when the key already exists."""
        try:
            return self.client.put_object(Bucket=self.bucket, Key=key, Body=data, IfNoneMatch="*")["ETag"]
        except Exception as e:  # noqa: BLE001 - botocore's ClientError; anything else propagates below
            if self._precondition_failed(e):
                return None
            raise

    def put_if_match(self, key: str, data: bytes, etag: str) -> str | None:
        try:
            return self.client.put_object(Bucket=self.bucket, Key=key, Body=data, IfMatch=etag)["ETag"]
        except Exception as e:  # noqa: BLE001
            if self._precondition_failed(e) or _not_found(e):
                return None
            raise

    def delete_if_match(self, key: str, etag: str) -> bool:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key, IfMatch=etag)
            return True
        except Exception as e:  # noqa: BLE001
            if self._precondition_failed(e) or _not_found(e):
                return False
            raise

    def get(self, key: str) -> tuple[bytes, str] | None:
        try:
            r = self.client.get_object(Bucket=self.bucket, Key=key)
        except Exception as e:  # noqa: BLE001
            if _not_found(e):
                return None
            raise
        return r["Body"].read(), r["ETag"]


@dataclass(frozen=True)
class ConditionalRequests:
    """What one S3-compatible store was seen to honour (measured by a probe, not assumed)."""

    endpoint: str
    bucket: str
    create: bool  # PUT with If-None-Match: * refuses an existing key (put-if-absent)
    replace: bool  # PUT and DELETE with If-Match refuse a stale ETag (lock take-over and release)
    problem: str = ""  # what failed, for error messages

    @property
    def where(self) -> str:
        return f"S3 endpoint {self.endpoint} (bucket {self.bucket!r})"


PROBE_PREFIX = ".hoodie/.aux/.conditional-requests-probe-"
_probed: dict[tuple[str, str], ConditionalRequests] = {}
_probe_guard = threading.Lock()


def probe_conditional_requests(conditional: _S3Conditional, key_prefix: str) -> ConditionalRequests:
    """Whether the store honours conditional requests; probed once per (endpoint, bucket) per process.

    Under a fresh key below ``key_prefix``: a PUT with ``If-None-Match: *`` must succeed, a second one must
    be refused (412), a PUT and a DELETE with a stale ``If-Match`` must be refused too; the probe object is
    deleted afterwards. Errors other than a refusal or "not implemented" (credentials, network) propagate
    and leave nothing cached.
    """
    endpoint = conditional.settings.endpoint_url or "AWS default"
    cache_key = (endpoint, conditional.bucket)
    with _probe_guard:  # one probe per store even when several threads start writing at once
        known = _probed.get(cache_key)
        if known is None:
            known = _probe(conditional, f"{key_prefix}{uuid.uuid4().hex}", endpoint)
            _probed[cache_key] = known
            if known.problem:
                _log.warning("%s: %s", known.where, known.problem)
        return known


def _probe(conditional: _S3Conditional, key: str, endpoint: str) -> ConditionalRequests:
    client, bucket = conditional.client, conditional.bucket
    stale = '"00000000000000000000000000000000"'

    def found(create: bool, replace: bool, problem: str = "") -> ConditionalRequests:
        return ConditionalRequests(endpoint, bucket, create, replace, problem)

    first = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"probe", IfNoneMatch="*"))
    if first != "accepted":
        # Nothing was created, so there is nothing to delete.
        return found(False, False, f"a PUT with If-None-Match: * of a new key was {first}, so hoodpy has "
                                   "no put-if-absent there")
    try:
        second = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"again", IfNoneMatch="*"))
        if second != "refused":
            return found(False, False, f"the store ignores If-None-Match: a second PUT with If-None-Match: * "
                                       f"of the same key was {second} instead of refused (412), so "
                                       "put-if-absent would silently overwrite")
        put = _outcome(lambda: client.put_object(Bucket=bucket, Key=key, Body=b"stale", IfMatch=stale))
        delete = _outcome(lambda: client.delete_object(Bucket=bucket, Key=key, IfMatch=stale))
        if put != "refused" or delete != "refused":
            verb, outcome = ("PUT", put) if put != "refused" else ("DELETE", delete)
            return found(True, False, f"the store ignores If-Match: a {verb} with a stale If-Match was "
                                      f"{outcome} instead of refused (412), so an expired lock cannot be "
                                      "taken over safely")
        return found(True, True)
    finally:
        conditional.client.delete_object(Bucket=bucket, Key=key)


def _outcome(request) -> str:
    """'accepted', 'refused' (412 / 409) or 'not implemented' (501); any other error propagates."""
    try:
        request()
        return "accepted"
    except Exception as e:  # noqa: BLE001 - botocore's ClientError, classified below
        if _S3Conditional._precondition_failed(e):
            return "refused"
        response = getattr(e, "response", None) or {}
        if response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 501 or \
                str(response.get("Error", {}).get("Code", "")) == "NotImplemented":
            return "not implemented"
        raise


def _not_found(e: Exception) -> bool:
    response = getattr(e, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) in ("NoSuchKey", "404", "NotFound") or \
        response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 404


class Storage:
    """The file system under one table base path.

    Args:
        base_uri: the table path (a plain path, ``file://``, ``s3://`` / ``s3a://``, ``gs://``, ``abfs://``,
            ``hdfs://``); a :class:`StorageUri` brings its options along.
        options: storage options (see ``hoodpy/config/filesystem.py``); default: the URI's own.
    """

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None):
        if options is None:
            # A StorageUri brings what the driver resolved; a plain path resolves from the environment.
            options = dict(base_uri.options) if isinstance(base_uri, StorageUri) else \
                resolve_storage_options(str(base_uri))
        text = str(base_uri)
        text = text.rstrip("/") if text != "/" else text
        self.base_uri = StorageUri(text, options)
        self.scheme = scheme_of(text)
        self._conditional: _S3Conditional | None = None
        if self.scheme not in KNOWN_SCHEMES:
            raise UnsupportedStorageError(text, f"unknown scheme {self.scheme!r}; expected a local path, "
                                          "file://, s3://, s3a://, gs://, abfs:// or hdfs://")
        try:
            if self.scheme in ("", "local"):
                self.fs, root = pafs.LocalFileSystem(), os.path.abspath(text.split("://", 1)[-1])
            elif self.scheme in S3_SCHEMES:
                settings = S3Settings.of(dict(self.base_uri.options))
                self.fs, root = settings.arrow_file_system(), text.split("://", 1)[1]
                bucket = root.split("/", 1)[0]
                if not bucket:
                    raise UnsupportedStorageError(text, "an S3 path needs a bucket: s3://<bucket>/<path>")
                self._conditional = _S3Conditional(settings, bucket)
            else:
                self.fs, root = pafs.FileSystem.from_uri(text)
        except UnsupportedStorageError:
            raise
        except (pafs.ArrowInvalid, ValueError, TypeError, OSError, ImportError) as e:
            raise UnsupportedStorageError(text, f"pyarrow cannot open a {self.scheme or 'local'} file system "
                                          f"({e})") from e
        self.root = root.rstrip("/") if root != "/" else root

    def __reduce__(self):
        return Storage, (self.base_uri,)

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    @property
    def is_object_store(self) -> bool:
        return self.scheme in OBJECT_STORE_SCHEMES

    @property
    def supports_exclusive_create(self) -> bool:
        """Whether :meth:`create_exclusive` is a true put-if-absent here: local files, or S3 with boto3 where
        the store passed the conditional-request probe (run on first use; see :meth:`conditional_requests`)."""
        if self.is_local:
            return True
        found = self.conditional_requests()
        return found is not None and found.create

    def conditional_requests(self) -> ConditionalRequests | None:
        """What this S3 store honours (probed once per endpoint and bucket per process); None where hoodpy
        makes no conditional requests (not S3, or boto3 missing)."""
        if self._conditional is None:
            return None
        try:
            self._conditional.client
        except ImportError:
            return None
        return probe_conditional_requests(self._conditional, self._key(PROBE_PREFIX))

    @property
    def exclusive_create_problem(self) -> str:
        """Why this storage has no put-if-absent ('' when it has one), for error messages."""
        if self.supports_exclusive_create:
            return ""
        found = self.conditional_requests()
        if found is not None:
            return f"{found.where}: {found.problem}"
        if self.scheme in S3_SCHEMES:
            return "S3 without boto3 (install the s3 extra) offers hoodpy no put-if-absent"
        return f"{self.scheme or 'this'} storage offers hoodpy no put-if-absent"

    def full_path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def uri(self, rel: str) -> str:
        """A URI Spark can read (file:// for local paths, s3a:// for S3, as Hadoop names it)."""
        full = self.full_path(rel)
        if self.is_local:
            return "file://" + full
        if self.scheme in S3_SCHEMES:
            return "s3a://" + full  # Hadoop's S3 connector answers to s3a only
        return f"{self.base_uri}/{rel}" if rel else str(self.base_uri)

    def _key(self, rel: str) -> str:
        """The object key of ``rel`` within the S3 bucket."""
        return self.full_path(rel).split("/", 1)[1]

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full_path(rel)).type != pafs.FileType.NotFound

    def is_dir(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full_path(rel)).type == pafs.FileType.Directory

    def read_bytes(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_stream(self.full_path(rel)) as f:
                return f.read()
        except FileNotFoundError as e:
            raise HoodieIOError(self.full_path(rel), "File not found") from e

    def write_bytes(self, rel: str, data: bytes) -> None:
        full = self.full_path(rel)
        if not self.is_object_store:  # object stores have no folders to make
            self.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(full) as f:
            f.write(data)

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Write so that readers see the whole file or none of it.

        Object stores publish an object whole on a single PUT; file systems write a temporary name and
        rename it.
        """
        if self.is_object_store:
            self.write_bytes(rel, data)
            return
        full = self.full_path(rel)
        parent, name = full.rsplit("/", 1)
        tmp = f"{parent}/.{name}.{uuid.uuid4().hex}.tmp"
        self.fs.create_dir(parent, recursive=True)
        with self.fs.open_output_stream(tmp) as f:
            f.write(data)
        try:
            self.fs.move(tmp, full)
        except Exception:
            self.fs.delete_file(tmp)
            raise

    def create_exclusive(self, rel: str, data: bytes) -> bool:
        """Create ``rel`` whole, only if it does not exist (put-if-absent); False when it already existed.

        Local files: written under a temporary name, then hard-linked into place (``link`` fails if the
        name exists), so the file appears whole. S3: ``PUT`` with ``If-None-Match: *``. Elsewhere pyarrow
        has no exclusive create, so this refuses rather than pretend.
        """
        full = self.full_path(rel)
        if self._conditional is not None and self.supports_exclusive_create:
            return self._conditional.put_if_absent(self._key(rel), data) is not None
        if not self.is_local:
            raise HoodieIOError(full, f"Exclusive create is not supported here: {self.exclusive_create_problem} "
                                "(needs a put-if-absent: local files, or S3 with boto3 installed)")
        parent = full.rsplit("/", 1)[0]
        os.makedirs(parent, exist_ok=True)
        tmp = f"{parent}/.{full.rsplit('/', 1)[1]}.{uuid.uuid4().hex}.tmp"
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, full)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def publish(self, rel: str, data: bytes) -> bool:
        """Write a file that must appear whole and exactly once (a completed instant).

        Put-if-absent where the store has it; False when the file already existed. Stores without it
        (gs, abfs, hdfs here) check, then write atomically: safe for one writer, which is all they allow
        (the lock refuses to run on them).
        """
        if self.supports_exclusive_create:
            return self.create_exclusive(rel, data)
        if self.exists(rel):
            return False
        self.write_atomic(rel, data)
        return True

    # -- compare-and-swap on one small object (lock take-over and release on S3) -----------------------
    @property
    def supports_conditional_replace(self) -> bool:
        """Whether If-Match requests (:meth:`replace_if_match`, :meth:`delete_if_match`) are honoured here."""
        found = self.conditional_requests()
        return found is not None and found.create and found.replace

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """The content of ``rel`` and a version token (the ETag), or None when absent (S3 only)."""
        return self._require_conditional(rel).get(self._key(rel))

    def replace_if_match(self, rel: str, data: bytes, version: str) -> bool:
        """Overwrite ``rel`` only if it is still at ``version``; False if it changed or vanished."""
        return self._require_conditional(rel).put_if_match(self._key(rel), data, version) is not None

    def delete_if_match(self, rel: str, version: str) -> bool:
        """Delete ``rel`` only if it is still at ``version``."""
        return self._require_conditional(rel).delete_if_match(self._key(rel), version)

    def _require_conditional(self, rel: str) -> _S3Conditional:
        if not self.supports_conditional_replace:
            raise HoodieIOError(self.full_path(rel), "Conditional requests are only available on S3 with boto3, "
                                "on a store that honours If-Match")
        assert self._conditional is not None
        return self._conditional

    def modification_time_ns(self, rel: str) -> int | None:
        info = self.fs.get_file_info(self.full_path(rel))
        return None if info.type == pafs.FileType.NotFound else info.mtime_ns

    def touch(self, rel: str) -> None:
        """Refresh a file's modification time by rewriting it (heartbeats)."""
        self.write_bytes(rel, str(time.time_ns()).encode())

    def mkdirs(self, rel: str) -> None:
        if self.is_object_store:
            return  # folders are key prefixes: they exist once a file below them does
        self.fs.create_dir(self.full_path(rel), recursive=True)

    def delete(self, rel: str) -> bool:
        try:
            self.fs.delete_file(self.full_path(rel))
            return True
        except FileNotFoundError:
            return False

    def delete_dir(self, rel: str) -> None:
        try:
            self.fs.delete_dir(self.full_path(rel))
        except FileNotFoundError:
            pass

    def list_files(self, rel: str = "", *, recursive: bool = False) -> list[FileInfo]:
        """Files (not directories) below ``rel``; an absent folder lists as empty."""
        selector = pafs.FileSelector(self.full_path(rel), allow_not_found=True, recursive=recursive)
        prefix = self.root + "/"
        out = []
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                out.append(FileInfo(info.path[len(prefix):], info.size, info.mtime_ns))
        return out

    def list_dirs(self, rel: str = "") -> list[str]:
        selector = pafs.FileSelector(self.full_path(rel), allow_not_found=True, recursive=False)
        prefix = self.root + "/"
        return [
            i.path[len(prefix):] for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.Directory
        ]

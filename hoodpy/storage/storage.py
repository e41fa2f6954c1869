"""Storage: the file system under one table base path, through pyarrow.fs, chosen from the path's scheme.

Paths handed around inside hoodpy are *relative to the table base path* (as Hudi's write stats are);
:class:`Storage` turns them into file-system paths.

Schemes: plain paths and ``file://`` (local), ``s3://`` / ``s3a://`` (S3 and S3-compatible stores),
``gs://``, ``abfs://`` / ``abfss://`` and ``hdfs://`` (whatever pyarrow builds for them).

Commit safety. A completed instant must appear whole and at most once, and the lock file must be created
by exactly one writer. Local files use ``O_EXCL`` and hard links; S3 uses conditional requests
(``If-None-Match: *`` to create, ``If-Match: <etag>`` to take over or release a lock) through boto3, since
pyarrow has no conditional put (:mod:`hoodpy.storage.conditional`, which also probes that a store honours
them). Other stores write objects atomically but have no put-if-absent here: they are safe for a single
writer only, and the lock refuses to run on them.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow.fs as pafs

from hoodpy.errors import HoodieIOError, UnsupportedStorageError
from hoodpy.storage.conditional import PROBE_PREFIX, ConditionalRequests, S3Conditional, probe_conditional_requests
from hoodpy.storage.s3 import S3Settings
from hoodpy.storage.uri import (
    KNOWN_SCHEMES,
    OBJECT_STORE_SCHEMES,
    S3_SCHEMES,
    StorageUri,
    resolve_storage_options,
    scheme_of,
    spark_storage_conf,
)


@dataclass(frozen=True)
class FileInfo:
    path: str  # relative to the base path
    size: int
    mtime_ns: int | None


def open_storage(spark, uri: str, options: Mapping[str, object] | None = None) -> Storage:
    """The Storage of a table path, configured from ``options``, then the session's conf, then the env
    (a :class:`StorageUri`'s own options count as given options, below ``options``)."""
    if isinstance(uri, StorageUri) and uri.options:
        options = {**dict(uri.options), **dict(options or {})}
    return Storage(str(uri), resolve_storage_options(str(uri), options, spark_storage_conf(spark, str(uri))))


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
        self._conditional: S3Conditional | None = None
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
                self._conditional = S3Conditional(settings, bucket)
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

    def _require_conditional(self, rel: str) -> S3Conditional:
        if not self.supports_conditional_replace:
            raise HoodieIOError(self.full_path(rel), "Conditional requests are only available on S3 with boto3, "
                                "on a store that honours If-Match")
        assert self._conditional is not None
        return self._conditional

    def modification_time_ns(self, rel: str) -> int | None:
        info = self.fs.get_file_info(self.full_path(rel))
        return None if info.type == pafs.FileType.NotFound else info.mtime_ns

    def set_modification_time(self, rel: str, mtime_ns: int) -> bool:
        """Set a file's modification time where the file system allows it (local files; Java's
        HoodieStorage.setModificationTime likewise works on file systems only); False elsewhere."""
        if not self.is_local:
            return False
        os.utime(self.full_path(rel), ns=(mtime_ns, mtime_ns))
        return True

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

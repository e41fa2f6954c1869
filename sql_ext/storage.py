"""File system access for a table, through pyarrow.fs so that any scheme pyarrow knows works.

Paths handed around inside hoodpy are *relative to the table base path* (as Hudi's write stats are);
:class:`Storage` turns them into file-system paths. Executors rebuild a Storage from the base URI, so
nothing here depends on driver-local state.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass

import pyarrow.fs as pafs

from sql_ext.errors import HoodieIOError


@dataclass(frozen=True)
class FileInfo:
    path: str  # relative to the base path
    size: int
    mtime_ns: int | None


class Storage:
    """The file system under one table base path."""

    def __init__(self, base_uri: str):
        self.base_uri = base_uri.rstrip("/") if base_uri not in ("/",) else base_uri
        try:
            self.fs, root = pafs.FileSystem.from_uri(self.base_uri)
        except (pafs.ArrowInvalid, ValueError, TypeError):
            # A plain local path: pyarrow wants it absolute.
            self.fs, root = pafs.LocalFileSystem(), os.path.abspath(self.base_uri)
        self.root = root.rstrip("/")

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def full_path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def uri(self, rel: str) -> str:
        """A URI Spark can read (file:// for local paths)."""
        full = self.full_path(rel)
        if self.is_local:
            return "file://" + full
        scheme = self.base_uri.split("://", 1)[0]
        return f"{scheme}://{full}"

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
        self.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
        with self.fs.open_output_stream(full) as f:
            f.write(data)

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Write to a temporary name and rename, so readers see the whole file or none of it."""
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
        """Create ``rel`` only if it does not exist (put-if-absent); False when it already existed.

        Local files use O_CREAT|O_EXCL. Other file systems have no portable exclusive create in pyarrow,
        so hoodpy refuses rather than pretend (object stores get conditional writes separately).
        """
        full = self.full_path(rel)
        if not self.is_local:
            raise HoodieIOError(full, "Exclusive create is not supported on this file system")
        os.makedirs(full.rsplit("/", 1)[0], exist_ok=True)
        try:
            fd = os.open(full, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def modification_time_ns(self, rel: str) -> int | None:
        info = self.fs.get_file_info(self.full_path(rel))
        return None if info.type == pafs.FileType.NotFound else info.mtime_ns

    def touch(self, rel: str) -> None:
        """Refresh a file's modification time by rewriting it (heartbeats)."""
        self.write_bytes(rel, str(time.time_ns()).encode())

    def mkdirs(self, rel: str) -> None:
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

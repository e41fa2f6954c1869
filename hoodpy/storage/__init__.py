"""File system access for a table: :class:`Storage` over pyarrow.fs, chosen from the table path's scheme.

Modules, one concept each:

- :mod:`~hoodpy.storage.storage`: :class:`Storage`, the file system under one table base path (paths
  relative to it, atomic and put-if-absent writes), and :func:`open_storage`;
- :mod:`~hoodpy.storage.uri`: table URIs, their scheme, and the storage options that apply to them
  (:class:`StorageUri` carries them to executors);
- :mod:`~hoodpy.storage.s3`: how to reach an S3-compatible store (:class:`S3Settings`);
- :mod:`~hoodpy.storage.conditional`: the conditional S3 requests pyarrow cannot make (put-if-absent,
  If-Match) and the probe that checks a store honours them.

Everything callers use is importable from here.
"""

from hoodpy.storage.conditional import PROBE_PREFIX, ConditionalRequests, probe_conditional_requests
from hoodpy.storage.s3 import S3Settings
from hoodpy.storage.storage import FileInfo, Storage, open_storage
from hoodpy.storage.uri import (KNOWN_SCHEMES, OBJECT_STORE_SCHEMES, S3_SCHEMES, StorageUri, resolve_storage_options,
                                scheme_of, spark_storage_conf)

__all__ = [
    "KNOWN_SCHEMES",
    "OBJECT_STORE_SCHEMES",
    "PROBE_PREFIX",
    "S3_SCHEMES",
    "ConditionalRequests",
    "FileInfo",
    "S3Settings",
    "Storage",
    "StorageUri",
    "open_storage",
    "probe_conditional_requests",
    "resolve_storage_options",
    "scheme_of",
    "spark_storage_conf",
]

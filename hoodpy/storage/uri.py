"""Table URIs: their scheme, and the storage options (endpoint, credentials) that apply to them.

Executors rebuild a :class:`~hoodpy.storage.Storage` from the base URI, which carries its resolved storage
options (:class:`StorageUri`), so nothing depends on driver-local state.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hoodpy.config import HoodieConfig
from hoodpy.config.filesystem import ENV_FALLBACKS, FileSystemConfig

S3_SCHEMES = ("s3", "s3a")
OBJECT_STORE_SCHEMES = (*S3_SCHEMES, "gs", "gcs", "abfs", "abfss")
KNOWN_SCHEMES = ("", "file", "local", *OBJECT_STORE_SCHEMES, "hdfs", "viewfs")


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

"""The ``type: hoodpy`` profile: dbt-spark's session credentials with defaults that need no server.

Example ``profiles.yml``::

    my_project:
      target: dev
      outputs:
        dev:
          type: hoodpy
          schema: analytics
          # all optional:
          master: local[*]
          warehouse_dir: .hoodpy/warehouse     # relative paths are relative to the dbt project
          metastore_dir: .hoodpy/metastore_db  # embedded Derby metastore (one process at a time)
          metastore_uri: thrift://hms:9083     # a shared Hive metastore instead of Derby
          spark_conf: {spark.driver.memory: 2g}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

DEFAULT_MASTER = "local[*]"
DEFAULT_WAREHOUSE_DIR = os.path.join(".hoodpy", "warehouse")
DEFAULT_METASTORE_DIR = os.path.join(".hoodpy", "metastore_db")


@dataclass
class HoodpyCredentials(SparkCredentials):
    # dbt-spark requires a host even for the session method; hoodpy runs in-process and needs none.
    host: Optional[str] = "localhost"
    method: SparkConnectionMethod = SparkConnectionMethod.SESSION  # type: ignore[assignment]
    # Spark master of the SparkSession the adapter creates (an already active session is reused as is).
    master: Optional[str] = None
    # spark.sql.warehouse.dir: where databases, parquet tables and hoodpy tables live.
    warehouse_dir: Optional[str] = None
    # Directory of the embedded Derby metastore; ignored when metastore_uri is set.
    metastore_dir: Optional[str] = None
    # hive.metastore.uris of a shared Hive metastore.
    metastore_uri: Optional[str] = None
    # Any further Spark configuration, passed to the session builder.
    spark_conf: Dict[str, Any] = field(default_factory=dict)
    # The directory relative paths resolve against (the dbt project; the adapter fills it in).
    project_root: Optional[str] = None

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"type: hoodpy supports method: session only (got method: {self.method}); hoodpy's SQL layer "
                "runs inside the dbt process")
        super().__post_init__()
        self.spark_conf = {str(k): str(v) for k, v in (self.spark_conf or {}).items()}

    @property
    def type(self) -> str:
        return "hoodpy"

    @property
    def unique_field(self) -> str:
        return self.metastore_uri or self.resolved_warehouse_dir()

    def _resolve(self, path: Optional[str], default: str) -> str:
        root = self.project_root or os.getcwd()
        return os.path.abspath(os.path.join(root, os.path.expanduser(path or default)))

    def resolved_warehouse_dir(self) -> str:
        return self._resolve(self.warehouse_dir, DEFAULT_WAREHOUSE_DIR)

    def resolved_metastore_dir(self) -> str:
        return self._resolve(self.metastore_dir, DEFAULT_METASTORE_DIR)

    def _connection_keys(self) -> Tuple[str, ...]:
        return ("method", "schema", "master", "warehouse_dir", "metastore_dir", "metastore_uri")

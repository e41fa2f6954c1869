"""The one SparkSession behind a ``type: hoodpy`` profile, with hoodpy's SQL layer enabled on it.

An active session in the process (a notebook's, a test suite's, an orchestrator's) is reused: a JVM holds one
SparkContext and the embedded Derby metastore admits one JVM, so a second session could only conflict.
Otherwise one is built from the profile: local master, UI off, few shuffle partitions, UTC, and a warehouse
and Derby metastore inside the dbt project (not wherever dbt happened to be started).
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from hoodpy.spark_worker import spark_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from dbt.adapters.hoodpy.credentials import HoodpyCredentials

# Session SQL confs dbt models rely on, set on new and on reused sessions alike: dbt-spark turns ANSI mode
# off, and LEGACY store assignment lets seeds insert date/number strings into typed columns.
SESSION_SQL_CONF = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.storeAssignmentPolicy": "LEGACY",
}

_lock = threading.Lock()
_session: SparkSession | None = None


def builder_conf(creds: HoodpyCredentials) -> dict[str, str]:
    """Spark configuration of a session built for ``creds`` (the profile's spark_conf wins)."""
    conf = {
        "spark.app.name": "dbt-hoodpy",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.warehouse.dir": creds.resolved_warehouse_dir(),
        "spark.sql.catalogImplementation": "hive",
        **SESSION_SQL_CONF,
    }
    if (creds.master or _default_master()).startswith("local"):
        conf.update(spark_conf())  # workers run this interpreter (see hoodpy/spark_worker.py)
    if creds.metastore_uri:
        conf["spark.hadoop.hive.metastore.uris"] = creds.metastore_uri
    else:
        metastore = creds.resolved_metastore_dir()
        home = os.path.dirname(metastore)
        conf["spark.hadoop.javax.jdo.option.ConnectionURL"] = f"jdbc:derby:;databaseName={metastore};create=true"
        # Derby writes derby.log (and resolves relative names) under derby.system.home: keep it in the project.
        conf["spark.driver.extraJavaOptions"] = (f"-Dderby.system.home={home} "
                                                 f"-Dderby.stream.error.file={os.path.join(home, 'derby.log')}")
    conf.update({k: str(v) for k, v in creds.server_side_parameters.items()})
    conf.update(creds.spark_conf)
    return conf


def hoodpy_session(creds: HoodpyCredentials) -> SparkSession:
    """The active SparkSession (else a new one for ``creds``) with hoodpy's SQL layer enabled."""
    from pyspark.sql import SparkSession

    from sql_ext import enable

    global _session
    with _lock:
        spark = _session if _session is not None and not _is_stopped(_session) else _existing_session()
        if spark is None:
            conf = builder_conf(creds)
            if not creds.metastore_uri:
                os.makedirs(os.path.dirname(creds.resolved_metastore_dir()), exist_ok=True)
            os.makedirs(creds.resolved_warehouse_dir(), exist_ok=True)
            builder = SparkSession.builder.master(creds.master or _default_master())
            for key, value in conf.items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
            spark.sparkContext.setLogLevel("ERROR")
        for key, value in SESSION_SQL_CONF.items():
            spark.conf.set(key, value)
        _session = enable(spark)
        return _session


def _existing_session() -> SparkSession | None:
    """The session already running in this process, if any. The active session is thread-local (dbt runs
    models in threads), so fall back to the process's default session when a SparkContext is up."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None and SparkContext._active_spark_context is not None:
        spark = SparkSession.builder.getOrCreate()  # no options: returns the existing default session
    return spark


def _is_stopped(spark: SparkSession) -> bool:
    from pyspark import SparkContext

    try:
        spark.sparkContext
    except Exception:  # noqa: BLE001 -- Spark Connect sessions have no SparkContext
        return False
    return SparkContext._active_spark_context is None


def _default_master() -> str:
    from dbt.adapters.hoodpy.credentials import DEFAULT_MASTER

    return DEFAULT_MASTER

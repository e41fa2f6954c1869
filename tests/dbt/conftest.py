"""dbt tests: dbt-tests-adapter's project fixtures against a ``type: hoodpy`` profile.

The adapter reuses the process's SparkSession (``SparkSession.builder.getOrCreate()`` semantics), so every dbt
invocation in this pytest process runs on the session-scoped ``spark`` fixture of tests/conftest.py: one JVM,
one metastore.
"""

from __future__ import annotations

import os

import pytest

def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/dbt/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.dbt)
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="class")
def dbt_profile_target(spark):
    # Requesting `spark` first makes the adapter find (and reuse) the shared session.
    return {"type": "hoodpy", "method": "session", "threads": 1}


@pytest.fixture(scope="class")
def logs_dir(tmp_path_factory, prefix):
    # dbt-tests-adapter puts them under <rootdir>/logs; keep the working tree clean.
    path = str(tmp_path_factory.mktemp("dbt-logs") / prefix)
    os.environ["DBT_LOG_PATH"] = path
    yield path
    del os.environ["DBT_LOG_PATH"]


@pytest.fixture(scope="module", autouse=True)
def _restore_session_sql_conf(spark):
    # The adapter sets dbt's session confs (ANSI off, LEGACY store assignment) on the shared session; put
    # them back after each dbt module so the tests that follow run on Spark's defaults, as users' code does.
    from dbt.adapters.hoodpy.session import SESSION_SQL_CONF

    saved = {key: spark.conf.get(key, None) for key in SESSION_SQL_CONF}
    yield
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)

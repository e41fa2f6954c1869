"""dbt tests: dbt-tests-adapter's project fixtures against a ``type: hoodpy`` profile.

The adapter reuses the process's SparkSession (``SparkSession.builder.getOrCreate()`` semantics), so every dbt
invocation in this pytest process runs on the session-scoped ``spark`` fixture of tests/conftest.py: one JVM,
one metastore.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["dbt.tests.fixtures.project"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/dbt/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.dbt)
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="class")
def dbt_profile_target(spark):
    # Requesting `spark` first makes the adapter find (and reuse) the shared session.
    return {"type": "hoodpy", "method": "session", "threads": 1}

"""Fixtures of the DataFrame API tests: the shared session with hoodpy's layer (and so format("hoodpy"))
enabled for one module."""

from __future__ import annotations

import pytest

from sql_ext import disable, enable


@pytest.fixture(scope="module")
def api_spark(spark):
    """The session-wide SparkSession with ``enable`` applied for this module (disabled afterwards)."""
    enable(spark)
    yield spark
    disable(spark)

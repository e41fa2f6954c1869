"""Unit-test fixtures shared across packages (helpers in timeline_fixtures.py, importable from here)."""

import pytest

from timeline_fixtures import v8_table_storage


@pytest.fixture
def v8_storage(tmp_path):
    return v8_table_storage(tmp_path)

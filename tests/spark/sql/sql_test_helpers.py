"""Helpers shared by the SQL-layer tests (importable: tests/spark/sql is on sys.path via rootdir)."""

from __future__ import annotations

from java_samples import unzip_sample as unzip_java_sample  # noqa: F401 -- one copy, honouring $HOODPY_HUDI_SAMPLES

"""Helpers shared by the SQL-layer tests (importable: tests/spark/sql is on sys.path via rootdir)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

SAMPLES_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "hudi-samples"


def unzip_java_sample(name: str, dest: Path) -> Path:
    """Unzip one of the Java-written sample tables; skips the test when samples are not available."""
    zip_path = SAMPLES_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(dest, [m for m in z.namelist() if not m.startswith("__MACOSX") and ".DS_Store" not in m])
    return dest / name

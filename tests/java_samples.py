"""The Java Hudi sample tables (../shared/hudi-samples, or $HOODPY_HUDI_SAMPLES): where they are and how a
test unzips one."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES_DIR = Path(os.environ.get("HOODPY_HUDI_SAMPLES", REPO.parent / "shared" / "hudi-samples"))


MOR_V6 = "hudi-rs/sample_table/mor/parquet"  # merge-on-read, table version 6, parquet log blocks
MOR_V9 = "hudi-rs/sample_table/mor/avro"  # merge-on-read, table version 9 (Hudi 1.1), Avro log blocks
LOG_FILES = SAMPLES_DIR / "hudi-rs" / "core" / "log_files"  # single log files, one per block type
HFILES = SAMPLES_DIR / "hudi-rs" / "core" / "hfile"  # HFiles written by Hudi 1.0 with HBase 2.4 (no table)


def unzip_sample(name: str, dest: Path) -> Path:
    """Unzip one sample table (its zip's path under the samples folder, without ``.zip``) into ``dest``;
    returns the table's base path."""
    zip_path = SAMPLES_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        members = [m for m in z.namelist() if not m.startswith("__MACOSX") and ".DS_Store" not in m]
        z.extractall(dest, members)
    return dest / Path(name).name


def file_digests(path: str | Path) -> dict[str, str]:
    """Every file under a table's base path (relative path -> sha256): to show a refused write left the table
    exactly as it was."""
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(path).rglob("*")) if p.is_file()}


# Tables whose metadata table Hudi 1.1 wrote with its native HFile writer (base HFiles and HFile log blocks).
MDT_SAMPLES = ("hudi-rs/sample_table/cow/v9_txns_simple_meta", "hudi-rs/sample_table/mor/avro/v9_nonpartitioned_rollback")


def metadata_table_files(name: str, *, logs: bool) -> dict[str, bytes]:
    """The metadata table's base HFiles (``logs=False``) or log files of a sample table, read from its zip:
    path inside the zip -> bytes."""
    zip_path = SAMPLES_DIR / f"{name}.zip"
    if not zip_path.exists():
        pytest.skip(f"sample {zip_path} not available")
    with zipfile.ZipFile(zip_path) as z:
        return {m: z.read(m) for m in sorted(z.namelist())
                if "/.hoodie/metadata/" in m and "/.hoodie/metadata/.hoodie/" not in m and not m.endswith("/")
                and (".log." in m if logs else m.endswith(".hfile"))}

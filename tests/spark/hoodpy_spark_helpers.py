"""Helpers shared by the tests/spark modules: table snapshots, row collection, base-file inspection.

Imported by module name (tests/spark has no __init__.py, so pytest puts this folder on sys.path).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import HealthCheck, Phase, settings

from hoodpy.index.bloom_filter import FOOTER_MAX_RECORD_KEY, FOOTER_MIN_RECORD_KEY

# Small bloom filters keep base files a few KB (the default 60000 entries adds ~431 KB per file).
SMALL_BLOOM = {"hoodie.index.bloom.num_entries": "100"}

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def tree(path: str) -> dict[str, tuple[int, str]]:
    """Every file under ``path`` (relative name -> size, sha1 of the contents): a table's exact state."""
    root = Path(path)
    out = {}
    for f in sorted(root.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            out[str(f.relative_to(root))] = (len(data), hashlib.sha1(data).hexdigest())
    return out


def timeline_files(path: str) -> list[str]:
    """Names of the files directly under .hoodie/ (instants and hoodie.properties)."""
    return sorted(p.name for p in (Path(path) / ".hoodie").iterdir() if p.is_file())


def data_files(path: str) -> list[str]:
    """Relative paths of all base files, committed or not."""
    root = Path(path)
    return sorted(str(f.relative_to(root)) for f in root.rglob("*.parquet") if ".hoodie" not in f.parts)


def rows(df, *cols: str) -> list[tuple]:
    """``cols`` of every row, sorted (None sorts first)."""
    return sorted((tuple(r) for r in df.select(*cols).collect()),
                  key=lambda t: tuple((v is not None, v) for v in t))


def by_key(df, *cols: str) -> dict[str, tuple]:
    """record key -> ``cols``; fails on a duplicate key."""
    out: dict[str, tuple] = {}
    for r in df.select("_hoodie_record_key", *cols).collect():
        assert r[0] not in out, f"duplicate record key {r[0]!r}"
        out[r[0]] = tuple(r[1:])
    return out


def latest_files(table) -> dict[tuple[str, str], str]:
    """(partition, file id) -> relative path of the latest committed base file."""
    return {(bf.partition_path, bf.file_id): bf.path for bf in table.file_system_view().latest_base_files()}


def read_base_file(table, rel_path: str):
    return pq.read_table(table.storage.full_path(rel_path))


def footer(table, rel_path: str) -> dict[str, bytes]:
    meta = pq.read_metadata(table.storage.full_path(rel_path)).metadata or {}
    return {k.decode(): v for k, v in meta.items()}


def key_range(table, rel_path: str) -> tuple[str, str]:
    f = footer(table, rel_path)
    return f[FOOTER_MIN_RECORD_KEY].decode(), f[FOOTER_MAX_RECORD_KEY].decode()


def stats_by_file(result) -> dict[str, object]:
    """file id -> WriteStat of a CommitResult."""
    return {s.file_id: s for s in result.metadata.write_stats}


def sequences(count: int):
    """Hypothesis settings of the randomized write-sequence tests: ``count`` derandomized examples (CI sees
    the same sequences every run), no deadline, no example database, no shrinking (each step writes)."""
    return settings(max_examples=count, deadline=None, derandomize=True, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

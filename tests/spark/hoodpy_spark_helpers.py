"""Helpers shared by the tests/spark modules: table snapshots, row collection, base-file inspection, the
metadata table checked against storage.

Imported by module name (tests/spark has no __init__.py, so pytest puts this folder on sys.path).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import HealthCheck, Phase, settings

from hoodpy.file_group import fs_view
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.markers import marked_log_files
from hoodpy.index.bloom_filter import FOOTER_MAX_RECORD_KEY, FOOTER_MIN_RECORD_KEY
from hoodpy.inspect.metadata_table import has_metadata_table, validate_files
from hoodpy.timeline.timeline import Timeline

# Small bloom filters keep base files a few KB (the default 60000 entries adds ~431 KB per file).
SMALL_BLOOM = {"hoodie.index.bloom.num_entries": "100"}
TWO_FILES_DDL = "id int, p string, ts long, v string"

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


def hudi_rs_rows(path: str, columns: list[str], options: dict[str, str] | None = None) -> dict:
    """hudi-rs's rows (read with ``options``): first column -> tuple of the others."""
    import pyarrow as pa

    from tests.compat import hudi_rs

    batches = hudi_rs.table(path, options).read()
    t = pa.Table.from_batches(batches) if batches else None
    if t is None or not t.num_rows:
        return {}
    return {r[0]: tuple(r[1:]) for r in (tuple(d.values()) for d in t.select(columns).to_pylist())}


def slice_names(view: FileSystemView) -> set[tuple]:
    """(partition, file id, base file name, log file names) of the view's latest file slices."""
    return {(s.partition_path, s.file_id, s.base_file.name if s.base_file else None,
             tuple(lf.name for lf in s.log_files)) for s in view.latest_file_slices()}


def pending_instant_files(storage, timeline: Timeline) -> set[str]:
    """Files of pending instants (crashed writes and table services): base files carrying their instant,
    log files their markers name."""
    pending = {i.timestamp for i in timeline.instants if not i.is_completed}
    out = {bf.path for bf in fs_view.list_base_files(storage) if bf.instant_time in pending}
    return out | {rel for t in pending for rel in marked_log_files(storage, t)}


def assert_metadata_in_step(table, columns: list[str]) -> None:
    """The metadata table's listing gives the file-system view that a storage listing of the committed files
    gives; it misses exactly (some of) the files of pending instants; hudi-rs reads the same rows through it
    (hoodie.metadata.enable=true) as without."""
    storage = table.storage
    assert has_metadata_table(storage)
    timeline = Timeline.load(storage)
    pending = pending_instant_files(storage, timeline)
    listing = [f for f in fs_view._list(storage, None) if f.path not in pending]
    by_storage = FileSystemView(timeline, fs_view._base_files(listing), None, fs_view._log_files(listing))
    assert slice_names(FileSystemView.load(storage, timeline)) == slice_names(by_storage)
    differences = validate_files(storage).rows
    assert all(r[2] and not r[3] and f"{r[0]}/{r[1]}" in pending for r in differences), differences
    path = table.base_path
    assert hudi_rs_rows(path, columns, {"hoodie.metadata.enable": "true"}) == \
        hudi_rs_rows(path, columns, {"hoodie.metadata.enable": "false"})


def two_file_partition(spark, path: str, table_name: str, **create):
    """A table whose partition a has a small file X (ids 1-5: keys "1".."5") and a larger one Y (ids 6-40: keys
    "10".."9"; rows of TWO_FILES_DDL); returns (table, X's file id, Y's file id)."""
    from hoodpy.table import HoodieTable

    new_group = {"hoodie.parquet.small.file.limit": "0"}  # each insert starts its own file group
    t = HoodieTable.create(spark, path, table_name=table_name, record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", **create)
    t.insert(spark.createDataFrame([(i, "a", 1, f"v{i}") for i in range(1, 6)], TWO_FILES_DDL), options=new_group)
    (x,) = latest_files(t)
    t.insert(spark.createDataFrame([(i, "a", 1, f"v{i}" * 20) for i in range(6, 41)], TWO_FILES_DDL),
             options=new_group)
    (y,) = set(latest_files(t)) - {x}
    sizes = {bf.file_id: bf.size for bf in t.file_system_view().latest_base_files()}
    assert sizes[x[1]] < sizes[y[1]]
    return t, x[1], y[1]

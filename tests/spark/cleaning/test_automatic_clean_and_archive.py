"""Automatic cleaning keeps the file count bounded as the policy promises; archival trims the active timeline
while reads, time travel to retained instants and hudi-rs keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodpy.errors import ChangesNotReadableError
from hoodpy.table import HoodieTable
from hoodpy.timeline.archived import archived_instants, read_archived_entries
from tests.compat import hudi_rs
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM, data_files

pytestmark = pytest.mark.spark

DDL = "id int, part string, ts int, val string"
BASE = {**SMALL_BLOOM, "hoodie.parquet.compression.codec": "snappy"}


def _table(spark, path, options):
    return HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["part"],
                              precombine_field="ts", options={**BASE, **options})


def _rounds(spark, table, n):
    """n upserts, each updating key 1 (part a) and key 2 (part b): every round rewrites both file groups."""
    counts = []
    for i in range(n):
        table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (2, "b", i, f"b{i}")], DDL))
        counts.append(len(data_files(table.base_path)))
    return counts


def test_file_count_is_bounded_by_automatic_cleaning(spark, tmp_path):
    rounds = 6
    cleaned = _table(spark, str(tmp_path / "cleaned"), {"hoodie.cleaner.commits.retained": "2"})
    counts = _rounds(spark, cleaned, rounds)
    # KEEP_LATEST_COMMITS 2: per file group the two retained versions plus the one before them.
    assert max(counts) <= 2 * 3 and counts[-1] == 2 * 3
    assert len([i for i in cleaned.timeline.instants if i.action.value == "clean"]) == rounds - 3
    uncleaned = _table(spark, str(tmp_path / "uncleaned"), {"hoodie.clean.automatic": "false"})
    grow = _rounds(spark, uncleaned, rounds)
    assert grow == [2 * (i + 1) for i in range(rounds)]  # without cleaning: two new files per round
    # File versions: one version per group survives each commit.
    versions = _table(spark, str(tmp_path / "versions"), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                                          "hoodie.cleaner.fileversions.retained": "1"})
    assert _rounds(spark, versions, 3) == [2, 2, 2]
    assert sorted((r.id, r.val) for r in versions.read().collect()) == [(1, "a2"), (2, "b2")]


def test_archival_trims_the_active_timeline(spark, tmp_path):
    options = {"hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3",
               "hoodie.keep.max.commits": "4"}
    table = _table(spark, str(tmp_path / "t"), options)
    times = []
    rows_at = {}
    for i in range(8):
        result = table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (10 + i, "b", i, f"n{i}")], DDL))
        times.append(result.instant_time)
        rows_at[result.instant_time] = sorted((r.id, r.val) for r in table.read().collect())
    active = [i.timestamp for i in table.timeline.completed_commits()]
    archived = [i.timestamp for i in archived_instants(table.storage) if i.action.value == "commit"]
    assert 3 <= len(active) <= 4
    assert archived and sorted(archived + active) == times
    assert all(a < active[0] for a in archived)
    assert not any(p.name.startswith(".commits_") for p in (Path(table.base_path) / ".hoodie").iterdir())
    names = [p.name for p in (Path(table.base_path) / ".hoodie" / "archived").iterdir()]
    assert names and all(n.startswith(".commits_.archive.") and n.endswith("_1-0-1") for n in names)
    entries = read_archived_entries(table.storage)
    first = next(e for e in entries if e["commitTime"] == times[0] and e["actionState"] == "COMPLETED")
    assert first["actionType"] == "commit"
    assert first["hoodieCommitMetadata"]["operationType"] == "UPSERT"
    # Reads: snapshot, time travel to the retained instants, incremental from an archived start.
    assert sorted((r.id, r.val) for r in table.read().collect()) == rows_at[times[-1]]
    for ts in active[1:]:
        assert sorted((r.id, r.val) for r in table.read(as_of=ts).collect()) == rows_at[ts]
    # An incremental read from an archived start would miss what the archived commits wrote: refused, naming
    # the newest archived commit as the earliest readable start; Hudi's fallback reads it by a full scan.
    with pytest.raises(ChangesNotReadableError, match=f"commits up to {archived[-1]} are archived") as refused:
        table.read_incremental(times[0])
    assert refused.value.earliest_start == archived[-1]
    assert sorted(r.id for r in table.read_incremental(archived[-1]).collect()) == \
        sorted([1] + [10 + times.index(t) for t in active])
    fallback = HoodieTable.for_path(spark, table.base_path,
                                    options={"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    incr = fallback.read_incremental(times[0])
    assert sorted(r.id for r in incr.collect()) == sorted([1] + [10 + i for i in range(1, 8)])
    # hudi-rs reads the archived table the same way.
    assert hudi_rs.keys_and_times(hudi_rs.snapshot(table.base_path)) == {
        (r._hoodie_record_key, r._hoodie_commit_time) for r in table.read().collect()}
    assert hudi_rs.completed_instants(table.base_path) == active

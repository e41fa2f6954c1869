"""hoodpy reads the Java Hudi 1.1 merge-on-read sample tables (table version 9, timeline layout 2, Avro log
blocks) as hudi-rs does: snapshot, read-optimized, time travel as of every commit's completion time and
incremental windows between completion times. In these tables every deltacommit writes a new log file named
after its own instant, which joins a file slice by its completion time (see FileSystemView). The tables were
written by one writer, so hudi-rs (which compares ``as_of`` with instant times) and hoodpy (completion times,
as Hudi 1.x) select the same commits. Writes into them: tests/spark/test_mor_table_versions.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hudi_rs
from java_samples import MOR_V9, unzip_sample
from hoodpy.config.table import TableConfig
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action

pytestmark = [pytest.mark.compat, pytest.mark.spark]

# name -> what it exercises (its .sql beside the zip wrote it)
SAMPLES = {
    "v9_nonpartitioned_rollback": "a rolled-back deltacommit, a metadata table with the record index",
    "v9_timebasedkeygen_nonhivestyle": "time-based partition paths, updates and deletes in log files",
    "v9_txns_complex_meta": "composite keys, deletes, a compaction and a clustering",
    "v9_txns_complex_nometa": "the same without meta fields",
    "v9_txns_nonpart_meta": "non-partitioned, deletes, compaction",
    "v9_txns_nonpart_nometa": "the same without meta fields",
    "v9_txns_simple_meta": "simple keys, deletes, insert overwrite, compaction, clustering",
    "v9_txns_simple_nometa": "the same without meta fields",
    "v9_txns_simple_overwrite": "insert overwrite (after inserts only)",
}
INSERTS_ONLY = {"v9_nonpartitioned_rollback", "v9_txns_simple_overwrite"}  # base files only, no log files


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("java_mor_v9_samples")


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def sample(request, samples_dir) -> str:
    return str(unzip_sample(f"{MOR_V9}/{request.param}", samples_dir))


def test_snapshot_and_read_optimized_match_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    assert table.config.get(TableConfig.VERSION) == 9
    theirs = hudi_rs.snapshot(sample)
    assert theirs and hudi_rs.df_rows_like(table.read(), theirs) == theirs
    ro = hudi_rs.read_optimized(sample)
    assert hudi_rs.df_rows_like(table.read(query_type="read_optimized"), ro) == ro


def test_time_travel_and_incremental_match_hudi_rs(spark, sample):
    table = HoodieTable.for_path(spark, sample)
    commits = table.timeline.completed_commits()
    assert [i.timestamp for i in commits] == hudi_rs.completed_instants(sample)
    completions = [i.completion_time for i in commits]
    merged_somewhere = False
    for at in completions:
        theirs = hudi_rs.snapshot(sample, as_of=at)
        assert hudi_rs.df_rows_like(table.read(as_of=at), theirs) == theirs, at
        ro = hudi_rs.read_optimized(sample, as_of=at)
        assert hudi_rs.df_rows_like(table.read(as_of=at, query_type="read_optimized"), ro) == ro, at
        merged_somewhere |= theirs != ro
    # Log records really were merged over base files at some point (two samples only insert: no logs).
    has_logs = any(p.name.startswith(".") and ".log." in p.name and ".hoodie" not in p.parts
                   for p in Path(sample).rglob("*"))
    assert has_logs == (Path(sample).name not in INSERTS_ONLY)
    assert merged_somewhere == has_logs
    for start, end in zip(completions, completions[1:]):
        theirs = hudi_rs.incremental(sample, start, end)
        assert hudi_rs.df_rows_like(table.read_incremental(start, end), theirs) == theirs, (start, end)


def test_logs_join_the_compacted_slice_by_completion_time(spark, samples_dir):
    """v9_txns_simple_meta: each deltacommit's log is named after the deltacommit, not the slice's base; the
    compaction's base files start new slices and logs of deltacommits that completed before it stay with the
    slice before (as of the compaction, the compacted groups' newest slices have no logs)."""
    path = str(unzip_sample(f"{MOR_V9}/v9_txns_simple_meta", samples_dir / "slices"))
    table = HoodieTable.for_path(spark, path)
    timeline = table.timeline
    # A completed compaction is one timeline entry, the commit it completed as (operation COMPACT).
    compaction = [i for i in timeline.completed_commits() if i.action == Action.COMMIT and
                  timeline.commit_metadata(i).operation_type == "COMPACT"]
    assert len(compaction) == 1
    view = FileSystemView.load(table.storage, timeline, as_of=compaction[0].completion_time)
    deltacommits = {i.timestamp for i in timeline.completed_commits() if i.action == Action.DELTACOMMIT}
    compacted = [g for g in view.file_groups() if len(g.slices) == 2]
    assert compacted, "the compaction started new slices"
    for g in compacted:
        old, new = g.slices
        assert new.base_instant_time == compaction[0].timestamp and new.log_files == ()
        assert old.log_files and {lf.name.base_instant_time for lf in old.log_files} <= deltacommits

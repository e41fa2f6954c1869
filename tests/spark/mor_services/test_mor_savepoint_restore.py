"""Savepoints and restores on Java-written merge-on-read tables (v6): a savepoint lists the latest slices' base
and log files and keeps them from the cleaner; restoring removes what the later deltacommits and compactions
wrote (log files whole, or rolled back with Java's rollback command block when a log file also holds kept
blocks); hoodpy and hudi-rs then read the savepointed rows, snapshot and read-optimized."""

from __future__ import annotations

import shutil

import pytest

from java_samples import MOR_V6, file_digests, unzip_sample
from mor_samples import NONPARTITIONED, PARTITIONED, compacted_sample
from tests.compat import hudi_rs
from hoodpy.errors import SavepointError, UnsupportedServiceError
from hoodpy.services.restore import read_restore_metadata
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format
from hoodpy.timeline.instant import Action

pytestmark = [pytest.mark.spark, pytest.mark.compat]

DC1, DC2 = "20250117083125837", "20250117083136333"  # v6_nonpartitioned's deltacommits
LOG = ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43"  # written by DC2
DC2_BASE = "d5c0b12d-088d-48e8-9683-3f0c1eabcaf0-0_1-33-44_20250117083136333.parquet"


def reads(table, path) -> list[dict]:
    rows = hudi_rs.df_rows(table.read())
    assert rows == hudi_rs.snapshot(str(path))
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == hudi_rs.read_optimized(str(path))
    return rows


def test_restore_removes_a_later_deltacommits_log_and_base_files(spark, tmp_path):
    path = unzip_sample(f"{MOR_V6}/{NONPARTITIONED}", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    as_of_dc1 = hudi_rs.df_rows(table.read(as_of=DC1))
    savepoint = table.savepoints.create(DC1)
    # As of DC1 the slice is its base file and the log named after it (Java lists a slice's files).
    assert savepoint.files == {"": sorted([LOG, "d206069c-22c8-4532-b9ea-3cf4282342c4-0_0-13-23_20250117083125837.parquet"])}
    restore = table.savepoints.rollback_to(DC1)
    assert not (path / LOG).exists() and not (path / DC2_BASE).exists()
    meta = read_restore_metadata(table.storage, restore.timestamp)
    assert sorted(p.rsplit("/", 1)[-1] for p in meta["hoodieRestoreMetadata"][DC2][0]["partitionMetadata"][""][
        "successDeleteFiles"]) == sorted([LOG, DC2_BASE])
    table = HoodieTable.for_path(spark, str(path))
    assert [i.timestamp for i in table.timeline.completed_commits()] == [DC1]
    assert reads(table, path) == as_of_dc1


def test_mixed_log_file_gets_javas_rollback_block(spark, tmp_path):
    """A log file holding blocks of a kept deltacommit and of a later one (as Java appends on file systems that
    can): made from the sample's own blocks. Restoring writes the next log version with the rollback block."""
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned_rollback", tmp_path)
    first = path / ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43"
    later = path / ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.3_0-13-9"
    with first.open("ab") as f:
        f.write(later.read_bytes())  # log.1 now also holds the later deltacommit's block
    table = HoodieTable.for_path(spark, str(path))
    savepointed = "20250126040823628"
    before = reads(table, path)
    as_of = hudi_rs.df_rows(table.read(as_of=savepointed))
    assert as_of != before
    table.savepoints.create(savepointed)
    restore = table.savepoints.rollback_to(savepointed)
    assert first.exists() and not later.exists()  # log.3 held the later block only
    block_file = path / ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.4_1-0-1"
    assert block_file.read_bytes() == log_format.rollback_command_block(restore.timestamp, "20250126060846931")
    table = HoodieTable.for_path(spark, str(path))
    assert reads(table, path) == as_of


def test_restore_undoes_a_compaction_and_savepoint_keeps_the_slice_from_clean(spark, tmp_path):
    src = unzip_sample(f"{MOR_V6}/{PARTITIONED}", tmp_path / "src")
    table = HoodieTable.for_path(spark, str(src))
    last = table.timeline.filter(actions=[Action.DELTACOMMIT])[-1].timestamp
    before = reads(table, src)
    table.savepoints.create(last)
    path = tmp_path / "t"
    shutil.copytree(src, path)
    table = HoodieTable.for_path(spark, str(path))
    plan = table.compaction.schedule()
    table.compaction.execute(plan.instant_time)
    [op] = plan.operations
    old = [op.data_file_path, *op.delta_file_paths]
    # The savepoint pins the Java slice: a clean keeping one version leaves it.
    assert table.cleaning.run({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                               "hoodie.cleaner.fileversions.retained": "1"}) is None
    assert all((path / rel).exists() for rel in old)
    table.savepoints.rollback_to(last)
    table = HoodieTable.for_path(spark, str(path))
    hoodie = {p.name for p in (path / ".hoodie").iterdir()}
    assert not {n for n in hoodie if n.startswith(plan.instant_time)}
    assert not (path / ".hoodie" / ".aux" / f"{plan.instant_time}.compaction.requested").exists()
    assert not list(path.glob(f"*/*_{plan.instant_time}.parquet"))
    assert table.compaction.pending() == []
    assert reads(table, path) == before


def test_bad_input_leaves_the_table_unchanged(spark, tmp_path):
    sample = compacted_sample(spark, NONPARTITIONED, tmp_path)
    before = file_digests(sample.path)
    with pytest.raises(SavepointError, match="not a completed commit"):
        sample.table.savepoints.create("20250117083125838")
    with pytest.raises(SavepointError, match="No savepoint at 20250117083125837"):
        sample.table.savepoints.rollback_to(DC1)
    assert file_digests(sample.path) == before


def test_restore_of_a_version_9_merge_on_read_table_is_refused(spark, tmp_path):
    """Version 9 names a log after the deltacommit that wrote it; restore's log rollback reads version 6's."""
    path = unzip_sample("hudi-rs/sample_table/mor/avro/v9_nonpartitioned_rollback", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    first = table.timeline.completed_commits()[0].timestamp
    table.savepoints.create(first)
    before = file_digests(path)
    with pytest.raises(UnsupportedServiceError, match="Restoring a merge-on-read table is not supported on table "
                                                      "version 9"):
        table.savepoints.rollback_to(first)
    assert file_digests(path) == before

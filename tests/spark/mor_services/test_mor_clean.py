"""Clean on Java-written merge-on-read tables (v6) compacted by hoodpy: a file slice is one version, its base
file and log files are deleted together and listed in the plan and the clean metadata as Java lists them;
the slice a query before the earliest retained commit reads, and a slice a pending compaction merges, stay;
reads (snapshot and read-optimized) are unchanged and equal to hudi-rs's."""

from __future__ import annotations

import pytest

from java_samples import MOR_V6, file_digests, unzip_sample
from mor_samples import NONPARTITIONED, PARTITIONED, compacted_sample
from tests.compat import hudi_rs
from hoodpy.errors import InvalidConfigError, PlanNotFoundError
from hoodpy.services.clean.execute import read_clean_metadata
from hoodpy.table import HoodieTable
from hoodpy.timeline.avro_models import AvroModel, deserialize

pytestmark = [pytest.mark.spark, pytest.mark.compat]

ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def on_disk(path, rel_paths) -> list[bool]:
    return [(path / rel).exists() for rel in rel_paths]


@pytest.mark.parametrize("name", [NONPARTITIONED, PARTITIONED])
def test_old_slice_base_and_logs_are_cleaned_together(spark, tmp_path, name):
    sample = compacted_sample(spark, name, tmp_path)
    old = sample.old_slice_paths
    assert len(old) == 2 and on_disk(sample.path, old) == [True, True]
    partition = sample.operation.partition_path

    plan = sample.table.cleaning.schedule(ONE_VERSION)
    raw = deserialize(AvroModel.CLEANER_PLAN,
                      (sample.path / ".hoodie" / f"{plan.instant_time}.clean.requested").read_bytes())
    # Java lists every file of the slice with its full path; a log file is no bootstrap base file.
    assert raw["filePathsToBeDeletedPerPartition"][partition] == [
        {"filePath": sample.table.storage.full_path(rel), "isBootstrapBaseFile": False} for rel in old]
    result = sample.table.cleaning.execute(plan)
    assert result.deleted_files == {partition: old} and result.failed_count == 0
    assert on_disk(sample.path, old) == [False, False]
    meta = read_clean_metadata(sample.table.storage, plan.instant_time)
    assert meta["totalFilesDeleted"] == 2
    assert meta["partitionMetadata"][partition]["successDeleteFiles"] == [p.rsplit("/", 1)[-1] for p in old]

    assert sample.reads_as_hudi_rs() == sample.rows
    assert sample.table.cleaning.schedule(ONE_VERSION) is None  # nothing left


def test_keep_latest_commits_keeps_the_slice_before_the_earliest_retained(spark, tmp_path):
    """E = the compaction commit: the Java slice is what a query as of the last deltacommit reads."""
    sample = compacted_sample(spark, NONPARTITIONED, tmp_path)
    before = file_digests(sample.path)
    assert sample.table.cleaning.schedule({"hoodie.cleaner.commits.retained": "1"}) is None
    assert file_digests(sample.path) == before


def test_slice_under_pending_compaction_is_kept(spark, tmp_path):
    sample = compacted_sample(spark, PARTITIONED, tmp_path, execute=False)
    before = file_digests(sample.path)
    plan = sample.table.cleaning.preview(ONE_VERSION)
    kept = set(sample.old_slice_paths)
    assert plan is None or not kept & {p for paths in plan.files_per_partition.values() for p in paths}
    sample.table.cleaning.run(ONE_VERSION)
    assert on_disk(sample.path, sample.old_slice_paths) == [True, True]
    assert {k: v for k, v in file_digests(sample.path).items() if not k.startswith(".hoodie")} == \
        {k: v for k, v in before.items() if not k.startswith(".hoodie")}
    sample.table.compaction.execute(sample.compaction_time)
    assert hudi_rs.df_rows(sample.table.read()) == hudi_rs.snapshot(str(sample.path))


def test_replaced_file_groups_go_with_their_logs(spark, tmp_path):
    """insert_overwrite_table replaced every Java file group, one with a log file: all their files go, and
    the partitions left empty."""
    path = unzip_sample(f"{MOR_V6}/v6_simplekeygen_nonhivestyle_overwritetable", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    rows = hudi_rs.df_rows(table.read())
    assert rows == hudi_rs.snapshot(str(path))
    old_log = "10/.92e64357-e4d1-4639-a9d3-c3535829d0aa-0_20250121000647668.log.1_0-73-101"
    result = table.cleaning.run(ONE_VERSION)
    assert old_log in result.deleted_files["10"] and not (path / old_log).exists()
    assert sorted(result.deleted_partitions) == ["10", "20"]
    assert result.total_files_deleted == 4  # two base files and the log of partition 10, one base file of 30
    assert hudi_rs.df_rows(table.read()) == rows == hudi_rs.snapshot(str(path))
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == hudi_rs.read_optimized(str(path))


def test_bad_input_leaves_the_table_unchanged(spark, tmp_path):
    sample = compacted_sample(spark, NONPARTITIONED, tmp_path)
    before = file_digests(sample.path)
    with pytest.raises(InvalidConfigError, match="hoodie.cleaner.policy"):
        sample.table.cleaning.run({"hoodie.cleaner.policy": "KEEP_SOME"})
    with pytest.raises(PlanNotFoundError, match="No clean plan at 20250117083136333"):
        sample.table.cleaning.execute("20250117083136333")
    assert file_digests(sample.path) == before

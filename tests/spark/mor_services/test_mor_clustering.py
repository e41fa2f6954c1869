"""Clustering Java-written merge-on-read tables (v6): a slice's base file is merged with its log files (rolled
back blocks dropped, deletes applied) while rewritten; the plan's HoodieSliceInfo lists the log files; file
groups under a pending compaction are not clustered and a compaction plan skips those under a pending
clustering. Afterwards hoodpy and hudi-rs read the rows the table had, snapshot and read-optimized alike."""

from __future__ import annotations

import pytest

from java_samples import MOR_V6, file_digests, unzip_sample
from mor_samples import NONPARTITIONED, PARTITIONED
from tests.compat import hudi_rs
from hoodpy.errors import InvalidConfigError, PlanNotFoundError
from hoodpy.meta_fields import FILE_NAME
from hoodpy.table import HoodieTable
from hoodpy.timeline.avro_models import AvroModel, deserialize

pytestmark = [pytest.mark.spark, pytest.mark.compat]


def without_file_names(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != FILE_NAME} for r in rows]


@pytest.mark.parametrize("name", [NONPARTITIONED, "v6_nonpartitioned_rollback", PARTITIONED,
                                  "v6_complexkeygen_hivestyle"])
def test_slices_with_logs_are_merged_while_rewritten(spark, tmp_path, name):
    path = unzip_sample(f"{MOR_V6}/{name}", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    before = hudi_rs.df_rows(table.read())
    assert before == hudi_rs.snapshot(str(path))
    plan = table.clustering.schedule()
    raw = deserialize(AvroModel.REQUESTED_REPLACE_METADATA,
                      (path / ".hoodie" / f"{plan.instant_time}.replacecommit.requested").read_bytes())
    infos = [s for g in raw["clusteringPlan"]["inputGroups"] for s in g["slices"]]
    logged = [s for s in infos if s["deltaFilePaths"]]
    assert logged, "the sample has a slice with log files"
    for s in logged:
        on_disk = sorted((p for p in (path / s["partitionPath"]).iterdir()
                          if p.name.startswith(f".{s['fileId']}_") and ".log." in p.name and
                          not p.name.endswith(".crc")), key=lambda p: p.name)
        # Full paths, newest log first (as a Java FileSlice holds them); the base file's full path.
        assert s["deltaFilePaths"] == [table.storage.full_path(f"{s['partitionPath']}/{p.name}".lstrip("/"))
                                       for p in reversed(on_disk)]
        assert s["dataFilePath"].endswith(".parquet")
    metrics = [g["metrics"] for g in raw["clusteringPlan"]["inputGroups"]]
    assert sum(m["TOTAL_LOG_FILES"] for m in metrics) == sum(len(s["deltaFilePaths"]) for s in infos)
    result = table.clustering.execute(plan.instant_time)
    assert result.replaced_file_groups == len(infos)
    table = HoodieTable.for_path(spark, str(path))
    after = hudi_rs.df_rows(table.read())
    assert without_file_names(after) == without_file_names(before)
    assert after == hudi_rs.snapshot(str(path))
    # The rewritten base files hold the merged rows: read-optimized now reads them too.
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == after == hudi_rs.read_optimized(str(path))
    clustered = {s["fileId"] for s in infos}
    assert not [s for s in table.file_system_view().latest_file_slices() if s.log_files or s.file_id in clustered]


def test_pending_compaction_and_clustering_exclude_each_other(spark, tmp_path):
    path = unzip_sample(f"{MOR_V6}/{PARTITIONED}", tmp_path / "a")
    table = HoodieTable.for_path(spark, str(path))
    compaction = table.compaction.schedule()
    [op] = compaction.operations
    plan = table.clustering.schedule()
    clustered = {(s.partition_path, s.file_id) for g in plan.input_groups for s in g.slices}
    assert clustered and (op.partition_path, op.file_id) not in clustered
    before = hudi_rs.df_rows(table.read())
    table.clustering.execute(plan.instant_time)
    table.compaction.execute(compaction.instant_time)
    table = HoodieTable.for_path(spark, str(path))
    after = hudi_rs.df_rows(table.read())
    assert without_file_names(after) == without_file_names(before) and after == hudi_rs.snapshot(str(path))

    other = unzip_sample(f"{MOR_V6}/{PARTITIONED}", tmp_path / "b")
    table = HoodieTable.for_path(spark, str(other))
    plan = table.clustering.schedule()
    assert any(s.delta_file_paths for g in plan.input_groups for s in g.slices)
    assert table.compaction.schedule() is None  # its one slice with logs is being clustered


def test_bad_input_leaves_the_table_unchanged(spark, tmp_path):
    path = unzip_sample(f"{MOR_V6}/{NONPARTITIONED}", tmp_path)
    table = HoodieTable.for_path(spark, str(path))
    before = file_digests(path)
    with pytest.raises(InvalidConfigError, match="hoodie.clustering.plan.strategy.sort.columns"):
        table.clustering.schedule(sort_columns=["no_such_column"])
    with pytest.raises(PlanNotFoundError):
        table.clustering.execute("20250117083136333")
    assert file_digests(path) == before

"""Java-written merge-on-read samples (table version 6) compacted by hoodpy, so that a file group has two
slices: the Java slice (base file and log files) and the compacted one. The table services' MOR tests start
from these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from java_samples import MOR_V6, unzip_sample
from tests.compat import hudi_rs
from hoodpy.table import HoodieTable
from hoodpy.timeline.compaction_plan import CompactionOperation

PARTITIONED = "v6_simplekeygen_nonhivestyle"  # partition "10" holds the file group with a log file
NONPARTITIONED = "v6_nonpartitioned"


@dataclass
class CompactedSample:
    path: Path
    table: HoodieTable
    operation: CompactionOperation  # the slice that was compacted (its base and log files are the old slice)
    compaction_time: str
    rows: list[dict]  # hoodpy's snapshot after compaction

    @property
    def old_slice_paths(self) -> list[str]:
        op = self.operation
        return [op.data_file_path, *op.delta_file_paths]

    def reads_as_hudi_rs(self) -> list[dict]:
        """hoodpy's snapshot, checked equal to hudi-rs's, and read-optimized equal to both (compacted table)."""
        snapshot = hudi_rs.df_rows(self.table.read())
        assert snapshot == hudi_rs.snapshot(str(self.path))
        read_optimized = hudi_rs.df_rows(self.table.read(query_type="read_optimized"))
        assert read_optimized == hudi_rs.read_optimized(str(self.path))
        return snapshot


def compacted_sample(spark, name: str, dest: Path, *, execute: bool = True) -> CompactedSample:
    """Unzip a v6 MOR sample into ``dest`` and compact its one slice with log files (only schedule it when not
    ``execute``)."""
    path = unzip_sample(f"{MOR_V6}/{name}", dest)
    table = HoodieTable.for_path(spark, str(path))
    plan = table.compaction.schedule()
    [op] = plan.operations
    if execute:
        table.compaction.execute(plan.instant_time)
    table = HoodieTable.for_path(spark, str(path))
    return CompactedSample(path, table, op, plan.instant_time, hudi_rs.df_rows(table.read()))

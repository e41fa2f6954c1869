"""show_fsview_all / show_fsview_latest and stats_file_sizes on a Java-written merge-on-read table (v6):
log files listed with their slice as Hudi's ShowFileSystemViewProcedure prints them (num_delta_files,
total_delta_file_size, HoodieLogFile{pathStr=..., fileLen=...}), before and after hoodpy compacts the slice."""

from __future__ import annotations

import pytest

from mor_samples import PARTITIONED, compacted_sample
from sql_ext import disable, enable

pytestmark = pytest.mark.spark


@pytest.fixture
def hoodpy_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


def call(spark, sql: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def log_text(path, rel: str) -> str:
    return f"HoodieLogFile{{pathStr='{path}/{rel}', fileLen={(path / rel).stat().st_size}}}"


def test_log_files_in_the_file_system_view(hoodpy_spark, tmp_path):
    sample = compacted_sample(hoodpy_spark, PARTITIONED, tmp_path, execute=False)
    path, op = sample.path, sample.operation
    [log_rel] = op.delta_file_paths
    log_size = (path / log_rel).stat().st_size
    base_size = (path / op.data_file_path).stat().st_size
    # Pending compaction, not in flight: the Java slice, its base file and its log file.
    rows = call(hoodpy_spark, f"CALL show_fsview_all(path => '{path}', limit => 100)")
    [java_slice] = [r for r in rows if r[1] == op.file_id]
    assert java_slice == (op.partition_path, op.file_id, op.base_instant_time, f"{path}/{op.data_file_path}",
                          base_size, 1, log_size, f"[{log_text(path, log_rel)}]")
    assert all(r[5:] == (0, 0, "[]") for r in rows if r[1] != op.file_id)
    latest = call(hoodpy_spark, f"CALL show_fsview_latest(path => '{path}', limit => 100)")
    [row] = [r for r in latest if r[1] == op.file_id]
    # The log is named after the slice's base instant: Hudi counts it as "scheduled".
    assert row[5:] == (1, log_size, log_size, 0, log_size / base_size, 0.0, f"[{log_text(path, log_rel)}]", "[]")

    sizes = {r[0]: r for r in call(hoodpy_spark, f"CALL stats_file_sizes(path => '{path}', limit => 100)")}
    # The first deltacommit's files: two base files and the log file (counted under its base instant).
    first = sorted(f.stat().st_size for f in path.glob("[0-9]*/*") if op.base_instant_time in f.name
                   and not f.name.endswith(".crc"))
    assert len(first) == 3 and (sizes[op.base_instant_time][1], sizes[op.base_instant_time][6:8]) == (
        first[0], (first[-1], 3))
    assert sizes["ALL"][7] == 4

    sample.table.compaction.execute(sample.compaction_time)
    rows = call(hoodpy_spark, f"CALL show_fsview_all(path => '{path}', limit => 100)")
    group = [r for r in rows if r[1] == op.file_id]
    assert [(r[2], r[5], r[7]) for r in group] == [
        (sample.compaction_time, 0, "[]"), (op.base_instant_time, 1, f"[{log_text(path, log_rel)}]")]
    [row] = [r for r in call(hoodpy_spark, f"CALL show_fsview_latest(path => '{path}', limit => 100)")
             if r[1] == op.file_id]
    assert row[2] == sample.compaction_time and row[5:7] == (0, 0)

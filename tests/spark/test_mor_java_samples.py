"""hoodpy writes into the Java Hudi 0.14 merge-on-read sample tables (table version 6, parquet log blocks): an
upsert (one update with a larger ordering value, one new key) and a delete, with Avro log blocks (Hudi's
default) or parquet ones. hudi-rs then reads the expected rows, and reads them as hoodpy does; the update lands
in a new log version of the file group Java's logs are in. (The virtual-keys sample: test_mor_virtual_keys.py.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

from tests.compat import hudi_rs
from tests.compat.hudi_rs import COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from java_samples import MOR_V6, unzip_sample
from hoodpy.file_group.naming import parse_log_file_name
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format as lf

pytestmark = [pytest.mark.spark, pytest.mark.compat]

SAMPLES = ("v6_nonpartitioned", "v6_nonpartitioned_rollback", "v6_complexkeygen_hivestyle",
           "v6_simplekeygen_nonhivestyle", "v6_simplekeygen_nonhivestyle_overwritetable")
CASES = [(s, "avro") for s in SAMPLES] + [("v6_complexkeygen_hivestyle", "parquet")]
NEW_ID = 1000


def _logs(path: str) -> set[str]:
    return {p.name for p in Path(path).rglob(".*.log.*")}


@pytest.mark.parametrize("name,fmt", CASES, ids=[f"{s}-{f}" for s, f in CASES])
def test_upsert_and_delete_into_java_table_read_by_hudi_rs(spark, tmp_path, name, fmt):
    path = str(unzip_sample(f"{MOR_V6}/{name}", tmp_path))
    options = {"hoodie.logfile.data.block.format": fmt}
    table = HoodieTable.for_path(spark, path, options=options)
    before = hudi_rs.df_rows(table.read())
    assert before == hudi_rs.snapshot(path)
    data_columns = [c for c in table.read().columns if c not in META_COLUMNS]
    # Update a key whose latest version Java wrote to a log file if there is one (its file name is the file
    # id), so the update goes into that slice's next log version.
    in_logs = [r for r in before if not r[FILE_NAME].endswith(".parquet")]
    updated = (in_logs or before)[0]
    others = [r for r in before if r[RECORD_KEY] != updated[RECORD_KEY]]
    logs_before = _logs(path)

    source = table.read().filter(F.col(RECORD_KEY) == updated[RECORD_KEY]).select(*data_columns)
    change = source.withColumn("isActive", ~F.col("isActive")).withColumn("longField", F.col("longField") + 1000)
    insert = source.withColumn("id", F.lit(NEW_ID))
    upsert = table.upsert(change.unionByName(insert))
    assert upsert.num_update_writes == 1 and upsert.num_inserts == 1
    # Delete another Java row, or (a table of one row) the one just inserted.
    deleted = others[0] if others else next(r for r in hudi_rs.df_rows(table.read()) if r["id"] == NEW_ID)
    delete = table.delete(table.read().filter(F.col(RECORD_KEY) == deleted[RECORD_KEY]).select(*data_columns))
    assert delete.num_deletes == 1

    after = hudi_rs.df_rows(table.read())
    assert after == hudi_rs.snapshot(path)
    by_key = {r[RECORD_KEY]: r for r in after}
    assert deleted[RECORD_KEY] not in by_key
    new = by_key[updated[RECORD_KEY]]
    assert (new["isActive"], new["longField"], new[COMMIT_TIME]) == (
        not updated["isActive"], updated["longField"] + 1000, upsert.instant_time)
    if others:
        [inserted] = [r for r in after if r["id"] == NEW_ID]
        assert inserted[COMMIT_TIME] == upsert.instant_time and inserted[PARTITION_PATH] == updated[PARTITION_PATH]
    unchanged = {r[RECORD_KEY] for r in before} - {updated[RECORD_KEY], deleted[RECORD_KEY]}
    project = [RECORD_KEY, PARTITION_PATH, COMMIT_TIME, *data_columns]
    assert hudi_rs.project([r for r in after if r[RECORD_KEY] in unchanged], project) == hudi_rs.project(
        [r for r in before if r[RECORD_KEY] in unchanged], project)
    # Read-optimized: base files only, hoodpy and hudi-rs alike.
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == hudi_rs.read_optimized(path)

    if in_logs:
        # The update went into the next log version of the Java slice, as a block of the chosen format.
        file_id = updated[FILE_NAME]
        java = [parse_log_file_name(n) for n in logs_before if n.startswith(f".{file_id}_")]
        [ours] = [parse_log_file_name(n) for n in _logs(path) - logs_before
                  if n.startswith(f".{file_id}_") and _instant_of(path, n) == upsert.instant_time]
        assert ours.version == max(j.version for j in java) + 1 and ours.base_instant_time == java[0].base_instant_time
        block_type = lf.AVRO_DATA_BLOCK if fmt == "avro" else lf.PARQUET_DATA_BLOCK
        [block] = lf.scan_blocks(next(Path(path).rglob(ours.name)).read_bytes())
        assert block.block_type == block_type


def _instant_of(path: str, log_name: str) -> str:
    [block, *_] = lf.scan_blocks(next(Path(path).rglob(log_name)).read_bytes())
    return block.instant_time


def test_first_write_into_the_empty_sample(spark, tmp_path):
    path = str(unzip_sample(f"{MOR_V6}/v6_empty", tmp_path))
    table = HoodieTable.for_path(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", True), (2, "b", False)], "id int, name string, isActive boolean"))
    rows = hudi_rs.df_rows(table.read())
    assert rows == hudi_rs.snapshot(path) and [r["name"] for r in rows] == ["a", "b"]
    assert table.timeline.completed_commits()[-1].action.value == "deltacommit"

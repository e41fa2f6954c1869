"""Merge-on-read writes into tables of version 8 and 9 (Hudi 1.x, timeline layout 2), as Java 1.x writes them.

* Java Hudi 1.1 samples (``hudi-rs/sample_table/mor/avro/v9_*``): an upsert (one update, one new key) and a
  delete through the Python API and through SQL, then a compaction (schedule, execute). After each step hudi-rs
  reads what hoodpy reads, the rows are the expected ones, and the table stays at version 9.
* hoodpy-created merge-on-read tables at ``hoodie.write.table.version`` 8 and 9: inserts, updates to log files,
  a delete, a compaction with a write while it is pending, a write after it, and a rollback of the last
  deltacommit, checked against a row model and hudi-rs after every step.

What is checked on storage: each deltacommit's log file is named after the deltacommit
(``.<fileId>_<deltacommit>.log.1_<token>``, not after the slice's base instant as in version 6), its write stat
names the deltacommit as ``prevCommit`` with an empty ``baseFile`` and only that log file (as the Java 1.1
samples' deltacommits do), and compaction plans are written with Hudi 1.x's writer schema (the Java plans').
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
from fastavro.schema import to_parsing_canonical_form
import pytest
from pyspark.sql import functions as F

from java_samples import MOR_V9, unzip_sample
from tests.compat import hudi_rs
from tests.compat.hudi_rs import COMMIT_TIME, PARTITION_PATH, RECORD_KEY
from hoodpy.config.properties import parse_properties
from hoodpy.file_group.naming import parse_base_file_name, parse_log_file_name
from hoodpy.meta_fields import META_COLUMNS
from hoodpy.services.rollback import RollbackService
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import Action
from sql_ext import disable, enable

pytestmark = [pytest.mark.spark, pytest.mark.compat]

# Updates go to log files rather than into a small base file rewritten with the inserts (as in the samples' SQL).
NO_SMALL_FILES = {"hoodie.parquet.small.file.limit": "0"}
JAVA_SAMPLES = ("v9_txns_simple_meta", "v9_txns_complex_nometa", "v9_timebasedkeygen_nonhivestyle")


def _props(path: str) -> dict[str, str]:
    props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
    return {k: v for k, v in props.items() if k != "hoodie.table.metadata.partitions"}


def _data_logs(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts}


def _same_as_hudi_rs(table: HoodieTable, path: str) -> list[dict]:
    """hoodpy's snapshot and read-optimized rows, asserted equal to hudi-rs's; returns the snapshot."""
    mine = hudi_rs.df_rows(table.read())
    assert mine == hudi_rs.snapshot(path)
    assert hudi_rs.df_rows(table.read(query_type="read_optimized")) == hudi_rs.read_optimized(path)
    return mine


def _check_deltacommit_logs(table: HoodieTable, path: str, instant: str, logs_before: set[str]) -> None:
    """The deltacommit's new log files are named after it (version 1), and its write stats are Java 1.x's."""
    new = _data_logs(path) - logs_before
    assert new, "the write appended log files"
    for rel in new:
        name = parse_log_file_name(rel.rsplit("/", 1)[-1])
        assert (name.base_instant_time, name.version) == (instant, 1), rel
    [done] = [i for i in table.timeline.completed_commits() if i.timestamp == instant]
    assert done.action == Action.DELTACOMMIT
    log_stats = [s for s in table.timeline.commit_metadata(done).write_stats if s.is_log_write]
    assert {s.path for s in log_stats} == new
    for s in log_stats:
        assert (s.prev_commit, s.base_file, s.log_version) == (instant, "", 1)
        assert list(s.log_files) == [s.path.rsplit("/", 1)[-1]]


def _compact(table: HoodieTable, path: str, expected_java_schema: dict | None = None) -> str:
    """Schedule and execute a compaction; checks the plan file's writer schema and the commit."""
    plan = table.compaction.schedule()
    assert plan is not None and plan.operations
    requested = Path(path, ".hoodie", "timeline", f"{plan.instant_time}.compaction.requested")
    reader = fastavro.reader(io.BytesIO(requested.read_bytes()))
    schema = json.loads(reader.metadata["avro.schema"])
    assert [f["name"] for f in schema["fields"]][-1] == "missingSchedulePartitions"
    if expected_java_schema is not None:  # the same schema as Java's plan, as Avro resolves it
        assert to_parsing_canonical_form(schema) == to_parsing_canonical_form(expected_java_schema)
    assert next(iter(reader))["missingSchedulePartitions"] == []
    result = table.compaction.execute(plan.instant_time)
    assert result.files_written == len(plan.operations)
    [done] = [i for i in table.timeline.completed_commits() if i.timestamp == plan.instant_time]
    assert done.action == Action.COMMIT and table.timeline.commit_metadata(done).operation_type == "COMPACT"
    written = {parse_base_file_name(s.path.rsplit("/", 1)[-1]).instant_time
               for s in table.timeline.commit_metadata(done).write_stats}
    assert written == {plan.instant_time}
    return plan.instant_time


def _java_plan_schema(path: str) -> dict | None:
    plans = sorted(Path(path, ".hoodie", "timeline").glob("*.compaction.requested"))
    if not plans:
        return None
    return json.loads(fastavro.reader(io.BytesIO(plans[0].read_bytes())).metadata["avro.schema"])


@pytest.mark.parametrize("name", JAVA_SAMPLES)
def test_java_v9_sample_upsert_delete_compaction(spark, tmp_path, name):
    path = str(unzip_sample(f"{MOR_V9}/{name}", tmp_path))
    props = _props(path)
    java_plan_schema = _java_plan_schema(path)
    table = HoodieTable.for_path(spark, path, options=NO_SMALL_FILES)
    before = _same_as_hudi_rs(table, path)
    data_columns = [c for c in table.read().columns if c not in META_COLUMNS]
    # Update a key Java last wrote to a log file if there is one (its _hoodie_file_name is the file id). Keys
    # Java's INSERT INTO wrote twice (v9_timebasedkeygen_nonhivestyle holds TXN-001 in two file groups) are
    # left alone: an update or delete reaches every copy.
    keys = [r[RECORD_KEY] for r in before]
    unique = [r for r in before if keys.count(r[RECORD_KEY]) == 1]
    in_logs = [r for r in unique if not r["_hoodie_file_name"].endswith(".parquet")]
    updated = (in_logs or unique)[0]
    source = table.read().filter(F.col(RECORD_KEY) == updated[RECORD_KEY]).select(*data_columns)
    change = source.withColumn("txn_type", F.lit("hoodpy")).withColumn("txn_ts", F.col("txn_ts") + 1)
    insert = change.withColumn("txn_id", F.lit("TXN-900"))
    logs = _data_logs(path)
    upsert = table.upsert(change.unionByName(insert))
    assert upsert.num_update_writes == 1 and upsert.num_inserts == 1
    _check_deltacommit_logs(table, path, upsert.instant_time, logs)
    after_upsert = _same_as_hudi_rs(table, path)
    by_key = {r[RECORD_KEY]: r for r in after_upsert}
    assert (by_key[updated[RECORD_KEY]]["txn_type"], by_key[updated[RECORD_KEY]]["txn_ts"]) == (
        "hoodpy", updated["txn_ts"] + 1)
    assert by_key[updated[RECORD_KEY]][COMMIT_TIME] == upsert.instant_time
    assert len(after_upsert) == len(before) + 1

    deleted = next(r for r in unique if r[RECORD_KEY] != updated[RECORD_KEY])
    logs = _data_logs(path)
    delete = table.delete(table.read().filter(F.col(RECORD_KEY) == deleted[RECORD_KEY]).select(*data_columns))
    assert delete.num_deletes == 1
    _check_deltacommit_logs(table, path, delete.instant_time, logs)
    after_delete = _same_as_hudi_rs(table, path)
    assert [r for r in after_upsert if r[RECORD_KEY] != deleted[RECORD_KEY]] == after_delete

    _compact(table, path, java_plan_schema)
    compacted = _same_as_hudi_rs(table, path)
    project = [c for c in compacted[0] if c != "_hoodie_file_name"]
    assert hudi_rs.project(compacted, project) == hudi_rs.project(after_delete, project)
    assert _props(path) == props  # still version 9, nothing about the table changed


@pytest.fixture(scope="module")
def sql_spark(spark):
    enable(spark)
    spark.sql("CREATE DATABASE IF NOT EXISTS hoodpy_mor_table_versions")
    yield spark
    spark.sql("DROP DATABASE IF EXISTS hoodpy_mor_table_versions CASCADE")
    disable(spark)


def test_java_v9_sample_through_sql(sql_spark, tmp_path):
    spark = sql_spark
    path = str(unzip_sample(f"{MOR_V9}/v9_txns_simple_nometa", tmp_path))
    props = _props(path)
    name = "hoodpy_mor_table_versions.txns"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    before = {r["txn_id"]: r for r in hudi_rs.snapshot(path)}
    java_logs = _data_logs(path)
    spark.sql("SET hoodie.parquet.small.file.limit=0")
    try:
        spark.sql(f"UPDATE {name} SET txn_type = 'sql', txn_ts = txn_ts + 1 WHERE txn_id = 'TXN-003'")
        spark.sql(f"DELETE FROM {name} WHERE txn_id = 'TXN-007'")
        spark.sql(f"""INSERT INTO {name} SELECT 'TXN-901', account_id, txn_ts, txn_datetime, txn_date, amount,
                      currency, txn_type, merchant_name, is_international, fee_amount, txn_metadata, region
                      FROM {name} WHERE txn_id = 'TXN-008'""")
    finally:
        spark.sql("RESET hoodie.parquet.small.file.limit")
    after = hudi_rs.snapshot(path)
    assert hudi_rs.df_rows(spark.sql(f"SELECT * FROM {name}")) == after
    by_key = {r["txn_id"]: r for r in after}
    assert set(by_key) == set(before) - {"TXN-007"} | {"TXN-901"}
    assert (by_key["TXN-003"]["txn_type"], by_key["TXN-003"]["txn_ts"]) == ("sql", before["TXN-003"]["txn_ts"] + 1)
    assert by_key["TXN-901"]["region"] == before["TXN-008"]["region"]
    # The UPDATE and DELETE appended log files named after their deltacommits.
    deltacommits = {p.name.split("_")[0] for p in Path(path, ".hoodie", "timeline").glob("*.deltacommit")}
    ours = {parse_log_file_name(Path(p).name).base_instant_time for p in _data_logs(path) - java_logs}
    assert len(ours) == 2 and ours <= deltacommits
    [(instant, operations, state)] = [tuple(r) for r in spark.sql(
        f"CALL run_compaction(op => 'run', table => '{name}')").collect()]
    assert state == "COMPLETED" and operations >= 1
    compacted = hudi_rs.snapshot(path)
    project = [c for c in compacted[0] if c != "_hoodie_file_name"]
    assert hudi_rs.project(compacted, project) == hudi_rs.project(after, project)
    assert hudi_rs.df_rows(spark.sql(f"SELECT * FROM {name}")) == compacted
    assert _props(path) == props


class _Model:
    """The expected rows (event-time ordering by ``ts``): key -> (name, region, ts)."""

    def __init__(self):
        self.rows: dict[int, tuple[str, str, int]] = {}

    def upsert(self, batch):
        for i, name, region, ts in batch:
            if i not in self.rows or self.rows[i][2] <= ts:
                self.rows[i] = (name, region, ts)

    def delete(self, keys):
        for i in keys:
            self.rows.pop(i, None)

    def expected(self):
        return sorted((i, *v) for i, v in self.rows.items())


DDL = "id int, name string, region string, ts long"


@pytest.mark.parametrize("version", [8, 9])
def test_hoodpy_created_table(spark, tmp_path, version):
    path = str(tmp_path / f"v{version}")
    table = HoodieTable.create(spark, path, table_name=f"mor_v{version}", record_key_fields=["id"],
                               partition_fields=["region"], precombine_field="ts", table_type="MERGE_ON_READ",
                               options={"hoodie.write.table.version": str(version), **NO_SMALL_FILES})
    props = _props(path)
    assert (props["hoodie.table.version"], props["hoodie.timeline.layout.version"]) == (str(version), "2")
    assert props["hoodie.table.type"] == "MERGE_ON_READ" and "hoodie.compaction.payload.class" not in props
    model = _Model()

    def step(op, batch):
        logs = _data_logs(path)
        if op == "delete":
            result = table.delete(spark.createDataFrame(batch, DDL))
            model.delete(r[0] for r in batch)
        else:
            result = table.upsert(spark.createDataFrame(batch, DDL))
            model.upsert(batch)
        rows = _same_as_hudi_rs(table, path)
        assert sorted((r["id"], r["name"], r["region"], r["ts"]) for r in rows) == model.expected()
        return result, logs

    step("upsert", [(1, "a", "x", 1), (2, "b", "y", 1), (3, "c", "x", 1), (4, "d", "y", 1)])
    props = _props(path)  # the first write recorded the create schema; nothing changes after it
    assert props["hoodie.table.version"] == str(version)
    result, logs = step("upsert", [(1, "a2", "x", 2), (2, "stale", "y", 0), (5, "e", "y", 2)])
    _check_deltacommit_logs(table, path, result.instant_time, logs)
    result, logs = step("delete", [(3, "c", "x", 9)])
    _check_deltacommit_logs(table, path, result.instant_time, logs)
    result, logs = step("upsert", [(1, "a3", "x", 3)])  # a second log file in the same slice
    _check_deltacommit_logs(table, path, result.instant_time, logs)

    # A write while the compaction is pending lands in a log that joins the compaction's slice by completion
    # time: the compaction leaves it, and reads see it over the new base file.
    plan = table.compaction.schedule()
    result, logs = step("upsert", [(4, "d2", "y", 5), (1, "a4", "x", 4)])
    _check_deltacommit_logs(table, path, result.instant_time, logs)
    assert not {n for op in plan.operations for n in op.delta_file_names} & {Path(p).name for p in _data_logs(path) - logs}
    table.compaction.execute(plan.instant_time)
    rows = _same_as_hudi_rs(table, path)
    assert sorted((r["id"], r["name"], r["region"], r["ts"]) for r in rows) == model.expected()
    pending_write_rows = {r["id"]: r for r in rows if r["id"] in (1, 4)}
    assert {r[COMMIT_TIME] for r in pending_write_rows.values()} == {result.instant_time}
    result, logs = step("upsert", [(2, "b2", "y", 7), (6, "f", "x", 7)])
    _check_deltacommit_logs(table, path, result.instant_time, logs)
    _compact(table, path)
    _same_as_hudi_rs(table, path)

    # Rolling back the last deltacommit deletes the log file it wrote; the rows are those before it.
    before_last = _same_as_hudi_rs(table, path)
    result, logs = step("upsert", [(2, "b3", "y", 8)])
    [new_log] = _data_logs(path) - logs
    last = table.timeline.last_completed_commit()
    assert last.timestamp == result.instant_time
    rollbacks = RollbackService.of(table)
    rollback = rollbacks.execute(rollbacks.schedule(target=last))
    assert not Path(path, new_log).exists()
    assert _same_as_hudi_rs(table, path) == before_last
    assert Path(path, ".hoodie", "timeline", f"{rollback.timestamp}_{rollback.completed_at}.rollback").exists()
    assert _props(path) == props
    assert {r[PARTITION_PATH] for r in before_last} == {"x", "y"}

"""CALL run_clean / show_cleans / show_cleans_metadata / create_savepoint / show_savepoints / delete_savepoint /
rollback_to_savepoint / archive_commits: columns, values and error paths. Expected values come from the
storage listing and the instant files, not from hoodpy's models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from hoodpy.errors import InvalidConfigError, ProcedureArgumentError, SavepointError
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id int, name string, ts long, city string"
S, L, I, B = StringType(), LongType(), IntegerType(), BooleanType()
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy"}


def schema_of(*columns):
    return StructType([StructField(n, t, True) for n, t in columns])


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def parquet(path):
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*.parquet") if ".hoodie" not in p.parts)


@pytest.fixture
def trips(hoodpy_spark, database, tmp_path, request):
    """Four commits on one file group of partition sf: insert, then three upserts of key 1."""
    spark = hoodpy_spark
    path = str(tmp_path / "trips")
    table = HoodieTable.create(spark, path, table_name="trips", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts", options=OPTIONS)
    times = [table.insert(spark.createDataFrame([(1, "a", 1, "sf"), (2, "b", 1, "sf")], DDL)).instant_time]
    for ts in (2, 3, 4):
        times.append(table.upsert(spark.createDataFrame([(1, f"a{ts}", ts, "sf")], DDL)).instant_time)
    name = f"{database}.trips_{request.node.name[:20].replace('[', '_').replace(']', '_')}"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    yield {"name": name, "path": path, "times": times, "table": table}
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_clean_savepoint_and_archive_procedures(hoodpy_spark, trips):
    spark, name, path, times = hoodpy_spark, trips["name"], trips["path"], trips["times"]
    files_before = parquet(path)
    assert len(files_before) == 4

    df = spark.sql(f"CALL run_clean(table => '{name}', retain_commits => 1)")
    assert df.schema == schema_of(("start_clean_time", S), ("time_taken_in_millis", L), ("total_files_deleted", I),
                                  ("earliest_commit_to_retain", S), ("bootstrap_part_metadata", S), ("version", I))
    [row] = [tuple(r) for r in df.collect()]
    clean_time = row[0]
    # Earliest retained: the last commit; the version before it stays, the two older ones go.
    assert re.fullmatch(r"\d{17}", clean_time) and clean_time > times[-1]
    assert row[1] >= 0 and row[2:] == (2, times[3], "{}", 2)
    assert parquet(path) == [f for f in files_before if f.endswith((f"{times[2]}.parquet", f"{times[3]}.parquet"))]
    assert (Path(path) / ".hoodie" / f"{clean_time}.clean").exists()
    assert call(spark, f"CALL run_clean(table => '{name}', retain_commits => 1)") == []  # nothing new

    df = spark.sql(f"CALL show_cleans(table => '{name}')")
    assert df.schema == schema_of(("clean_time", S), ("state_transition_time", S), ("action", S),
                                  ("start_clean_time", S), ("time_taken_in_millis", L), ("total_files_deleted", I),
                                  ("earliest_commit_to_retain", S), ("last_completed_commit_timestamp", S),
                                  ("version", I))
    [shown] = [tuple(r) for r in df.collect()]
    assert shown[0] == clean_time and shown[1] >= clean_time and shown[2:4] == ("clean", clean_time)
    assert shown[5:] == (2, times[3], times[3], 2)
    [meta] = call(spark, f"CALL show_cleans_metadata(table => '{name}', limit => 5)")
    assert meta[:3] == (clean_time, shown[1], "clean")
    assert meta[3:10] == (clean_time, "city=sf" if "city=sf" in files_before[0] else "sf", "KEEP_LATEST_COMMITS",
                          2, 2, 0, False)
    assert meta[11] == 2

    assert call(spark, f"CALL create_savepoint(table => '{name}', commit_time => '{times[3]}', user => 'ops')") == \
        [(True,)]
    assert spark.sql(f"CALL show_savepoints(table => '{name}')").schema == schema_of(("savepoint_time", S))
    assert call(spark, f"CALL show_savepoints(table => '{name}')") == [(times[3],)]
    assert (Path(path) / ".hoodie" / f"{times[3]}.savepoint").exists()
    table = trips["table"]
    table.upsert(spark.createDataFrame([(1, "later", 9, "sf"), (3, "c", 9, "sf")], DDL))
    assert call(spark, f"CALL rollback_to_savepoint(table => '{name}', instant_time => '{times[3]}')") == [(True,)]
    assert sorted((r.id, r.name) for r in table.read().collect()) == [(1, "a4"), (2, "b")]
    assert call(spark, f"CALL delete_savepoint(table => '{name}', instant_time => '{times[3]}')") == [(True,)]
    assert call(spark, f"CALL show_savepoints(path => '{path}')") == []

    for ts in (5, 6):
        table.upsert(spark.createDataFrame([(1, f"a{ts}", ts, "sf")], DDL))
    call(spark, f"CALL run_clean(table => '{name}', retain_commits => 1)")
    active_before = len(table.timeline.completed_commits())
    written = {}  # commit time -> (files added, records written), from the commit files about to be archived
    for t in times:
        stats = [st for sts in json.loads((Path(path) / ".hoodie" / f"{t}.commit").read_text())[
            "partitionToWriteStats"].values() for st in sts]
        written[t] = (sum(st["prevCommit"] == "null" for st in stats), sum(st["numWrites"] for st in stats))
    df = spark.sql(f"CALL archive_commits(path => '{path}', min_commits => 2, max_commits => 3, retain_commits => 1)")
    assert df.schema == schema_of(("result", I)) and [tuple(r) for r in df.collect()] == [(0,)]
    assert active_before > 3 and len(table.timeline.completed_commits()) == 2
    assert list((Path(path) / ".hoodie" / "archived").glob(".commits_.archive.*"))
    assert sorted((r.id, r.name) for r in table.read().collect()) == [(1, "a6"), (2, "b")]
    timeline = call(spark, f"CALL show_timeline(path => '{path}', showArchived => true, limit => 100)")
    archived_rows = [r for r in timeline if r[6] == "ARCHIVED"]
    assert sorted(r[0] for r in archived_rows) == times
    assert all(r[1:3] == ("commit", "COMPLETED") and r[5] is not None for r in archived_rows)
    assert all(r[6] == "ACTIVE" for r in call(spark, f"CALL show_timeline(path => '{path}', limit => 100)"))
    window = "start_ts => '20000101000000000', end_ts => '29991231235959999'"
    archived = call(spark, f"CALL show_archived_commits(path => '{path}', {window})")
    assert [r[0] for r in archived] == list(reversed(times))  # the four commits before the restore point
    assert [(r[3], r[6]) for r in archived] == [written[t] for t in reversed(times)]
    assert call(spark, f"CALL show_archived_commits(path => '{path}')") == []  # default window ends a day ago
    meta = call(spark, f"CALL show_archived_commits_metadata(path => '{path}', limit => 20, {window})")
    assert [(r[0], r[2], r[6]) for r in meta] == [(t, "commit", written[t][1]) for t in reversed(times)]


def test_procedure_errors_leave_the_table_unchanged(hoodpy_spark, trips):
    spark, name, path, times = hoodpy_spark, trips["name"], trips["path"], trips["times"]
    before = sorted(str(p) for p in Path(path).rglob("*"))
    with pytest.raises(InvalidConfigError, match="hoodie.cleaner.policy"):
        spark.sql(f"CALL run_clean(table => '{name}', clean_policy => 'KEEP_NOTHING')")
    with pytest.raises(InvalidConfigError, match="hoodie.cleaner.commits.retained"):
        spark.sql(f"CALL run_clean(table => '{name}', retain_commits => 0)")
    with pytest.raises(ProcedureArgumentError, match="retain_commits"):
        spark.sql(f"CALL run_clean(table => '{name}', retain_commits => 'many')")
    with pytest.raises(ProcedureArgumentError, match="options"):
        spark.sql(f"CALL run_clean(table => '{name}', options => 'hoodie.cleaner.commits.retained')")
    with pytest.raises(ProcedureArgumentError, match="unknown argument 'retained'"):
        spark.sql(f"CALL run_clean(table => '{name}', retained => 1)")
    with pytest.raises(SavepointError, match="not a completed commit"):
        spark.sql(f"CALL create_savepoint(table => '{name}', commit_time => '20200101000000000')")
    with pytest.raises(SavepointError, match="No savepoint at 20200101000000000"):
        spark.sql(f"CALL delete_savepoint(table => '{name}', instant_time => '20200101000000000')")
    with pytest.raises(SavepointError, match=f"No savepoint at {times[0]}"):
        spark.sql(f"CALL rollback_to_savepoint(table => '{name}', instant_time => '{times[0]}')")
    with pytest.raises(ProcedureArgumentError, match="missing required argument 'instant_time'"):
        spark.sql(f"CALL rollback_to_savepoint(table => '{name}')")
    with pytest.raises(ProcedureArgumentError, match="min_commits"):
        spark.sql(f"CALL archive_commits(table => '{name}', min_commits => 5, retain_commits => 10)")
    with pytest.raises(ProcedureArgumentError, match="max_commits"):
        spark.sql(f"CALL archive_commits(table => '{name}', min_commits => 20, max_commits => 20)")
    assert sorted(str(p) for p in Path(path).rglob("*")) == before

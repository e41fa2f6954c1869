"""Each procedure's output columns and values on a small table built with HoodieTable (three commits), by
catalog name and by path, and their error paths. Expected values are computed from the commit files' JSON
and the storage listing directly, not through hoodpy's models."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest
from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType

from sql_test_helpers import unzip_java_sample
from hoodpy.errors import InvalidInstantError, TableNotFoundError
from hoodpy.errors import (
    CallSyntaxError,
    NotAHoodieTableError,
    ProcedureArgumentError,
    UnknownProcedureError,
    UnknownTableError,
)
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts long, city string"


@pytest.fixture(scope="module")
def trips(hoodpy_spark, database, tmp_path_factory):
    """A partitioned table with three commits: insert 4 rows, upsert (1 update + 1 insert), delete 1."""
    spark = hoodpy_spark
    path = str(tmp_path_factory.mktemp("procedures") / "trips")
    table = HoodieTable.create(spark, path, table_name="trips", record_key_fields=["id"],
                               partition_fields=["city"], precombine_field="ts")
    c1 = table.insert(spark.createDataFrame(
        [(1, "a", 1, "sf"), (2, "b", 1, "sf"), (3, "c", 1, "nyc"), (4, "d", 1, "nyc")], SCHEMA))
    c2 = table.upsert(spark.createDataFrame([(1, "A", 2, "sf"), (5, "e", 2, "la")], SCHEMA))
    c3 = table.delete(spark.createDataFrame([(3, "c", 1, "nyc")], SCHEMA))
    name = f"{database}.trips"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")  # adopts the existing table
    return {"name": name, "path": path, "instants": [c1.instant_time, c2.instant_time, c3.instant_time]}


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def commit_json(path, instant):
    return json.loads((Path(path) / ".hoodie" / f"{instant}.commit").read_text())


def stats_of(meta):
    return [(p, s) for p, stats in meta["partitionToWriteStats"].items() for s in stats]


def schema_of(*columns):
    return StructType([StructField(n, t, True) for n, t in columns])


S, L, D, I = StringType(), LongType(), DoubleType(), IntegerType()


# -- show_commits -------------------------------------------------------------------------------------
def test_show_commits(hoodpy_spark, trips):
    df = hoodpy_spark.sql(f"CALL show_commits(table => '{trips['name']}')")
    assert df.schema == schema_of(
        ("commit_time", S), ("state_transition_time", S), ("action", S), ("total_bytes_written", L),
        ("total_files_added", L), ("total_files_updated", L), ("total_partitions_written", L),
        ("total_records_written", L), ("total_update_records_written", L), ("total_errors", L))
    got = [tuple(r) for r in df.collect()]
    assert [r[0] for r in got] == list(reversed(trips["instants"]))
    for row in got:
        meta = stats_of(commit_json(trips["path"], row[0]))
        assert row[2] == "commit"
        assert re.fullmatch(r"\d{17}", row[1]) and row[1] >= row[0]
        assert row[3:] == (
            sum(s["totalWriteBytes"] for _, s in meta),
            sum(1 for _, s in meta if s["prevCommit"] == "null"),
            sum(1 for _, s in meta if s["prevCommit"] != "null"),
            len({p for p, _ in meta}),
            sum(s["numWrites"] for _, s in meta),
            sum(s["numUpdateWrites"] for _, s in meta),
            0,
        )
    insert = got[-1]
    assert insert[4:10] == (2, 0, 2, 4, 0, 0)


def test_show_commits_by_path_limit_and_positional_arguments(hoodpy_spark, trips):
    by_name = call(hoodpy_spark, f"CALL show_commits(table => '{trips['name']}')")
    assert call(hoodpy_spark, f"CALL system.show_commits(path => '{trips['path']}')") == by_name
    assert call(hoodpy_spark, f"CALL show_commits('{trips['name']}', 1)") == by_name[:1]
    assert call(hoodpy_spark, f"CALL SHOW_COMMITS(LIMIT => 0, table => '{trips['name']}')") == []


def test_show_commits_metadata(hoodpy_spark, trips):
    df = hoodpy_spark.sql(f"CALL show_commits_metadata(table => '{trips['name']}', limit => 100)")
    assert [f.name for f in df.schema.fields] == [
        "commit_time", "state_transition_time", "action", "partition", "file_id", "previous_commit",
        "num_writes", "num_inserts", "num_deletes", "num_update_writes", "total_errors", "total_log_blocks",
        "total_corrupt_log_blocks", "total_rollback_blocks", "total_log_records",
        "total_updated_records_compacted", "total_bytes_written"]
    got = [tuple(r) for r in df.collect()]
    expected = [
        (instant, "commit", p, s["fileId"], s["prevCommit"], s["numWrites"], s["numInserts"], s["numDeletes"],
         s["numUpdateWrites"], 0, 0, 0, 0, 0, 0, s["totalWriteBytes"])
        for instant in reversed(trips["instants"]) for p, s in stats_of(commit_json(trips["path"], instant))
    ]
    assert [r[:1] + r[2:] for r in got] == expected
    assert len(call(hoodpy_spark, f"CALL show_commits_metadata(table => '{trips['name']}', limit => 2)")) == 2


# -- one commit -----------------------------------------------------------------------------------------
def test_show_commit_files_partitions_and_write_stats(hoodpy_spark, trips):
    upsert = trips["instants"][1]
    meta = stats_of(commit_json(trips["path"], upsert))
    files = call(hoodpy_spark, f"CALL show_commit_files(table => '{trips['name']}', instant_time => '{upsert}')")
    assert files == [("commit", p, s["fileId"], s["prevCommit"], s["numUpdateWrites"], s["numWrites"],
                      s["totalWriteBytes"], s["totalWriteErrors"], s["fileSizeInBytes"]) for p, s in meta]
    assert {(f[1], f[3] == "null") for f in files} == {("city=sf", False), ("city=la", True)} or \
        {(f[1], f[3] == "null") for f in files} == {("sf", False), ("la", True)}

    partitions = call(hoodpy_spark, f"CALL show_commit_partitions('{trips['name']}', 10, '{upsert}')")
    by_partition = {r[1]: r for r in partitions}
    sf = next(p for p in by_partition if p.endswith("sf"))
    la = next(p for p in by_partition if p.endswith("la"))
    assert by_partition[sf][2:6] == (0, 1, 0, 1)  # files added, updated, records inserted, updated
    assert by_partition[la][2:6] == (1, 0, 1, 0)

    stats = hoodpy_spark.sql(f"CALL show_commit_write_stats(table => '{trips['name']}', instant_time => {upsert})")
    assert stats.schema == schema_of(("action", S), ("total_bytes_written", L), ("total_records_written", L),
                                     ("avg_record_size", L))
    written = sum(s["totalWriteBytes"] for _, s in meta)
    records = sum(s["numWrites"] for _, s in meta)
    assert [tuple(r) for r in stats.collect()] == [("commit", written, records, math.ceil(written / records))]


def test_unknown_instant_is_named(hoodpy_spark, trips):
    with pytest.raises(InvalidInstantError, match="Commit 20000101000000000 not found"):
        hoodpy_spark.sql(f"CALL show_commit_files(table => '{trips['name']}', instant_time => '20000101000000000')")


# -- timeline ------------------------------------------------------------------------------------------
def test_show_timeline(hoodpy_spark, trips):
    df = hoodpy_spark.sql(f"CALL show_timeline(table => '{trips['name']}')")
    assert [f.name for f in df.schema.fields] == [
        "instant_time", "action", "state", "requested_time", "inflight_time", "completed_time", "timeline_type",
        "rollback_info"]
    got = [tuple(r) for r in df.collect()]
    assert [r[0] for r in got] == list(reversed(trips["instants"]))
    for r in got:
        assert r[1:3] == ("commit", "COMPLETED") and r[6] == "ACTIVE" and r[7] is None
        assert all(re.fullmatch(r"\d\d-\d\d \d\d:\d\d:\d\d", t) for t in r[3:6])
    first, second, third = trips["instants"]
    assert call(hoodpy_spark, f"CALL show_timeline(table => '{trips['name']}', limit => 1)") == got[:1]
    ranged = call(hoodpy_spark, f"CALL show_timeline(path => '{trips['path']}', startTime => '{second}', "
                                f"endTime => '{third}', limit => 1)")
    assert [r[0] for r in ranged] == [third, second]  # both bounds given: the limit does not apply
    filtered = call(hoodpy_spark, f"CALL show_timeline(table => '{trips['name']}', "
                                  f"filter => \"instant_time = '{first}' AND state = 'COMPLETED'\")")
    assert [r[0] for r in filtered] == [first]


def test_show_timeline_shows_pending_instants(hoodpy_spark, trips, tmp_path):
    pending = Path(trips["path"]) / ".hoodie" / "29990101000000000.commit.requested"
    pending.write_bytes(b"")
    try:
        top = call(hoodpy_spark, f"CALL show_timeline(table => '{trips['name']}', limit => 1)")[0]
        assert top[:3] == ("29990101000000000", "commit", "REQUESTED") and top[4] is None and top[5] is None
    finally:
        pending.unlink()


def test_bad_filter_is_an_argument_error(hoodpy_spark, trips):
    with pytest.raises(ProcedureArgumentError, match="'filter' is not a valid predicate"):
        hoodpy_spark.sql(f"CALL show_timeline(table => '{trips['name']}', filter => 'no_such_column = 1')")


# -- file-system view ----------------------------------------------------------------------------------
def _base_files(path):
    out = []
    for root, _, files in os.walk(path):
        if "/.hoodie" in root:
            continue
        for f in files:
            if f.endswith(".parquet"):
                rel = os.path.relpath(os.path.join(root, f), path)
                partition = os.path.dirname(rel)
                out.append((partition, f.split("_")[0], f.rsplit("_", 1)[1].split(".")[0], os.path.getsize(
                    os.path.join(root, f))))
    return out


def test_show_fsview_all_and_latest(hoodpy_spark, trips):
    files = _base_files(trips["path"])
    every = hoodpy_spark.sql(f"CALL show_fsview_all(table => '{trips['name']}', limit => 100)")
    assert [f.name for f in every.schema.fields] == [
        "partition", "file_id", "base_instant", "data_file", "data_file_size", "num_delta_files",
        "total_delta_file_size", "delta_files"]
    rows = [tuple(r) for r in every.collect()]
    assert sorted((r[0], r[1], r[2], r[4]) for r in rows) == sorted(files)
    assert all(r[3].startswith(trips["path"]) and r[3].endswith(".parquet") and r[5:] == (0, 0, "[]")
               for r in rows)

    latest = hoodpy_spark.sql(f"CALL show_fsview_latest(table => '{trips['name']}', limit => 100)")
    assert len(latest.schema.fields) == 13 and latest.schema["delta_to_base_radio_compaction_scheduled"].dataType == D
    newest = {}
    for partition, file_id, instant, size in files:
        if (partition, file_id) not in newest or newest[(partition, file_id)][0] < instant:
            newest[(partition, file_id)] = (instant, size)
    assert sorted((r[0], r[1], r[2], r[4]) for r in latest.collect()) == sorted(
        (p, f, i, s) for (p, f), (i, s) in newest.items())
    assert {tuple(r)[5:] for r in latest.collect()} == {(0, 0, 0, 0, 0.0, 0.0, "[]", "[]")}


def test_show_fsview_as_of_an_instant(hoodpy_spark, trips):
    first, second, _ = trips["instants"]
    name = trips["name"]
    before_second = call(hoodpy_spark, f"CALL show_fsview_all(table => '{name}', max_instant => '{second}')")
    assert {r[2] for r in before_second} == {first}
    upto_second = call(hoodpy_spark, f"CALL show_fsview_all(table => '{name}', max_instant => '{second}', "
                                     "include_max => true, limit => 100)")
    assert {r[2] for r in upto_second} == {first, second}
    latest = call(hoodpy_spark, f"CALL show_fsview_latest(table => '{name}', max_instant => '{first}', "
                                "include_max => true)")
    assert {r[2] for r in latest} == {first}
    sf_only = call(hoodpy_spark, f"CALL show_fsview_latest(table => '{name}', path_regex => '*sf')")
    assert {r[0][-2:] for r in sf_only} == {"sf"}
    with pytest.raises(ProcedureArgumentError, match="path_regex and partition_path cannot be used together"):
        hoodpy_spark.sql(f"CALL show_fsview_latest(table => '{name}', path_regex => '*', partition_path => '*')")


# -- stats --------------------------------------------------------------------------------------------
def test_stats_file_sizes(hoodpy_spark, trips):
    df = hoodpy_spark.sql(f"CALL stats_file_sizes(table => '{trips['name']}', limit => 100)")
    assert df.schema == schema_of(("commit_time", S), ("min", L), ("10th", D), ("50th", D), ("avg", D),
                                  ("95th", D), ("max", L), ("num_files", I), ("std_dev", D))
    got = {r[0]: tuple(r) for r in df.collect()}
    files = _base_files(trips["path"])
    assert set(got) == {f[2] for f in files} | {"ALL"}
    everything = got["ALL"]
    sizes = [f[3] for f in files]
    assert everything[1] == min(sizes) and everything[6] == max(sizes) and everything[7] == len(sizes)
    assert everything[4] == pytest.approx(sum(sizes) / len(sizes))
    for instant in trips["instants"]:
        assert got[instant][7] == sum(1 for f in files if f[2] == instant)


def test_stats_wa(hoodpy_spark, trips):
    df = hoodpy_spark.sql(f"CALL stats_wa(table => '{trips['name']}')")
    assert df.schema == schema_of(("commit_time", S), ("total_upserted", L), ("total_written", L),
                                  ("write_amplification_factor", S))
    got = [tuple(r) for r in df.collect()]
    assert [r[0] for r in got] == [*trips["instants"], "Total"]
    per_commit = []
    for instant in trips["instants"]:
        meta = stats_of(commit_json(trips["path"], instant))
        per_commit.append((sum(s["numUpdateWrites"] for _, s in meta), sum(s["numWrites"] for _, s in meta)))
    assert [r[1:3] for r in got] == [*per_commit, tuple(map(sum, zip(*per_commit, strict=True)))]
    upserted, written = per_commit[1]
    assert got[1][3] == f"{written / upserted:.2f}".lstrip("0")
    assert got[0][3] == "0"  # no updates: Hudi prints 0


# -- properties and help -------------------------------------------------------------------------------
def test_show_table_properties(hoodpy_spark, trips):
    rows = call(hoodpy_spark, f"CALL show_table_properties(table => '{trips['name']}', limit => 100)")
    props = dict(rows)
    assert props["hoodie.table.name"] == "trips" and props["hoodie.table.recordkey.fields"] == "id"
    assert [k for k, _ in rows] == sorted(props)
    assert len(call(hoodpy_spark, f"CALL show_table_properties(path => '{trips['path']}')")) == 10
    filtered = call(hoodpy_spark, f"CALL show_table_properties(table => '{trips['name']}', limit => 100, "
                                  "filter => \"key LIKE 'hoodie.table.%key%'\")")
    assert {k for k, _ in filtered} == {"hoodie.table.recordkey.fields", "hoodie.table.keygenerator.class"}


def test_help(hoodpy_spark):
    (text,), = call(hoodpy_spark, "CALL help()")
    assert text.startswith("synopsis\n\tcall [command]")
    for name in ("show_commits", "show_fsview_latest", "stats_wa", "help"):
        assert f"\t{name}\t" in text
    (detail,), = call(hoodpy_spark, "CALL help(cmd => 'show_commits')")
    assert detail.startswith("parameters:\n")
    assert "\t" + "table".ljust(30) + "\t" + "string".ljust(30) + "\t" + "None".ljust(30) + "\t" + "true".ljust(30) \
        in detail
    assert "\t" + "limit".ljust(30) + "\t" + "integer".ljust(30) + "\t" + "10".ljust(30) in detail
    assert "\t" + "total_errors".ljust(30) + "\t" + "long".ljust(30) in detail
    with pytest.raises(UnknownProcedureError, match="show_comits"):
        hoodpy_spark.sql("CALL help(cmd => 'show_comits')")


# -- a table Java Hudi wrote (replacecommit) ----------------------------------------------------------
def test_procedures_on_a_java_written_table_with_a_replacecommit(hoodpy_spark, tmp_path):
    path = str(unzip_java_sample("v6_simplekeygen_nonhivestyle_overwritetable", tmp_path))
    commits = call(hoodpy_spark, f"CALL show_commits(path => '{path}')")
    assert commits[0][2] == "replacecommit"
    live = {r[1] for r in call(hoodpy_spark, f"CALL show_fsview_latest(path => '{path}', limit => 1000)")}
    read = {r[0].split("_")[0] for r in HoodieTable.for_path(hoodpy_spark, path).read()
            .select("_hoodie_file_name").distinct().collect()}
    assert live == read
    replaced = {r[1] for r in call(hoodpy_spark, f"CALL show_fsview_all(path => '{path}', limit => 1000)")}
    assert replaced == live  # replaced file groups are out of the view, in every slice


# -- errors -------------------------------------------------------------------------------------------
def test_errors_name_the_problem(hoodpy_spark, database, trips):
    spark = hoodpy_spark
    with pytest.raises(UnknownProcedureError, match="Did you mean 'show_commits'"):
        spark.sql(f"CALL show_comits(table => '{trips['name']}')")
    with pytest.raises(ProcedureArgumentError, match="missing required argument 'table'"):
        spark.sql("CALL show_commits()")
    with pytest.raises(ProcedureArgumentError, match="argument 'limit' must be integer"):
        spark.sql(f"CALL show_commits(table => '{trips['name']}', limit => 'many')")
    with pytest.raises(CallSyntaxError):
        spark.sql("CALL show_commits(table => ")
    with pytest.raises(UnknownTableError, match=f"'{database}.nope' not found"):
        spark.sql(f"CALL show_commits(table => '{database}.nope')")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {database}.plain (id INT) USING parquet")
    with pytest.raises(NotAHoodieTableError, match=f"'{database}.plain' is not a hoodpy table"):
        spark.sql(f"CALL show_commits(table => '{database}.plain')")
    with pytest.raises(TableNotFoundError):
        spark.sql("CALL show_commits(path => '/nonexistent/hoodpy/table')")


# -- every SQL-layer procedure: unknown table, unknown argument (signature listed) ------------------------
SQL_LAYER_PROCEDURES = [
    "show_commits", "show_commits_metadata", "show_commit_files", "show_commit_partitions",
    "show_commit_write_stats", "show_timeline", "show_fsview_all", "show_fsview_latest", "stats_file_sizes",
    "stats_wa", "show_table_properties", "run_clustering", "show_clustering", "rollback_to_instant",
]


@pytest.mark.parametrize("name", SQL_LAYER_PROCEDURES)
def test_every_procedure_names_unknown_tables_and_arguments(hoodpy_spark, database, name):
    from sql_ext.procedures import get_procedure

    procedure = get_procedure(name)
    required = [f"{p.name} => '20200101000000000'" for p in procedure.parameters
                if p.is_required and p.name != "table"]
    extra = "".join(f", {a}" for a in required)
    with pytest.raises(UnknownTableError, match=f"'{database}.missing' not found"):
        hoodpy_spark.sql(f"CALL {name}(table => '{database}.missing'{extra})")
    with pytest.raises(ProcedureArgumentError, match=rf"unknown argument 'bogus'.*Signature: {name}\(table => "):
        hoodpy_spark.sql(f"CALL {name}(table => '{database}.missing', bogus => 1{extra})")

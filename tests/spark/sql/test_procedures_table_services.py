"""run_clustering, show_clustering and rollback_to_instant through CALL: output columns and values, what they
do to the table (rows, files, timeline), and their error paths (which leave the table as it was)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

from hoodpy.errors import ProcedureArgumentError, RollbackError, UnknownTableError
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts long, city string"
SEPARATE_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every write opens new file groups
CLUSTERING_OUTPUT = StructType([StructField("timestamp", StringType()), StructField("input_group_size", IntegerType()),
                                StructField("state", StringType()), StructField("involved_partitions", StringType())])
_names = itertools.count()


@pytest.fixture
def small_files(hoodpy_spark, database, tmp_path):
    """A table partitioned by city with two commits of small files: 2 base files in sf, 2 in nyc."""
    spark = hoodpy_spark
    path = str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts", hive_style_partitioning=True)
    table.insert(spark.createDataFrame([(1, "a", 1, "sf"), (2, "b", 1, "nyc")], SCHEMA), options=SEPARATE_FILES)
    table.insert(spark.createDataFrame([(3, "c", 1, "sf"), (4, "d", 1, "nyc")], SCHEMA), options=SEPARATE_FILES)
    name = f"{database}.t{next(_names)}"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    return {"name": name, "path": path, "table": table}


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def data(spark, name):
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, name, ts, city FROM {name}").collect())


def base_files(path, partition):
    return sorted(p.name for p in (Path(path) / partition).glob("*.parquet"))


def timeline_files(path):
    return sorted(p.name for p in (Path(path) / ".hoodie").iterdir() if p.is_file() and p.name[:1].isdigit())


ROWS = [(1, "a", 1, "sf"), (2, "b", 1, "nyc"), (3, "c", 1, "sf"), (4, "d", 1, "nyc")]


# -- run_clustering / show_clustering -----------------------------------------------------------------
def test_run_clustering_schedules_and_executes_by_default(hoodpy_spark, small_files):
    spark, name, path = hoodpy_spark, small_files["name"], small_files["path"]
    df = spark.sql(f"CALL run_clustering(table => '{name}', order => 'name', show_involved_partition => true)")
    assert df.schema == CLUSTERING_OUTPUT
    (row,) = [tuple(r) for r in df.collect()]
    instant, groups, state, partitions = row
    assert (groups, state, partitions) == (2, "COMPLETED", "city=nyc,city=sf")
    assert f"{instant}.replacecommit" in timeline_files(path)
    assert data(spark, name) == sorted(ROWS)
    # Each partition's two small files became one, written by the clustering instant.
    for partition in ("city=sf", "city=nyc"):
        latest = [f for f in base_files(path, partition) if instant in f]
        assert len(latest) == 1
    assert call(spark, f"CALL show_clustering(table => '{name}')") == [(instant, 2, "COMPLETED", "*")]


def test_schedule_then_execute_the_named_instant(hoodpy_spark, small_files):
    spark, name, path = hoodpy_spark, small_files["name"], small_files["path"]
    ((instant, groups, state, parts),) = call(spark, f"CALL run_clustering(table => '{name}', op => 'schedule')")
    assert (groups, state, parts) == (2, "REQUESTED", "*")
    assert f"{instant}.replacecommit.requested" in timeline_files(path)
    assert call(spark, f"CALL show_clustering(path => '{path}', show_involved_partition => true)") == \
        [(instant, 2, "REQUESTED", "city=nyc,city=sf")]
    # Named instants imply execute (op may be omitted); the positional form reaches the same parameters.
    assert call(spark, f"CALL run_clustering('{name}', NULL, NULL, NULL, false, NULL, NULL, NULL, '{instant}')") \
        == [(instant, 2, "COMPLETED", "*")]
    assert data(spark, name) == sorted(ROWS)
    # Nothing pending any more and every file is now one group per partition: a plain execute does nothing.
    assert call(spark, f"CALL run_clustering(table => '{name}', op => 'EXECUTE')") == []


def test_predicate_selects_partitions(hoodpy_spark, small_files):
    spark, name, path = hoodpy_spark, small_files["name"], small_files["path"]
    ((instant, groups, state, parts),) = call(spark, f"""
        CALL run_clustering(table => '{name}', predicate => "city = 'sf'", op => 'schedule',
                            show_involved_partition => true)""")
    assert (groups, state, parts) == (1, "REQUESTED", "city=sf")
    # A predicate no partition satisfies returns nothing and schedules nothing (as Hudi does).
    before = timeline_files(path)
    assert call(spark, f"CALL run_clustering(table => '{name}', predicate => \"city IN ('la')\")") == []
    assert timeline_files(path) == before
    # selected_partitions names partition paths; nyc's files are free, sf's are in the pending plan.
    rows = call(spark, f"CALL run_clustering(table => '{name}', selected_partitions => 'city=nyc', "
                       "op => 'scheduleAndExecute', show_involved_partition => true)")
    assert [r[1:] for r in rows] == [(1, "COMPLETED", "city=nyc")]
    assert call(spark, f"CALL show_clustering(table => '{name}', limit => 1)") == [(rows[0][0], 1, "COMPLETED", "*")]
    assert [r[2] for r in call(spark, f"CALL show_clustering(table => '{name}')")] == ["COMPLETED", "REQUESTED"]
    assert data(spark, name) == sorted(ROWS)


def test_run_clustering_errors_leave_the_table_unchanged(hoodpy_spark, database, small_files):
    spark, name, path = hoodpy_spark, small_files["name"], small_files["path"]
    before = timeline_files(path)
    cases = [
        (f"CALL run_clustering(table => '{name}', order => 'name,nope')", "'nope' does not exist"),
        (f"CALL run_clustering(table => '{name}', predicate => 'ts > 0')",
         "Only partition predicates are allowed: ts is not a partition column"),
        (f"CALL run_clustering(table => '{name}', predicate => 'city >')", "predicate"),
        (f"CALL run_clustering(table => '{name}', op => 'cluster')", "'op' must be schedule, execute"),
        (f"CALL run_clustering(table => '{name}', op => 'schedule', instants => '20240101000000000')",
         "specific instants only can be used in 'execute' op"),
        (f"CALL run_clustering(table => '{name}', instants => '20240101000000000')",
         "20240101000000000 do not exist as pending clustering plans"),
        (f"CALL run_clustering(table => '{name}', order_strategy => 'spiral')", "'order_strategy'"),
        (f"CALL run_clustering(table => '{name}', options => 'novalue')", "'options' must be 'key=value"),
        ("CALL run_clustering(op => 'schedule')", "missing required argument 'table'"),
        (f"CALL run_clustering(table => '{name}', limit => 'x')", "argument 'limit' must be integer"),
    ]
    for statement, message in cases:
        with pytest.raises(ProcedureArgumentError, match=message) as e:
            spark.sql(statement)
        assert "Signature: run_clustering(table => string" in str(e.value)
    with pytest.raises(UnknownTableError, match=f"'{database}.missing' not found"):
        spark.sql(f"CALL run_clustering(table => '{database}.missing')")
    with pytest.raises(ProcedureArgumentError, match="unknown argument 'partitions'"):
        spark.sql(f"CALL show_clustering(table => '{name}', partitions => 'x')")
    assert timeline_files(path) == before
    assert data(spark, name) == sorted(ROWS)


def test_options_argument_reaches_the_plan(hoodpy_spark, small_files):
    spark, name = hoodpy_spark, small_files["name"]
    # Hudi's options string: a group byte limit of 1 cuts every file into its own group.
    rows = call(spark, f"CALL run_clustering(table => '{name}', op => 'schedule', "
                       "options => 'hoodie.clustering.plan.strategy.max.bytes.per.group=1, "
                       "hoodie.clustering.plan.strategy.single.group.clustering.enabled=true')")
    assert [r[1:3] for r in rows] == [(4, "REQUESTED")]
    instant = rows[0][0]
    plan = small_files["table"].clustering.plan(instant)
    assert plan.num_input_slices == 4 and len(plan.input_groups) == 4


# -- rollback_to_instant --------------------------------------------------------------------------------
def test_rollback_to_instant(hoodpy_spark, small_files):
    spark, name, path, table = hoodpy_spark, small_files["name"], small_files["path"], small_files["table"]
    first, second = [i.timestamp for i in table.timeline.completed_commits()]
    df = spark.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '{second}')")
    assert df.schema == StructType([StructField("rollback_result", BooleanType())])
    assert [tuple(r) for r in df.collect()] == [(True,)]
    assert data(spark, name) == [(1, "a", 1, "sf"), (2, "b", 1, "nyc")]
    assert [i.timestamp for i in table.timeline.completed_commits()] == [first]
    assert any(f.endswith(".rollback") for f in timeline_files(path))
    assert not any(second in f for p in ("city=sf", "city=nyc") for f in base_files(path, p))
    # By path, positionally: the remaining commit.
    assert call(spark, f"CALL rollback_to_instant(NULL, '{first}', '{path}')") == [(True,)]
    assert data(spark, name) == []


def test_rollback_to_instant_errors(hoodpy_spark, database, small_files):
    spark, name, path, table = hoodpy_spark, small_files["name"], small_files["path"], small_files["table"]
    first, _ = [i.timestamp for i in table.timeline.completed_commits()]
    before = timeline_files(path)
    with pytest.raises(RollbackError, match=f"Only the latest completed commit can be rolled back; {first}"):
        spark.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '{first}')")
    with pytest.raises(RollbackError, match="20200101000000000 is not a completed commit"):
        spark.sql(f"CALL rollback_to_instant(table => '{name}', instant_time => '20200101000000000')")
    with pytest.raises(ProcedureArgumentError, match="missing required argument 'instant_time'.*"
                                                     r"Signature: rollback_to_instant\(table => string"):
        spark.sql(f"CALL rollback_to_instant(table => '{name}')")
    with pytest.raises(UnknownTableError):
        spark.sql(f"CALL rollback_to_instant(table => '{database}.missing', instant_time => '{first}')")
    assert timeline_files(path) == before
    assert data(spark, name) == sorted(ROWS)

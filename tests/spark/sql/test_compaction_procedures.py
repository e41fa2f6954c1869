"""run_compaction and show_compaction through CALL on Java-written merge-on-read tables: Hudi's parameters and
output columns, what they do to the table, and their errors (which leave the table as it was)."""

from __future__ import annotations

import itertools

import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from java_samples import MOR_V6, file_digests, unzip_sample
from tests.compat import hudi_rs
from hoodpy.errors import CompactionError, ProcedureArgumentError
from hoodpy.meta_fields import FILE_NAME

pytestmark = [pytest.mark.spark, pytest.mark.compat]

OUTPUT = StructType([StructField("timestamp", StringType()), StructField("operation_size", IntegerType()),
                     StructField("state", StringType())])
_names = itertools.count()


def _adopt(spark, database, path) -> str:
    name = f"{database}.mor{next(_names)}"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    return name


def _call(spark, statement) -> list[tuple]:
    return [tuple(r) for r in spark.sql(statement).collect()]


def _timeline(path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file() and p.name[:1].isdigit())


def test_run_compaction_run_and_show_compaction(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned_rollback", tmp_path)
    name = _adopt(spark, database, path)
    before = hudi_rs.snapshot(str(path))
    df = spark.sql(f"CALL run_compaction(op => 'run', table => '{name}')")
    assert df.schema == OUTPUT
    [(instant, operations, state)] = [tuple(r) for r in df.collect()]
    assert (operations, state) == (1, "COMPLETED")
    assert {f"{instant}.compaction.requested", f"{instant}.compaction.inflight", f"{instant}.commit"} <= set(_timeline(path))
    after = hudi_rs.snapshot(str(path))
    assert [{k: v for k, v in r.items() if k != FILE_NAME} for r in after] == \
        [{k: v for k, v in r.items() if k != FILE_NAME} for r in before]
    assert hudi_rs.df_rows(spark.sql(f"SELECT * FROM {name}")) == after == hudi_rs.read_optimized(str(path))
    shown = spark.sql(f"CALL show_compaction(table => '{name}')")
    assert shown.schema == OUTPUT and [tuple(r) for r in shown.collect()] == [(instant, 1, "COMPLETED")]
    assert _call(spark, f"CALL show_compaction(path => '{path}', limit => 0)") == []
    # Nothing left to compact: scheduleAndExecute schedules nothing and there is nothing pending.
    assert _call(spark, f"CALL run_compaction(op => 'scheduleAndExecute', path => '{path}')") == []


def test_schedule_then_execute_by_timestamp(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    path = unzip_sample(f"{MOR_V6}/v6_complexkeygen_hivestyle", tmp_path)
    name = _adopt(spark, database, path)
    [(instant, operations, state)] = _call(spark, f"CALL run_compaction(op => 'schedule', table => '{name}')")
    assert (operations, state) == (1, "REQUESTED")
    assert _call(spark, f"CALL show_compaction(table => '{name}')") == [(instant, 1, "REQUESTED")]
    # A schedule with nothing new lists the pending compactions, as Hudi's does.
    assert _call(spark, f"CALL run_compaction(op => 'schedule', table => '{name}')") == [(instant, 1, "REQUESTED")]
    assert _call(spark, f"CALL run_compaction('run', '{name}', timestamp => {instant})") == [(instant, 1, "COMPLETED")]
    assert hudi_rs.df_rows(spark.sql(f"SELECT * FROM {name}")) == hudi_rs.snapshot(str(path))


def test_bad_calls_leave_the_table_unchanged(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    path = unzip_sample(f"{MOR_V6}/v6_nonpartitioned", tmp_path / "mor")
    name = _adopt(spark, database, path)
    before = file_digests(path)
    with pytest.raises(ProcedureArgumentError, match="20250117083136333 is not a pending compaction .*none"):
        spark.sql(f"CALL run_compaction(op => 'run', table => '{name}', timestamp => 20250117083136333)")
    with pytest.raises(ProcedureArgumentError, match="20990101000000000 is not a pending compaction"):
        spark.sql(f"CALL run_compaction(op => 'execute', table => '{name}', instants => '20990101000000000')")
    with pytest.raises(ProcedureArgumentError, match="only can be used in 'execute' op"):
        spark.sql(f"CALL run_compaction(op => 'schedule', table => '{name}', instants => '20990101000000000')")
    with pytest.raises(ProcedureArgumentError, match="argument 'op' must be"):
        spark.sql(f"CALL run_compaction(op => 'compact', table => '{name}')")
    with pytest.raises(ProcedureArgumentError, match="missing required argument 'op'"):
        spark.sql(f"CALL run_compaction(table => '{name}')")
    with pytest.raises(ProcedureArgumentError, match="missing required argument 'table'"):
        spark.sql("CALL run_compaction(op => 'run')")
    with pytest.raises(ProcedureArgumentError, match="argument 'timestamp' must be long"):
        spark.sql(f"CALL run_compaction(op => 'run', table => '{name}', timestamp => 'soon')")
    assert file_digests(path) == before

    cow = unzip_sample("v6_nonpartitioned", tmp_path / "cow")
    cow_before = file_digests(cow)
    for statement in (f"CALL run_compaction(op => 'run', path => '{cow}')", f"CALL show_compaction(path => '{cow}')"):
        with pytest.raises(CompactionError, match="COPY_ON_WRITE table; compaction applies to MERGE_ON_READ"):
            spark.sql(statement)
    assert file_digests(cow) == cow_before

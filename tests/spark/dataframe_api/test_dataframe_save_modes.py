"""df.write.format("hoodpy"): Spark's save modes as Hudi's datasource treats them, Hudi's write options, and bad
input refused with the table left byte for byte as it was."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from hoodpy.errors import (
    InvalidConfigError,
    InvalidRecordError,
    MissingConfigError,
    PathHoldsOtherDataError,
    TableAlreadyExistsError,
    UnsupportedApiError,
)
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM, tree

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string, city string"
OPTIONS = {"hoodie.table.name": "modes", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
           **SMALL_BLOOM}


def batch(spark, *rows):
    return spark.createDataFrame(list(rows), DDL)


def read(spark, path, **options):
    return sorted(tuple(r) for r in spark.read.format("hoodpy").options(**options).load(path)
                  .select("id", "ts", "v", "city").collect())


def commits(path):
    return hudi_rs.completed_instants(path)


def test_errorifexists_ignore_append(api_spark, tmp_path):
    spark, path = api_spark, str(tmp_path / "t")
    batch(spark, (1, 1, "a", "sf"), (2, 1, "b", "la")).write.format("hoodpy").options(**OPTIONS).save(path)
    assert read(spark, path) == [(1, 1, "a", "sf"), (2, 1, "b", "la")]
    before = tree(path)
    with pytest.raises(TableAlreadyExistsError):  # Spark's default mode
        batch(spark, (3, 1, "c", "sf")).write.format("hoodpy").options(**OPTIONS).save(path)
    batch(spark, (3, 1, "c", "sf")).write.format("hoodpy").options(**OPTIONS).mode("ignore").save(path)
    assert tree(path) == before

    # append upserts (the default operation) and is what the table's keys and ordering field decide
    batch(spark, (1, 2, "A", "sf"), (2, 0, "old", "la"), (3, 1, "c", "sf")).write.format("hoodpy") \
        .options(**OPTIONS).mode("append").save(path)
    assert read(spark, path) == [(1, 2, "A", "sf"), (2, 1, "b", "la"), (3, 1, "c", "sf")]
    # options the table keeps need not be repeated; other operations by name
    batch(spark, (1, 9, "dup", "sf")).write.format("hoodpy").mode("append") \
        .option("hoodie.datasource.write.operation", "insert").save(path)
    assert sorted(r[:3] for r in read(spark, path)) == [(1, 2, "A"), (1, 9, "dup"), (2, 1, "b"), (3, 1, "c")]
    assert len(commits(path)) == 3
    assert hudi_rs.snapshot_tuples(path, ["id", "ts", "v", "city"]) == read(spark, path)


def test_append_and_ignore_create_a_missing_table_with_partition_by(api_spark, tmp_path):
    spark = api_spark
    options = {k: v for k, v in OPTIONS.items() if k != "hoodie.datasource.write.partitionpath.field"}
    for mode in ("append", "ignore"):
        path = str(tmp_path / mode)
        batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**options).mode(mode) \
            .option("hoodie.datasource.write.hive_style_partitioning", "true").partitionBy("city").save(path)
        table = HoodieTable.for_path(spark, path)
        assert table.keygen.partition_fields == ("city",) and table.keygen.hive_style_partitioning
        assert (tmp_path / mode / "city=sf").is_dir()
        assert read(spark, path) == [(1, 1, "a", "sf")]


def test_overwrite_of_the_same_table_is_one_replacecommit(api_spark, tmp_path):
    spark, path = api_spark, str(tmp_path / "t")
    batch(spark, (1, 1, "a", "sf"), (2, 1, "b", "la")).write.format("hoodpy").options(**OPTIONS) \
        .mode("overwrite").save(path)
    first = commits(path)
    batch(spark, (3, 1, "c", "ny"), (3, 2, "C", "ny")).write.format("hoodpy").options(**OPTIONS) \
        .mode("overwrite").save(path)
    assert read(spark, path) == [(3, 2, "C", "ny")]  # upsert semantics: duplicate keys combined
    timeline = HoodieTable.for_path(spark, path).timeline
    assert [i.action.value for i in timeline.completed_commits()] == ["commit", "replacecommit"]
    # atomic and kept: the table as it was stays readable by time travel
    assert read(spark, path, **{"as.of.instant": first[0]}) == [(1, 1, "a", "sf"), (2, 1, "b", "la")]
    assert hudi_rs.snapshot_tuples(path, ["id", "ts", "v", "city"]) == [(3, 2, "C", "ny")]


def test_overwrite_with_another_definition_recreates_the_table(api_spark, tmp_path):
    spark, path = api_spark, str(tmp_path / "t")
    batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).mode("overwrite").save(path)
    other = spark.createDataFrame([("k1", 5, "sf"), ("k2", 6, "la")], "key string, n int, city string")
    other.write.format("hoodpy").option("hoodie.table.name", "modes").option("hoodie.datasource.write.recordkey.field",
                                                                            "key").mode("overwrite").save(path)
    table = HoodieTable.for_path(spark, path)
    assert table.keygen.record_key_fields == ("key",) and not table.keygen.partition_fields
    assert len(table.timeline.completed_commits()) == 1
    assert sorted(tuple(r) for r in spark.read.format("hoodpy").load(path).select("key", "n", "city").collect()) == \
        [("k1", 5, "sf"), ("k2", 6, "la")]
    assert hudi_rs.snapshot_tuples(path, ["key", "n", "city"]) == [("k1", 5, "sf"), ("k2", 6, "la")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]  # no staging folder left


def test_a_failing_job_commits_nothing(api_spark, tmp_path):
    spark, path = api_spark, str(tmp_path / "t")
    failing = batch(spark, (1, 1, "a", "sf"), (2, 1, "b", "sf")).withColumn(
        "v", F.when(F.col("id") == 2, F.raise_error(F.lit("boom"))).otherwise(F.col("v")))
    with pytest.raises(Exception, match="boom"):
        failing.write.format("hoodpy").options(**OPTIONS).mode("append").save(path)
    assert not (tmp_path / "t").exists()  # the table the write was creating is gone again

    batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).mode("append").save(path)
    before_rows, before_commits = read(spark, path), commits(path)
    for mode, frame in (("append", failing), ("overwrite", failing),
                        ("overwrite", failing.withColumnRenamed("v", "w"))):  # the last one recreates: staged
        with pytest.raises(Exception, match="boom"):
            frame.write.format("hoodpy").options(**OPTIONS).mode(mode).save(path)
        assert read(spark, path) == before_rows and commits(path) == before_commits
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


@pytest.fixture(scope="module")
def one_row_table(api_spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bad") / "t")
    batch(api_spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).save(path)
    return path


@pytest.mark.parametrize("change, error, match", [
    ({"hoodie.datasource.write.operation": "upsertt"}, InvalidConfigError, "hoodie.datasource.write.operation"),
    ({"hoodie.datasource.write.operation": "delete_partition",
      "hoodie.datasource.write.partitions.to.delete": "nowhere"}, InvalidConfigError, "no such partition"),
    ({"hoodie.datasource.write.recordkey.field": "v"}, InvalidConfigError, "has 'id'"),
    ({"hoodie.datasource.write.partitionpath.field": "v"}, InvalidConfigError, "has 'city'"),
    ({"hoodie.table.name": "other"}, InvalidConfigError, "has 'modes'"),
    ({"hoodie.datasource.write.table.type": "MERGE_ON_READ"}, InvalidConfigError, "COPY_ON_WRITE"),
])
def test_bad_options_leave_the_table_unchanged(api_spark, one_row_table, change, error, match):
    before = tree(one_row_table)
    with pytest.raises(error, match=match):
        batch(api_spark, (2, 1, "b", "sf")).write.format("hoodpy").options(**{**OPTIONS, **change}).mode("append") \
            .save(one_row_table)
    assert tree(one_row_table) == before


def test_bad_batches_and_modes_leave_the_table_unchanged(api_spark, one_row_table):
    spark, path = api_spark, one_row_table
    before = tree(path)
    no_key = spark.createDataFrame([(1, "a", "sf")], "ts long, v string, city string")
    with pytest.raises(InvalidRecordError, match="record key column"):
        no_key.write.format("hoodpy").options(**OPTIONS).mode("append").save(path)
    with pytest.raises(InvalidConfigError, match="append mode only"):
        batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).mode("overwrite") \
            .option("hoodie.datasource.write.operation", "delete").save(path)
    with pytest.raises(InvalidConfigError, match="append mode only"):
        batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).mode("overwrite") \
            .option("hoodie.datasource.write.operation", "delete_partition").save(path)
    with pytest.raises(InvalidRecordError, match="partition column"):  # no partitions named, none in the rows
        no_key.drop("city").write.format("hoodpy").options(**OPTIONS).mode("append") \
            .option("hoodie.datasource.write.operation", "delete_partition").save(path)
    with pytest.raises(Exception, match="INVALID_SAVE_MODE"):  # Spark's own check of the mode name
        batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).save(path, mode="upsert")
    with pytest.raises(UnsupportedApiError, match="saveAsTable"):
        batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).saveAsTable("t")
    assert tree(path) == before


def test_a_new_table_needs_its_name_key_columns_and_a_known_type(api_spark, tmp_path):
    spark, path = api_spark, str(tmp_path / "t")
    cases = [
        ({k: v for k, v in OPTIONS.items() if k != "hoodie.table.name"}, MissingConfigError, "hoodie.table.name"),
        ({**OPTIONS, "hoodie.datasource.write.recordkey.field": "uuid"}, InvalidRecordError, "uuid"),
        ({**OPTIONS, "hoodie.datasource.write.precombine.field": "event_time"}, InvalidRecordError, "event_time"),
        ({**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_OF_READ"}, InvalidConfigError,
         "hoodie.datasource.write.table.type"),
    ]
    for options, error, match in cases:
        with pytest.raises(error, match=match):
            batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**options).mode("overwrite").save(path)
        assert not (tmp_path / "t").exists()


def test_a_folder_that_is_no_hudi_table_is_not_written_over(api_spark, tmp_path):
    spark = api_spark
    folder = tmp_path / "parquet"
    spark.createDataFrame([(1,)], "x int").write.parquet(str(folder))
    before = tree(str(folder))
    for mode in ("overwrite", "append"):
        with pytest.raises(PathHoldsOtherDataError, match="no Hudi table"):
            batch(spark, (1, 1, "a", "sf")).write.format("hoodpy").options(**OPTIONS).mode(mode).save(str(folder))
    assert tree(str(folder)) == before


def test_merge_on_read_through_the_dataframe_api(api_spark, tmp_path):
    """table.type MERGE_ON_READ creates a merge-on-read table: the update is a deltacommit writing a log file,
    snapshot reads merge it, read_optimized does not, and hudi-rs reads the table as hoodpy does."""
    spark, path = api_spark, str(tmp_path / "mor")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    batch(spark, (1, 1, "a", "sf"), (2, 1, "b", "la")).write.format("hoodpy").options(**options) \
        .mode("overwrite").save(path)
    batch(spark, (1, 2, "a2", "sf")).write.format("hoodpy").options(**options).mode("append").save(path)
    hoodie = tmp_path / "mor" / ".hoodie"
    assert "hoodie.table.type=MERGE_ON_READ" in (hoodie / "hoodie.properties").read_text()
    assert len([p for p in hoodie.iterdir() if p.name.endswith(".deltacommit")]) == 2
    assert list((tmp_path / "mor").rglob(".*.log.*"))
    snapshot = spark.read.format("hoodpy").load(path)
    assert {(r["id"], r["v"]) for r in snapshot.collect()} == {(1, "a2"), (2, "b")}
    read_optimized = spark.read.format("hoodpy").option("hoodie.datasource.query.type", "read_optimized").load(path)
    assert {(r["id"], r["v"]) for r in read_optimized.collect()} == {(1, "a"), (2, "b")}
    assert hudi_rs.df_rows(snapshot) == hudi_rs.snapshot(path)

"""spark.read.format("hoodpy") with Hudi's read options, filter pruning on the loaded DataFrame, and
spark.read.table of catalog hoodpy tables."""

from __future__ import annotations

import pytest

from hoodpy.errors import InvalidConfigError, MissingConfigError, UnsupportedApiError
from tests.compat import hudi_rs
from tests.java_samples import MOR_V6, unzip_sample
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM

pytestmark = pytest.mark.spark

OPTIONS = {"hoodie.table.name": "reads", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "city", **SMALL_BLOOM}


@pytest.fixture(scope="module")
def cities(api_spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("reads") / "cities")
    rows = [(i, ("sf", "la", "ny")[i % 3], float(i)) for i in range(12)]
    api_spark.createDataFrame(rows, "id int, city string, fare double").write.format("hoodpy").options(**OPTIONS) \
        .mode("overwrite").save(path)
    return path


def test_a_sql_condition_on_the_loaded_frame_prunes_files(api_spark, cities):
    loaded = api_spark.read.format("hoodpy").load(cities)
    everything = loaded.inputFiles()
    assert len(everything) == 3  # one file group per city
    pruned = loaded.where("city = 'sf' AND fare >= 3")
    assert len(pruned.inputFiles()) == 1 and "/sf/" in pruned.inputFiles()[0]
    assert sorted(r.id for r in pruned.collect()) == [3, 6, 9]
    assert sorted(r.id for r in loaded.filter(loaded.city == "sf").collect()) == [0, 3, 6, 9]  # Spark alone
    assert loaded.where("city = 'nowhere'").count() == 0


def test_read_optimized_reads_base_files_of_a_merge_on_read_table(api_spark, tmp_path):
    path = str(unzip_sample(f"{MOR_V6}/v6_simplekeygen_nonhivestyle", tmp_path))
    ro = api_spark.read.format("hoodpy").option("hoodie.datasource.query.type", "read_optimized").load(path)
    theirs = hudi_rs.read_optimized(path)
    assert hudi_rs.df_rows_like(ro, theirs) == theirs
    snapshot = api_spark.read.format("hoodpy").load(path)
    theirs = hudi_rs.snapshot(path)
    assert hudi_rs.df_rows_like(snapshot, theirs) == theirs


def test_read_table_resolves_catalog_hoodpy_tables_with_read_options(api_spark, cities):
    spark = api_spark
    spark.sql("CREATE DATABASE IF NOT EXISTS hoodpy_dataframe_reads")
    try:
        spark.sql(f"CREATE TABLE hoodpy_dataframe_reads.cities USING hoodpy LOCATION '{cities}'")
        assert spark.read.table("hoodpy_dataframe_reads.cities").count() == 12
        first = hudi_rs.completed_instants(cities)[0]
        spark.createDataFrame([(1, "la", 100.0)], "id int, city string, fare double").write.format("hoodpy") \
            .mode("append").save(cities)
        changed = spark.read.option("hoodie.datasource.query.type", "incremental") \
            .option("hoodie.datasource.read.begin.instanttime", first).table("hoodpy_dataframe_reads.cities")
        assert [(r.id, r.fare) for r in changed.collect()] == [(1, 100.0)]
        as_of = spark.read.option("as.of.instant", first).table("hoodpy_dataframe_reads.cities")
        assert as_of.where("id = 1").first().fare == 1.0
        spark.sql("CREATE TABLE hoodpy_dataframe_reads.plain AS SELECT 1 AS x")
        assert spark.read.table("hoodpy_dataframe_reads.plain").first().x == 1  # other tables: Spark's own
    finally:
        spark.sql("DROP DATABASE IF EXISTS hoodpy_dataframe_reads CASCADE")


def test_bad_read_options_are_named(api_spark, cities):
    reader = api_spark.read.format("hoodpy")
    cases = [
        ({"hoodie.datasource.query.type": "incremental"}, InvalidConfigError, "begin.instanttime"),
        ({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "000",
          "hoodie.datasource.query.incremental.format": "cdc"}, InvalidConfigError, "isn't a CDC hudi table"),
        ({"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "yesterday"},
         InvalidConfigError, "not an instant time"),
        ({"as.of.instant": "last tuesday"}, InvalidConfigError, "as.of.instant"),
        ({"hoodie.datasource.query.type": "latest"}, InvalidConfigError, "query.type"),
    ]
    for options, error, match in cases:
        with pytest.raises(error, match=match):
            api_spark.read.format("hoodpy").options(**options).load(cities)
    with pytest.raises(UnsupportedApiError, match="own schema"):
        reader.schema("id int").load(cities)
    with pytest.raises(MissingConfigError, match="path"):
        api_spark.read.format("hoodpy").load()

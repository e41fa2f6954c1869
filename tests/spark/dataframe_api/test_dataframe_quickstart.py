"""Hudi's Spark quick start (0.14, Python, datasource flavour) with format("hudi") replaced by format("hoodpy"):
insert, query, update, delete, time travel, incremental and point-in-time queries give the rows the guide
describes, and hudi-rs reads the same table after every step.

One addition to the guide's options: ``hoodie.datasource.write.recordkey.field = uuid`` (the guide's own "Keys"
section). The 1.x guide, which leaves the key out (generated keys), runs in test_quick_start.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.sql.functions import col

from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

COLUMNS = ["ts", "uuid", "rider", "driver", "fare", "city"]
DATA = [(1695159649087, "334e26e9-8355-45cc-97c6-c31daf0df330", "rider-A", "driver-K", 19.10, "san_francisco"),
        (1695091554788, "e96c4396-3fad-413a-a942-4cb36106d721", "rider-C", "driver-M", 27.70, "san_francisco"),
        (1695046462179, "9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "rider-D", "driver-L", 33.90, "san_francisco"),
        (1695516137016, "e3cf430c-889d-4015-bc98-59bdce1e530c", "rider-F", "driver-P", 34.15, "sao_paulo"),
        (1695115999911, "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", "rider-J", "driver-T", 17.85, "chennai")]
FARES = {r[2]: r[4] for r in DATA}


def riders(df, where: str = "true") -> dict[str, float]:
    return {r["rider"]: round(r["fare"], 2) for r in df.where(where).select("rider", "fare").collect()}


def same_as_hudi_rs(df, path: str, as_of: str | None = None) -> None:
    theirs = hudi_rs.snapshot(path, as_of)
    assert hudi_rs.df_rows_like(df, theirs) == theirs


def test_quick_start_with_format_hoodpy(api_spark, tmp_path):
    spark = api_spark
    tableName = "trips_table"
    basePath = "file://" + str(tmp_path / "trips_table")

    # -- Insert data
    inserts = spark.createDataFrame(DATA).toDF(*COLUMNS)
    hudi_options = {
        "hoodie.table.name": tableName,
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.recordkey.field": "uuid",
    }
    inserts.write.format("hoodpy").options(**hudi_options).mode("overwrite").save(basePath)

    # -- Query data
    tripsDF = spark.read.format("hoodpy").load(basePath)
    tripsDF.createOrReplaceTempView("trips_table")
    over_20 = spark.sql("SELECT uuid, fare, ts, rider, driver, city FROM  trips_table WHERE fare > 20.0")
    assert riders(over_20) == {"rider-C": 27.70, "rider-D": 33.90, "rider-F": 34.15}
    meta = spark.sql("SELECT _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path, rider, driver, fare "
                     "FROM trips_table").collect()
    assert {(r["_hoodie_record_key"], r["_hoodie_partition_path"]) for r in meta} == {(d[1], d[5]) for d in DATA}
    first_commit = {r["_hoodie_commit_time"] for r in meta}
    assert len(first_commit) == 1
    same_as_hudi_rs(tripsDF, basePath)

    # -- Update data: rider-D's fare times ten, save mode append
    updatesDf = spark.read.format("hoodpy").load(basePath).filter("rider == 'rider-D'") \
        .withColumn("fare", col("fare") * 10)
    updatesDf.write.format("hoodpy").options(**hudi_options).mode("append").save(basePath)
    after_update = spark.read.format("hoodpy").load(basePath)
    assert riders(after_update) == {**FARES, "rider-D": 339.0}
    commit_of = {r["rider"]: r["_hoodie_commit_time"] for r in after_update.collect()}
    assert commit_of["rider-D"] > next(iter(first_commit)) and len(set(commit_of.values())) == 2
    same_as_hudi_rs(after_update, basePath)

    # -- Delete data: rider-F
    deletesDF = spark.read.format("hoodpy").load(basePath).filter("rider == 'rider-F'")
    hudi_hard_delete_options = {
        "hoodie.table.name": tableName,
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.operation": "delete",
    }
    deletesDF.write.format("hoodpy").options(**hudi_hard_delete_options).mode("append").save(basePath)
    after_delete = spark.read.format("hoodpy").load(basePath)
    assert riders(after_delete) == {r: f for r, f in {**FARES, "rider-D": 339.0}.items() if r != "rider-F"}
    same_as_hudi_rs(after_delete, basePath)
    instants = hudi_rs.completed_instants(basePath)
    assert len(instants) == 3

    # -- Time travel: as of the first commit, by instant and by timestamp string
    first = instants[0]
    as_of_first = spark.read.format("hoodpy").option("as.of.instant", first).load(basePath)
    assert riders(as_of_first) == FARES
    same_as_hudi_rs(as_of_first, basePath, as_of=first)
    moment = datetime.strptime(first, "%Y%m%d%H%M%S%f")
    text = moment.strftime("%Y-%m-%d %H:%M:%S.") + first[14:]
    assert riders(spark.read.format("hoodpy").option("as.of.instant", text).load(basePath)) == FARES
    tomorrow = (moment + timedelta(days=1)).strftime("%Y-%m-%d")  # 'yyyy-MM-dd': midnight, after every commit
    assert riders(spark.read.format("hoodpy").option("as.of.instant", tomorrow).load(basePath)) == \
        riders(after_delete)

    # -- Incremental query: changes after the second-to-last commit time the table's rows carry
    spark.read.format("hoodpy").load(basePath).createOrReplaceTempView("trips_table")
    commits = list(map(lambda row: row[0], spark.sql(
        "SELECT DISTINCT(_hoodie_commit_time) AS commitTime FROM  trips_table ORDER BY commitTime")
        .limit(50).collect()))
    beginTime = commits[len(commits) - 2]
    incremental_read_options = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": beginTime,
    }
    tripsIncrementalDF = spark.read.format("hoodpy").options(**incremental_read_options).load(basePath)
    tripsIncrementalDF.createOrReplaceTempView("trips_incremental")
    changed = spark.sql("SELECT `_hoodie_commit_time`, fare, rider, driver, uuid, ts FROM trips_incremental "
                        "WHERE fare > 20.0")
    assert riders(changed) == {"rider-D": 339.0}
    theirs = hudi_rs.incremental(basePath, beginTime, instants[-1])
    assert hudi_rs.df_rows_like(tripsIncrementalDF, theirs) == theirs

    # -- Point in time: from the start of the timeline ("000") up to beginTime
    point_in_time_read_options = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.end.instanttime": beginTime,
        "hoodie.datasource.read.begin.instanttime": "000",
    }
    tripsPointInTimeDF = spark.read.format("hoodpy").options(**point_in_time_read_options).load(basePath)
    tripsPointInTimeDF.createOrReplaceTempView("hudi_trips_point_in_time")
    assert riders(spark.sql("SELECT `_hoodie_commit_time`, fare, rider, ts FROM hudi_trips_point_in_time "
                            "WHERE fare > 20.0")) == {"rider-C": 27.70, "rider-D": 33.90, "rider-F": 34.15}
    # Hudi 1.x's guide passes 0 for the beginning
    assert riders(spark.read.format("hoodpy").option("hoodie.datasource.query.type", "incremental")
                  .option("hoodie.datasource.read.begin.instanttime", 0).load(basePath)) == riders(after_delete)


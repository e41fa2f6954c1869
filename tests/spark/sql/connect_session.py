"""Run by test_spark_connect.py in its own process: hoodpy's SQL layer on a Spark Connect session
(``SparkSession.builder.remote("local[2]")``). Prints one JSON line with what it saw."""

from __future__ import annotations

import json
import os
import sys


def main(work: str) -> None:
    from pyspark.sql import SparkSession

    from sql_ext import enable

    spark = (SparkSession.builder.remote("local[2]")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    seen = {"session": type(spark).__module__, "same_object": enable(spark) is spark}
    location = os.path.join(work, "trips")
    spark.sql("CREATE DATABASE IF NOT EXISTS connect_db")
    spark.sql(f"CREATE TABLE connect_db.trips USING hoodpy LOCATION '{location}' TBLPROPERTIES (primaryKey = 'id') "
              "AS SELECT * FROM VALUES (1, 'a'), (2, 'b') AS v(id, name)")
    spark.sql("UPDATE connect_db.trips SET name = 'B' WHERE id = 2")
    seen["rows"] = [list(r) for r in spark.sql("SELECT id, name FROM connect_db.trips ORDER BY id").collect()]
    first = spark.sql("CALL show_commits(table => 'connect_db.trips')").collect()[-1]["commit_time"]
    seen["first"] = [list(r) for r in spark.sql(
        f"SELECT id, name FROM connect_db.trips TIMESTAMP AS OF '{first}' ORDER BY id").collect()]
    seen["table_count"] = spark.table("connect_db.trips").count()
    seen["commits"] = len(spark.sql("CALL show_commits(table => 'connect_db.trips')").collect())
    # Spark's DataFrame API with format("hoodpy"): batch write and read, the streaming sink and source.
    path, source = os.path.join(work, "api"), os.path.join(work, "api_source")
    options = {"hoodie.table.name": "api", "hoodie.datasource.write.recordkey.field": "id"}
    spark.createDataFrame([(1, "a"), (2, "b")], "id int, v string").write.format("hoodpy").options(**options) \
        .mode("overwrite").save(path)
    spark.createDataFrame([(2, "B")], "id int, v string").write.format("hoodpy").options(**options) \
        .mode("append").save(path)
    os.makedirs(source)
    with open(os.path.join(source, "a.json"), "w") as f:
        f.write('{"id": 3, "v": "c"}\n')
    spark.readStream.schema("id int, v string").json(source).writeStream.format("hoodpy").options(**options) \
        .option("checkpointLocation", os.path.join(work, "api_checkpoint")).trigger(availableNow=True) \
        .start(path).awaitTermination()
    seen["api_rows"] = [list(r) for r in spark.read.format("hoodpy").load(path).select("id", "v").orderBy("id")
                        .collect()]
    spark.readStream.format("hoodpy").load(path).writeStream.format("memory").queryName("api_stream") \
        .trigger(availableNow=True).start().awaitTermination()
    seen["api_stream"] = [list(r) for r in spark.sql("SELECT id, v FROM api_stream ORDER BY id").collect()]
    print("RESULT " + json.dumps(seen))
    spark.stop()


if __name__ == "__main__":
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
    main(sys.argv[1])

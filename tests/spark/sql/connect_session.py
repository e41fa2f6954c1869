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
    print("RESULT " + json.dumps(seen))
    spark.stop()


if __name__ == "__main__":
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
    main(sys.argv[1])

"""Run by test_catalog_persistence.py in its own process: a Hive-enabled session (Derby metastore pinned
to a folder) creates a hoodpy table and stops; a brand-new session on the same metastore finds it.

Usage: python hive_catalog_session.py <work folder>; prints one JSON line with what the second session saw.
"""

from __future__ import annotations

import json
import os
import sys


def session(work: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
        .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                f"jdbc:derby:;databaseName={os.path.join(work, 'metastore_db')};create=true")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={work}")
        .enableHiveSupport()
        .getOrCreate()
    )


def main(work: str) -> None:
    from sql_ext import enable

    first = enable(session(work))
    first.sparkContext.setLogLevel("ERROR")
    first.sql("CREATE DATABASE IF NOT EXISTS lake")
    first.sql("CREATE TABLE lake.trips USING hoodpy PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'id') "
              "AS SELECT * FROM VALUES (1, 'a', 'sf'), (2, 'b', 'nyc') AS v(id, name, city)")
    first.stop()

    second = session(work)  # a new SparkContext: the catalog comes back from the Derby metastore
    second.sparkContext.setLogLevel("ERROR")
    seen = {
        "tables": [r.tableName for r in second.sql("SHOW TABLES IN lake").collect()],
        "properties": {r.key: r.value for r in second.sql("SHOW TBLPROPERTIES lake.trips").collect()},
    }
    try:
        second.sql("SELECT * FROM lake.trips").collect()
        seen["plain_read"] = "no error"
    except Exception as e:  # noqa: BLE001
        seen["plain_read"] = str(e)[:2000]
    enable(second)
    seen["rows"] = sorted([list(r) for r in second.sql("SELECT id, name, city FROM lake.trips").collect()])
    seen["commits"] = len(second.sql("CALL show_commits(table => 'lake.trips')").collect())
    second.stop()
    print("RESULT " + json.dumps(seen))


if __name__ == "__main__":
    sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
    main(sys.argv[1])

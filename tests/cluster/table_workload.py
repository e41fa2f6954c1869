"""The same HoodieTable workload for every kind of session (local, Spark Connect, standalone cluster):
create, upsert twice (an update, a late event, inserts), delete, time travel, clustering and (when the
tree has it) a clean. Returns what it saw as JSON-friendly values; run as a script against a master or a
Connect URL, it prints one ``RESULT {...}`` line.

Usage: table_workload.py <table path> (--remote sc://host:port | --master spark://host:port) [--pyfiles zip]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DDL = "id int, p string, ts int, v string"
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy",
           "hoodie.parquet.small.file.limit": "0"}  # every write opens file groups: clustering has work


def rows(df) -> list[list]:
    return sorted([r.id, r.p, r.ts, r.v] for r in df.select("id", "p", "ts", "v").collect())


def run(spark, path: str) -> dict:
    from sql_ext import HoodieTable

    seen: dict = {"session": type(spark).__module__}
    t = HoodieTable.create(spark, path, table_name="workload", record_key_fields=["id"], partition_fields=["p"],
                           precombine_field="ts", options=OPTIONS)
    first = t.upsert(spark.createDataFrame([(i, f"p{i % 2}", 1, "a") for i in range(12)], DDL))
    t.upsert(spark.createDataFrame([(0, "p0", 2, "b"), (3, "p1", 0, "late"), (12, "p0", 2, "b"),
                                    (13, "p1", 2, "b")], DDL))
    t.delete(spark.createDataFrame([(5, "p1")], "id int, p string"))
    seen["after_writes"] = rows(t.read())
    seen["as_of_first"] = rows(t.read(as_of=first.instant_time))
    clustered = t.clustering.run(sort_columns=["id"])
    seen["clustered"] = clustered is not None
    seen["after_clustering"] = rows(HoodieTable.for_path(spark, path).read())
    t = HoodieTable.for_path(spark, path, options=OPTIONS)
    t.upsert(spark.createDataFrame([(1, "p1", 9, "c")], DDL))
    if hasattr(t, "cleaning"):
        cleaned = t.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
        seen["cleaned"] = cleaned is not None
    seen["final"] = rows(HoodieTable.for_path(spark, path).read())
    seen["actions"] = [i.action for i in HoodieTable.for_path(spark, path).timeline.completed_commits()]
    return seen


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--remote")
    parser.add_argument("--master")
    parser.add_argument("--pyfiles")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.sql.shuffle.partitions", "2") \
        .config("spark.sql.session.timeZone", "UTC")
    if args.remote:
        builder = builder.remote(args.remote)
    else:
        builder = (builder.master(args.master).config("spark.ui.enabled", "false")
                   .config("spark.executor.memory", "512m").config("spark.cores.max", "2")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
        if args.pyfiles:
            builder = builder.config("spark.submit.pyFiles", args.pyfiles)
    spark = builder.getOrCreate()
    try:
        seen = run(spark, args.path)
        if args.master:
            # Which executors ran Python tasks (their work folders), and where they imported sql_ext from.
            seen["executor_dirs"] = sorted(set(spark.sparkContext.parallelize(range(16), 16).map(
                lambda _: __import__("os").getcwd()).collect()))
            seen["executor_sql_ext"] = sorted(set(spark.sparkContext.parallelize(range(4), 4).map(
                lambda _: __import__("sql_ext").__file__).collect()))
        print("RESULT " + json.dumps(seen), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

"""The same HoodieTable workload for every kind of session (local, Spark Connect, standalone cluster):
create, upsert twice (an update, a late event, inserts), delete, time travel, clustering and a clean.
``--small`` runs the CI-sized one instead: create + bulk_insert, one upsert (updates, a late event,
inserts), clustering, clean (SMALL_* below, so a test can model its rows without running Spark).
Returns what it saw as JSON-friendly values, with each step's wall time under ``timings``; run as a script
against a master or a Connect URL, it prints one ``RESULT {...}`` line.

Usage: table_workload.py <table path> (--remote sc://host:port | --master spark://host:port) [--pyfiles zip]
       [--small]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

DDL = "id int, p string, ts int, v string"
OPTIONS = {"hoodie.index.bloom.num_entries": "100", "hoodie.parquet.compression.codec": "snappy",
           "hoodie.parquet.small.file.limit": "0"}  # every write opens file groups: clustering has work


# The small workload: two partitions, every write opens file groups (OPTIONS), so clustering merges them
# and the clean then deletes every replaced file (one file version kept per group).
SMALL_LOAD = [(i, f"p{i % 2}", 1, "a") for i in range(6)]
SMALL_UPSERT = [(0, "p0", 2, "b"), (3, "p1", 0, "late"), (6, "p0", 2, "b"), (7, "p1", 2, "b")]
SMALL_CLEAN = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def rows(df) -> list[list]:
    return sorted([r.id, r.p, r.ts, r.v] for r in df.select("id", "p", "ts", "v").collect())


class Steps:
    """Wall time of each step, in seconds (reported under ``timings``, never asserted)."""

    def __init__(self):
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        start = time.monotonic()
        try:
            yield
        finally:
            self.timings[name] = round(time.monotonic() - start, 2)


def run(spark, path: str) -> dict:
    from hoodpy import HoodieTable

    seen: dict = {"session": type(spark).__module__}
    step = Steps()
    with step("create"):
        t = HoodieTable.create(spark, path, table_name="workload", record_key_fields=["id"],
                               partition_fields=["p"], precombine_field="ts", options=OPTIONS)
    with step("upsert_1"):
        first = t.upsert(spark.createDataFrame([(i, f"p{i % 2}", 1, "a") for i in range(12)], DDL))
    with step("upsert_2"):
        t.upsert(spark.createDataFrame([(0, "p0", 2, "b"), (3, "p1", 0, "late"), (12, "p0", 2, "b"),
                                        (13, "p1", 2, "b")], DDL))
    with step("delete"):
        t.delete(spark.createDataFrame([(5, "p1")], "id int, p string"))
    with step("read_1"):
        seen["after_writes"] = rows(t.read())
    with step("time_travel"):
        seen["as_of_first"] = rows(t.read(as_of=first.instant_time))
    with step("clustering"):
        clustered = t.clustering.run(sort_columns=["id"])
    seen["clustered"] = bool(clustered)
    with step("read_2"):
        seen["after_clustering"] = rows(HoodieTable.for_path(spark, path).read())
    t = HoodieTable.for_path(spark, path, options=OPTIONS)
    with step("upsert_3"):
        t.upsert(spark.createDataFrame([(1, "p1", 9, "c")], DDL))
    with step("clean"):
        cleaned = t.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    seen["cleaned"] = cleaned is not None
    with step("read_3"):
        seen["final"] = rows(HoodieTable.for_path(spark, path).read())
    seen["actions"] = [i.action for i in HoodieTable.for_path(spark, path).timeline.completed_commits()]
    seen["timings"] = step.timings
    return seen


def run_small(spark, path: str) -> dict:
    from hoodpy import HoodieTable

    seen: dict = {"session": type(spark).__module__}
    step = Steps()
    with step("create"):
        t = HoodieTable.create(spark, path, table_name="small", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", options=OPTIONS)
    with step("bulk_insert"):
        t.bulk_insert(spark.createDataFrame(SMALL_LOAD, DDL))
    with step("upsert"):
        upserted = t.upsert(spark.createDataFrame(SMALL_UPSERT, DDL))
    seen["upsert"] = {"inserts": upserted.num_inserts, "updates": upserted.num_update_writes}
    with step("clustering"):
        seen["clustering"] = [c.instant_time for c in t.clustering.run(sort_columns=["id"])]
    with step("clean"):
        cleaned = t.cleaning.run(SMALL_CLEAN)
    seen["clean"] = cleaned.instant_time if cleaned is not None else None
    with step("read"):
        seen["final"] = rows(HoodieTable.for_path(spark, path).read())
    seen["timings"] = step.timings
    return seen


def executors_seen(spark) -> dict:
    """Which executors ran Python tasks (their work folders) and where they imported hoodpy from."""
    def where(_):
        import os

        import hoodpy

        return os.getcwd(), hoodpy.__file__

    found = spark.sparkContext.parallelize(range(16), 16).map(where).collect()
    return {"executor_dirs": sorted({d for d, _ in found}), "executor_hoodpy": sorted({f for _, f in found})}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--remote")
    parser.add_argument("--master")
    parser.add_argument("--pyfiles")
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    from tests.cluster.processes import QUICK_JVM

    builder = SparkSession.builder.config("spark.sql.shuffle.partitions", "2") \
        .config("spark.sql.session.timeZone", "UTC")
    if args.remote:
        builder = builder.remote(args.remote)
    else:
        builder = (builder.master(args.master).config("spark.ui.enabled", "false")
                   .config("spark.executor.memory", "512m").config("spark.cores.max", "2")
                   .config("spark.executor.cores", "1")
                   .config("spark.driver.extraJavaOptions", QUICK_JVM)
                   .config("spark.executor.extraJavaOptions", QUICK_JVM)
                   # Jobs wait until both workers' executors registered, so both run Python tasks.
                   .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
                   .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "300s")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1"))
        if args.pyfiles:
            builder = builder.config("spark.submit.pyFiles", args.pyfiles)
    started = time.monotonic()
    spark = builder.getOrCreate()
    session_s = round(time.monotonic() - started, 2)
    try:
        seen = (run_small if args.small else run)(spark, args.path)
        seen["timings"]["session"] = session_s
        if args.master:
            seen.update(executors_seen(spark))
        print("RESULT " + json.dumps(seen), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()

"""Spark's DataFrame API on hoodpy against the native paths, one process, one Spark session, same data:

* write: ``batch.write.format("hoodpy").options(...).mode("append").save(path)`` vs
  ``HoodieTable.for_path(spark, path).upsert(batch)`` of the same upsert batch (updates spread over the table plus
  inserts); the sides alternate on one table, each repetition a new ordering value so every update rewrites;
* read: a TPC-H Q1-style aggregate (filter, group by, sums, averages, counts) over
  ``spark.read.format("hoodpy").load(path)`` vs ``spark.read.parquet(*latest base files)`` (and the same given the
  schema, as hoodpy's scan is); each repetition includes making the DataFrame (hoodpy: timeline, file-system
  view; parquet: the given files' footers for the schema);
* route: the driver-side work the DataFrame route adds before the same write (options, path check, the
  definition compared), against opening the table, many times: the write ratio's systematic part;
* stream: ``writeStream.format("hoodpy")`` from a folder of JSON files, one file per micro-batch (records/s of
  the whole run, and seconds from a file's arrival to its commit being readable with a 1-second trigger).

Each operation runs once to warm up, then ``--repeats`` times per side, alternating; reported: medians and the
ratio hoodpy / native. Prints JSON and writes it to ``--out``.

    .venv/bin/python benchmarks/dataframe_api.py --rows 2000000 --repeats 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from spark_local import report, spark_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OPTIONS = {"hoodie.table.name": "rides", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
           "hoodie.parquet.compression.codec": "snappy", "hoodie.index.bloom.num_entries": "10000"}
CITIES = ("sf", "nyc", "la", "sea")


def rides(spark, n: int, ts: int, start: int = 0, step: int = 1):
    from pyspark.sql import functions as F

    city = F.element_at(F.array(*[F.lit(c) for c in CITIES]), (F.col("id") % len(CITIES) + 1).cast("int"))
    return (spark.range(start, start + n * step, step)
            .select(F.col("id"), (F.rand(ts) * 100).alias("fare"), (F.rand(ts + 1) * 30).alias("distance"),
                    (F.rand(ts + 2) * 5).cast("int").alias("passengers"), F.lit(ts).cast("long").alias("ts"),
                    city.alias("city")))


def q1(df):
    from pyspark.sql import functions as F

    return (df.where(F.col("distance") <= 25).groupBy("city", "passengers")
            .agg(F.sum("fare").alias("sum_fare"), F.sum("distance").alias("sum_distance"),
                 F.avg("fare").alias("avg_fare"), F.avg("distance").alias("avg_distance"),
                 F.count(F.lit(1)).alias("rides")).orderBy("city", "passengers").collect())


def answer(rows) -> list[tuple]:
    return sorted(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows)


def alternate(repeats: int, **sides):
    """Median seconds per side: one warm-up each, then ``repeats`` rounds with the sides alternating."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for name, fn in sides.items():
        fn(0)
    for i in range(1, repeats + 1):
        for name, fn in sides.items():
            start = time.perf_counter()
            fn(i)
            times[name].append(time.perf_counter() - start)
    return {name: {"median_s": round(statistics.median(t), 3), "runs_s": [round(x, 3) for x in t]}
            for name, t in times.items()}


def bench_write(spark, path: str, rows: int, repeats: int, update_share: float, inserts: int) -> dict:
    from hoodpy.table import HoodieTable

    updates = int(rows * update_share)
    step = max(1, rows // updates)
    counter = iter(range(10, 10_000))

    def batch():
        ts = next(counter)  # a new ordering value per run: every update rewrites its record
        return rides(spark, updates, ts, start=ts % step, step=step).unionByName(
            rides(spark, inserts, ts, start=rows + ts * inserts))

    def dataframe_api(_):
        batch().write.format("hoodpy").options(**OPTIONS).mode("append").save(path)

    def hoodie_table(_):
        HoodieTable.for_path(spark, path, options=OPTIONS).upsert(batch())

    out = alternate(repeats, dataframe_api=dataframe_api, hoodie_table=hoodie_table)
    out["ratio"] = round(out["dataframe_api"]["median_s"] / out["hoodie_table"]["median_s"], 3)
    out["batch"] = {"updates": updates, "inserts": inserts}
    return out


def bench_route(spark, path: str, calls: int) -> dict:
    """What the DataFrame route adds on the driver before the same write starts: the options read, the path
    checked, the table opened and its definition compared with the options; against opening the table alone
    (milliseconds per call, averaged over ``calls``)."""
    from hoodpy.storage import open_storage
    from hoodpy.table import HoodieTable
    from sql_ext.datasource.batch_write import WriteRequest, require_definition

    def route():
        request = WriteRequest.of(path, "append", OPTIONS)
        open_storage(spark, path, request.options).exists(".hoodie/hoodie.properties")
        require_definition(HoodieTable.for_path(spark, path, options=request.hoodie_options), request.config)

    def open_only():
        HoodieTable.for_path(spark, path, options=OPTIONS)

    out = {}
    for name, fn in (("dataframe_api_ms", route), ("hoodie_table_ms", open_only)):
        fn()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        out[name] = round((time.perf_counter() - start) / calls * 1000, 3)
    return out


def bench_read(spark, path: str, repeats: int) -> dict:
    from hoodpy.table import HoodieTable

    table = HoodieTable.for_path(spark, path)
    latest = [table.storage.uri(f.path) for f in table.file_system_view().latest_base_files()]
    answers = {}

    def dataframe_api(i):
        answers["hoodpy"] = q1(spark.read.format("hoodpy").load(path))

    def parquet(i):
        answers["parquet"] = q1(spark.read.parquet(*latest))

    def parquet_given_schema(i):  # what hoodpy's scan does: the schema from the table, not from the footers
        answers["parquet_given_schema"] = q1(spark.read.schema(schema).parquet(*latest))

    schema = spark.read.parquet(*latest).schema
    out = alternate(repeats, dataframe_api=dataframe_api, parquet=parquet, parquet_given_schema=parquet_given_schema)
    assert answer(answers["hoodpy"]) == answer(answers["parquet"]) == answer(answers["parquet_given_schema"]), \
        "the sides disagree"
    out["ratio"] = round(out["dataframe_api"]["median_s"] / out["parquet"]["median_s"], 3)
    out["latest_base_files"] = len(latest)
    return out


def bench_stream(spark, work: Path, files: int, rows_per_file: int) -> dict:
    source, table = work / "stream_source", str(work / "stream_table")
    source.mkdir()

    def put(n: int) -> None:
        part = rides(spark, rows_per_file, n + 1, start=n * rows_per_file).toPandas()
        tmp = work / f".tmp-{n}.json"
        part.to_json(tmp, orient="records", lines=True)
        os.rename(tmp, source / f"part-{n:04d}.json")  # arrives whole

    schema = "id long, fare double, distance double, passengers int, ts long, city string"
    for n in range(files):
        put(n)
    start = time.perf_counter()
    (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(source)).writeStream
     .format("hoodpy").options(**OPTIONS).option("checkpointLocation", str(work / "cp1"))
     .trigger(availableNow=True).start(table).awaitTermination())
    seconds = time.perf_counter() - start
    throughput = {"files": files, "records": files * rows_per_file, "seconds": round(seconds, 3),
                  "records_per_s": round(files * rows_per_file / seconds, 1)}

    from hoodpy.table import HoodieTable

    query = (spark.readStream.schema(schema).json(str(source)).writeStream.format("hoodpy").options(**OPTIONS)
             .option("checkpointLocation", str(work / "cp1")).trigger(processingTime="1 second").start(table))
    latencies = []
    try:
        for n in range(files, files + 3):
            before = len(HoodieTable.for_path(spark, table).timeline.completed_commits())
            arrived = time.perf_counter()
            put(n)
            while len(HoodieTable.for_path(spark, table).timeline.completed_commits()) == before:
                time.sleep(0.05)
            latencies.append(round(time.perf_counter() - arrived, 3))
    finally:
        query.stop()
    return {"throughput": throughput, "arrival_to_commit_s": latencies,
            "median_arrival_to_commit_s": statistics.median(latencies)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--update-share", type=float, default=0.05)
    parser.add_argument("--inserts", type=int, default=20_000)
    parser.add_argument("--stream-files", type=int, default=5)
    parser.add_argument("--stream-rows", type=int, default=50_000)
    parser.add_argument("--out", default=str(Path(__file__).with_name("dataframe_api.json")))
    args = parser.parse_args()

    from hoodpy.table import HoodieTable
    from sql_ext import enable

    spark = enable(spark_session("hoodpy-dataframe-api", shuffle_partitions=8))
    work = Path(tempfile.mkdtemp(prefix="hoodpy-dataframe-api-"))
    try:
        path = str(work / "rides")
        started = time.perf_counter()
        rides(spark, args.rows, 1).write.format("hoodpy").options(**OPTIONS) \
            .option("hoodie.datasource.write.operation", "bulk_insert").mode("overwrite").save(path)
        result = {"rows": args.rows, "load_s": round(time.perf_counter() - started, 3),
                  "write": bench_write(spark, path, args.rows, args.repeats, args.update_share, args.inserts),
                  "route_overhead": bench_route(spark, path, 50),
                  "read": bench_read(spark, path, args.repeats),
                  "commits": len(HoodieTable.for_path(spark, path).timeline.completed_commits())}
        if args.stream_files:
            result["stream"] = bench_stream(spark, work, args.stream_files, args.stream_rows)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(result, args.out)


if __name__ == "__main__":
    main()

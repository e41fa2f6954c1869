"""Structured Streaming into hoodpy tables: ``writeStream.format("hoodpy")`` into a COPY_ON_WRITE and a
MERGE_ON_READ table, at a fixed micro-batch size and a fixed trigger interval.

Per table type: a table is seeded (``--seed-rows``, bulk_insert), then a query with
``trigger(processingTime=<interval>)`` and ``maxFilesPerTrigger=1`` reads a folder of JSON files; one file of
``--batch-rows`` records (``--update-share`` of them updates of existing keys spread over the table, the rest new
keys) arrives per interval, whole (renamed in). Reported:

* arrival to visible commit: seconds from a file's arrival to its commit being complete on the timeline (what a
  reader can see), per batch, and the median;
* sustained records/s: the batches' records over the time from the first arrival to the last visible commit
  (arrivals keep the interval unless the previous commit is still running: then the next file arrives as soon as
  it is visible, so a write slower than the interval sets the pace);
* the write seconds each commit took (instant time to the completed instant file), and the batch's records over
  their median: the rate the sink writes at this batch size when it is busy (the sustained rate above is capped by
  the arrival rate when writes are faster than the interval).

The issue asks for one-minute micro-batches; the default interval is shorter (``--interval``) to keep the run
short on a shared machine: the arrival-to-commit latency is at most one interval plus the write.

    .venv/bin/python benchmarks/streaming.py --batches 6 --batch-rows 20000 --interval 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from spark_local import hoodpy_session, report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OPTIONS = {"hoodie.table.name": "rides", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
           "hoodie.parquet.compression.codec": "snappy", "hoodie.index.bloom.num_entries": "10000"}
SCHEMA = "id long, fare double, distance double, passengers int, ts long, city string"
CITIES = ("sf", "nyc", "la", "sea")


def batch_rows(n: int, rows: int, seed_rows: int, update_share: float) -> list[dict]:
    """Batch ``n``: updates of existing ids spread over the seeded range, then new ids past everything written."""
    import random

    rng = random.Random(n)
    updates = int(rows * update_share)
    ids = rng.sample(range(seed_rows), updates) + list(range(seed_rows + n * rows, seed_rows + n * rows + rows -
                                                                 updates))
    return [{"id": i, "fare": rng.random() * 100, "distance": rng.random() * 30, "passengers": rng.randrange(5),
             "ts": n + 2, "city": CITIES[i % len(CITIES)]} for i in ids]


def seed(spark, path: str, rows: int, table_type: str) -> None:
    from pyspark.sql import functions as F

    city = F.element_at(F.array(*[F.lit(c) for c in CITIES]), (F.col("id") % len(CITIES) + 1).cast("int"))
    df = spark.range(rows).select(F.col("id"), (F.rand(1) * 100).alias("fare"), (F.rand(2) * 30).alias("distance"),
                                  (F.rand(3) * 5).cast("int").alias("passengers"), F.lit(1).cast("long").alias("ts"),
                                  city.alias("city"))
    df.write.format("hoodpy").options(**OPTIONS).option("hoodie.datasource.write.table.type", table_type) \
        .option("hoodie.datasource.write.operation", "bulk_insert").mode("overwrite").save(path)


def write_seconds(path: str) -> list[float]:
    """Seconds from each write's instant time (when it started) to its completed instant file's modification
    time, for the writes after the seed (table version 6 records no completion time)."""
    from hoodpy.storage import Storage
    from hoodpy.timeline.instant import parse_instant_time
    from hoodpy.timeline.timeline import Timeline

    out = []
    for instant in Timeline.load(Storage(path)).completed_commits()[1:]:
        completed = Path(path, ".hoodie", f"{instant.timestamp}.{instant.action.value}").stat().st_mtime
        out.append(round(completed - parse_instant_time(instant.timestamp).timestamp(), 3))
    return out


def run(spark, work: Path, table_type: str, args) -> dict:
    from hoodpy.storage import Storage
    from hoodpy.timeline.timeline import Timeline

    root = work / table_type.lower()
    source, staging, table = root / "source", root / "staging", str(root / "table")
    source.mkdir(parents=True)
    staging.mkdir()
    seed(spark, table, args.seed_rows, table_type)
    for n in range(args.batches):  # made before the clock starts: the run measures the sink alone
        (staging / f"part-{n:04d}.json").write_text(
            "".join(json.dumps(r) + "\n" for r in batch_rows(n, args.batch_rows, args.seed_rows, args.update_share)))

    def commits() -> int:
        return len(Timeline.load(Storage(table)).completed_commits())

    query = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source)).writeStream
             .format("hoodpy").options(**OPTIONS).option("checkpointLocation", str(root / "cp"))
             .trigger(processingTime=f"{args.interval} seconds").start(table))
    latencies, first_arrival, last_visible = [], None, None
    try:
        next_slot = time.perf_counter()
        for n in range(args.batches):
            time.sleep(max(0.0, next_slot - time.perf_counter()))
            before = commits()
            arrived = time.perf_counter()
            first_arrival = first_arrival or arrived
            os.rename(staging / f"part-{n:04d}.json", source / f"part-{n:04d}.json")
            while commits() == before:
                if query.exception() is not None:
                    raise RuntimeError(str(query.exception()))
                time.sleep(0.05)
            last_visible = time.perf_counter()
            latencies.append(round(last_visible - arrived, 3))
            next_slot = arrived + args.interval
    finally:
        query.stop()
    records = args.batches * args.batch_rows
    elapsed = last_visible - first_arrival
    return {"table_type": table_type, "batches": args.batches, "records": records,
            "sustained_records_per_s": round(records / elapsed, 1), "elapsed_s": round(elapsed, 3),
            "arrival_to_visible_commit_s": latencies,
            "median_arrival_to_visible_commit_s": statistics.median(latencies),
            "commit_write_s": (writes := write_seconds(table)),
            # what the sink writes per second of committing, at this batch size (the arrival rate caps the above)
            "write_records_per_s": round(args.batch_rows / statistics.median(writes), 1),
            "actions": sorted({i.action.value for i in Timeline.load(Storage(table)).completed_commits()[1:]})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-rows", type=int, default=200_000)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--batch-rows", type=int, default=20_000)
    parser.add_argument("--update-share", type=float, default=0.5)
    parser.add_argument("--interval", type=int, default=10, help="trigger interval, seconds")
    parser.add_argument("--out", default=str(Path(__file__).with_name("streaming.json")))
    args = parser.parse_args()

    with hoodpy_session("hoodpy-streaming", shuffle_partitions=4, prefix="hoodpy-streaming-") as (spark, work):
        result = {"seed_rows": args.seed_rows, "batch_rows": args.batch_rows, "update_share": args.update_share,
                  "trigger_interval_s": args.interval,
                  "runs": [run(spark, work, t, args) for t in ("COPY_ON_WRITE", "MERGE_ON_READ")]}
    report(result, args.out)


if __name__ == "__main__":
    main()

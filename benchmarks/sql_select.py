"""SELECT aggregates over a hoodpy table through ``spark.sql`` vs ``spark.read.parquet`` of the same latest
base files, in one process and one Spark session.

The table is written with hoodpy (a bulk insert, then upserts that leave older file versions behind, so
the file-system view has work to do). Each query runs ``--repeats`` times per side after one warm-up
each, alternating sides; a repetition on the parquet side includes creating the DataFrame (listing and
schema), as the hoodpy side includes its planning (catalog lookup, timeline, file-system view). Reported:
per-query medians, the ratio hoodpy / parquet, and the hoodpy planning time alone (``plan_s``: statement
to DataFrame, no Spark job). Prints JSON and writes it to ``--out``.

    .venv/bin/python benchmarks/sql_select.py --rows 2000000 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from spark_local import spark_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUERIES = {
    "count": "SELECT count(*) FROM {t}",
    "group_by": "SELECT city, count(*) AS n, sum(fare) AS fare, avg(distance) AS d, max(ts) AS ts FROM {t} GROUP BY city",
    "filtered": "SELECT count(*), sum(fare) FROM {t} WHERE fare > 50 AND distance < 10",
    "partition": "SELECT count(*), avg(fare) FROM {t} WHERE city = 'sf'",
}
OPTIONS = {"hoodie.parquet.compression.codec": "snappy", "hoodie.index.bloom.num_entries": 10000}


def build(spark, path: str, rows: int, upserts: int):
    from pyspark.sql import functions as F

    from hoodpy.table import HoodieTable

    table = HoodieTable.create(spark, path, table_name="rides", record_key_fields=["id"],
                               partition_fields=["city"], precombine_field="ts", hive_style_partitioning=True)
    cities = F.element_at(F.array(*[F.lit(c) for c in ("sf", "nyc", "la", "sea")]), (F.col("id") % 4 + 1).cast("int"))

    def batch(n: int, ts: int, start: int = 0, step: int = 1):
        return (spark.range(start, start + n * step, step)
                .select(F.col("id"), (F.rand(ts) * 100).alias("fare"), (F.rand(ts + 1) * 30).alias("distance"),
                        F.lit(ts).cast("long").alias("ts"), cities.alias("city")))

    table.bulk_insert(batch(rows, 1), options=OPTIONS)
    for i in range(upserts):  # update a slice of keys: old file versions stay on storage
        table.upsert(batch(rows // 20, 2 + i, start=i, step=10), options=OPTIONS)
    return table


def answer(rows) -> list[tuple]:
    """Rows compared across sides: floating-point aggregates rounded (summation order differs)."""
    return sorted(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows)


def median_time(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--upserts", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).with_name("sql_select.json")))
    args = parser.parse_args()
    if args.repeats < 3:
        parser.error("--repeats must be at least 3")

    from sql_ext import enable

    spark = spark_session("sql-select", shuffle_partitions=4)
    plain_sql = spark.sql  # the session's own, before enable()
    work = tempfile.mkdtemp(prefix="hoodpy-sql-select-")
    try:
        path = os.path.join(work, "rides")
        t0 = time.perf_counter()
        table = build(spark, path, args.rows, args.upserts)
        write_s = time.perf_counter() - t0
        enable(spark)
        spark.sql("CREATE DATABASE IF NOT EXISTS bench")
        spark.sql(f"CREATE TABLE bench.rides USING hoodpy LOCATION '{path}'")
        latest = [table.storage.uri(bf.path) for bf in table.file_system_view().latest_base_files()]
        on_storage = sum(1 for p in Path(path).rglob("*.parquet"))

        results = {}
        for name, query in QUERIES.items():
            def hoodpy(query=query):
                return spark.sql(query.format(t="bench.rides")).collect()

            def parquet(query=query):
                df = spark.read.parquet(*latest)
                return plain_sql(query.format(t="{df}"), df=df).collect()

            assert answer(hoodpy()) == answer(parquet()), name  # warm-up, and the same answer
            h_times, p_times = [], []
            for _ in range(args.repeats):  # alternate, so drift on a shared machine hits both sides
                h_times.append(median_time(hoodpy, 1)[0])
                p_times.append(median_time(parquet, 1)[0])
            plan_s, _ = median_time(lambda query=query: spark.sql(query.format(t="bench.rides")), args.repeats)
            h, p = statistics.median(h_times), statistics.median(p_times)
            results[name] = {"hoodpy_s": round(h, 4), "parquet_s": round(p, 4), "ratio": round(h / p, 3),
                             "hoodpy_plan_s": round(plan_s, 4),
                             "hoodpy_runs": [round(x, 4) for x in h_times],
                             "parquet_runs": [round(x, 4) for x in p_times]}
            print(f"{name:10s} hoodpy {h:.3f}s  parquet {p:.3f}s  ratio {h / p:.3f}  (hoodpy planning {plan_s:.3f}s)",
                  file=sys.stderr)
        ratios = [r["ratio"] for r in results.values()]
        doc = {
            "rows": args.rows, "upserts": args.upserts, "repeats": args.repeats,
            "latest_base_files": len(latest), "parquet_files_on_storage": on_storage,
            "write_s": round(write_s, 1), "queries": results,
            "median_ratio": round(statistics.median(ratios), 3), "max_ratio": max(ratios),
            "target": "hoodpy within 10% of spark.read.parquet (ratio <= 1.10)",
        }
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
        json.dump(doc, sys.stdout, indent=2)
        print()
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

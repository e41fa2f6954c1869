"""One of several concurrent writer processes for the optimistic-concurrency tests.

Usage: occ_writer.py <table path> <writer id> <batches json>; prints one JSON line per batch:
{"batch": i, "instant": t} when it committed, {"batch": i, "conflict": "..."} when it lost a conflict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pyspark.sql import SparkSession  # noqa: E402

from hoodpy import HoodieTable, WriteConflictError  # noqa: E402

SCHEMA = "id int, part string, val string"
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.wait_time_ms": "120000",
    "hoodie.write.lock.wait_time_ms_between_retry": "50",
    "hoodie.index.bloom.num_entries": "100",
}


def main() -> None:
    path, writer, batches = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    table = HoodieTable.for_path(spark, path, options=OCC)
    for i, rows in enumerate(batches):
        df = spark.createDataFrame([tuple(r) for r in rows], SCHEMA)
        try:
            result = table.upsert(df)
            print(json.dumps({"writer": writer, "batch": i, "instant": result.instant_time}), flush=True)
        except WriteConflictError as e:
            print(json.dumps({"writer": writer, "batch": i, "conflict": str(e)}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()

"""Upsert with ``hoodie.index.type=RECORD_INDEX`` vs the default BLOOM index, on a small lineitem table.

One copy-on-write table (partitioned by ship year / month, metadata table on) is bulk-inserted, then a one-row
RECORD_INDEX upsert builds its record_index partition (base HFiles). Copies of it then take the same upsert
batch (``--updates`` updates spread over all orders plus ``--inserts`` new keys), once per index type, ``--reps``
times each on a fresh copy; the median wall time of ``upsert`` is reported, and the ratio. BLOOM locates keys
on the driver (footer key ranges, bloom filters, key columns); RECORD_INDEX reads the record_index shards that
hold the batch's keys (one Spark task per shard). The build's driver CPU time is reported beside its wall time
(the build runs on the driver; wall times on a shared machine follow its load, reported at the end).

    PYTHONPATH=. python benchmarks/record_index_lookup.py --sf 0.1
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from spark_local import spark_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/hoodpy-bench/data"))
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--inserts", type=int, default=500)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    from hoodpy.table import HoodieTable

    spark = spark_session("record-index-bench", shuffle_partitions=4)
    source = pq.read_table(lineitem.generate(args.data_dir, args.sf))
    batch = lineitem.upsert_batch(source, updates=args.updates, inserts=args.inserts, concentrated=False)
    work = Path(tempfile.mkdtemp(prefix="rli-bench-"))
    pq.write_table(batch, work / "batch.parquet")
    golden = work / "golden"
    options = {"hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false",
               "hoodie.archive.automatic": "false"}
    table = HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                               partition_fields=list(lineitem.PARTITION_FIELDS), hive_style_partitioning=True,
                               options=options)
    t0 = time.perf_counter()
    table.bulk_insert(spark.read.parquet(str(lineitem.generate(args.data_dir, args.sf))))
    load_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    table.upsert(spark.read.parquet(str(work / "batch.parquet")).limit(1),
                 options={"hoodie.index.type": "RECORD_INDEX"})
    build_s = time.perf_counter() - t0
    build_cpu_s = time.process_time() - c0  # the driver's CPU: the build itself runs there, in Python

    results: dict[str, list[float]] = {"BLOOM": [], "RECORD_INDEX": []}
    for rep in range(args.reps):
        for index_type in results:
            copy = work / f"{index_type}-{rep}"
            shutil.copytree(golden, copy)
            t = HoodieTable.for_path(spark, str(copy), options={**options, "hoodie.index.type": index_type})
            t0 = time.perf_counter()
            t.upsert(spark.read.parquet(str(work / "batch.parquet")))
            results[index_type].append(time.perf_counter() - t0)
            shutil.rmtree(copy)
    medians = {k: statistics.median(v) for k, v in results.items()}
    print(json.dumps({"sf": args.sf, "rows": source.num_rows, "batch_rows": batch.num_rows, "load_s": load_s,
                      "record_index_build_s": build_s, "record_index_build_driver_cpu_s": build_cpu_s,
                      "load_average_at_end": os.getloadavg(), "upsert_s": results, "median_s": medians,
                      "record_index_over_bloom": medians["RECORD_INDEX"] / medians["BLOOM"]}, indent=2))
    shutil.rmtree(work)
    spark.stop()


if __name__ == "__main__":
    main()

"""Files scanned and query time before and after linear, z-order and hilbert clustering.

One table of uniformly random (x, y) rows is written as many small files, copied once per layout and
clustered on (x, y) into ``--outputs`` files. For predicates on each sort column, the script counts the
files footer statistics cannot skip (hoodpy.read.data_skipping) and times a Spark count over them.
Prints one JSON document on stdout.

    .venv/bin/python benchmarks/clustering_layouts.py --rows 200000 --files 16 --outputs 16
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from spark_local import spark_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LAYOUTS = {
    "linear": {"hoodie.layout.optimize.strategy": "linear"},
    "zorder": {"hoodie.layout.optimize.strategy": "z-order"},
    "hilbert": {"hoodie.layout.optimize.strategy": "hilbert"},
    "zorder_sample": {"hoodie.layout.optimize.strategy": "z-order",
                      "hoodie.layout.optimize.curve.build.method": "SAMPLE"},
    "hilbert_sample": {"hoodie.layout.optimize.strategy": "hilbert",
                       "hoodie.layout.optimize.curve.build.method": "SAMPLE"},
}
OPTIONS = {"hoodie.index.bloom.num_entries": 1000, "hoodie.parquet.compression.codec": "snappy"}
RANGE = 1_000_000


def predicates() -> dict[str, list[tuple[str, str, int]]]:
    tenth = RANGE // 10
    return {
        "x < 10%": [("x", "<", tenth)],
        "y < 10%": [("y", "<", tenth)],
        "x in 1% band": [("x", ">=", 3 * tenth), ("x", "<", 3 * tenth + RANGE // 100)],
        "y in 1% band": [("y", ">=", 3 * tenth), ("y", "<", 3 * tenth + RANGE // 100)],
        "x < 10% and y < 10%": [("x", "<", tenth), ("y", "<", tenth)],
    }


def measure(spark, table, filters, repeats: int) -> dict:
    from pyspark.sql import functions as F

    from hoodpy.read.data_skipping import prune_by_column_stats

    files = table.file_system_view().latest_base_files()
    kept = prune_by_column_stats(table.storage, files, filters)
    cond = F.lit(True)
    for col, op, value in filters:
        c = F.col(col)
        cond = cond & {"<": c < value, ">=": c >= value}[op]
    best = float("inf")
    rows = 0
    for _ in range(repeats):
        started = time.perf_counter()
        if kept:
            rows = spark.read.parquet(*[table.storage.uri(bf.path) for bf in kept]).filter(cond).count()
        best = min(best, time.perf_counter() - started)
    return {"files_scanned": len(kept), "files_total": len(files),
            "fraction_scanned": round(len(kept) / max(1, len(files)), 4), "rows": rows, "query_s": round(best, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=16, help="small files written before clustering")
    parser.add_argument("--outputs", type=int, default=16, help="files after clustering")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()

    from hoodpy.services.clustering import ClusteringService
    from hoodpy.table import HoodieTable

    spark = spark_session("clustering-layouts", shuffle_partitions=8)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hoodpy-clustering-bench-"))
    base = work / "before"
    shutil.rmtree(base, ignore_errors=True)
    rnd = random.Random(42)
    table = HoodieTable.create(spark, str(base), table_name="bench", record_key_fields=["id"],
                               precombine_field="ts", options=OPTIONS)
    per_file = args.rows // args.files
    for f in range(args.files):
        data = [(f * per_file + i, f, rnd.randrange(RANGE), rnd.randrange(RANGE), rnd.random())
                for i in range(per_file)]
        table.bulk_insert(spark.createDataFrame(data, "id long, ts int, x int, y int, payload double"))
    total_bytes = sum(bf.size for bf in table.file_system_view().latest_base_files())

    results: dict = {"rows": per_file * args.files, "input_files": args.files, "outputs": args.outputs,
                     "layouts": {}}
    preds = predicates()
    results["layouts"]["before"] = {"clustering_s": None,
                                    "predicates": {p: measure(spark, table, f, args.repeats) for p, f in preds.items()}}
    for name, extra in LAYOUTS.items():
        dest = work / name
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(base, dest)
        t = HoodieTable.for_path(spark, str(dest), options=OPTIONS)
        options = {"hoodie.clustering.plan.strategy.sort.columns": "x,y",
                   "hoodie.clustering.plan.strategy.target.file.max.bytes": total_bytes // args.outputs + 1,
                   "hoodie.clustering.plan.strategy.max.bytes.per.group": total_bytes * 2, **extra}
        started = time.perf_counter()
        plan = ClusteringService.of(t).schedule(options)
        ClusteringService.of(t).execute(plan.instant_time)
        elapsed = time.perf_counter() - started
        layout = {p: measure(spark, t, f, args.repeats) for p, f in preds.items()}
        for p, m in layout.items():
            before = results["layouts"]["before"]["predicates"][p]
            m["fraction_ratio_vs_before"] = round(m["fraction_scanned"] / before["fraction_scanned"], 3) \
                if before["fraction_scanned"] else None
            m["time_ratio_vs_before"] = round(m["query_s"] / before["query_s"], 3) if before["query_s"] else None
            if name != "linear":
                linear = results["layouts"]["linear"]["predicates"][p]
                m["files_ratio_vs_linear"] = round(m["files_scanned"] / max(1, linear["files_scanned"]), 3)
        results["layouts"][name] = {"clustering_s": round(elapsed, 2), "predicates": layout}
    json.dump(results, sys.stdout, indent=2)
    print()
    spark.stop()
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

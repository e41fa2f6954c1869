"""hoodpy bulk_insert (default options) against Spark's own parquet write of the same SF 1 lineitem rows, alternating
in one process, one warm-up rep each (not counted); prints each rep's seconds and CPU split, then the ratio of the
medians, and writes them as JSON. Issue #16's bulk_insert target measured again apart from benchmarks/run.py.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/load_ab.py --reps 2 --work /tmp/load_ab --out /tmp/load_ab.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lineitem  # noqa: E402
from measure import measure  # noqa: E402
from run import KEY  # noqa: E402
from spark_local import spark_session  # noqa: E402

from hoodpy.table import HoodieTable  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2, help="counted reps of each write (after one warm-up)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/load_ab"), help="folder for the written tables")
    parser.add_argument("--out", type=Path, default=Path("/tmp/load_ab.json"))
    parser.add_argument("--data", type=Path, default=Path("/tmp/hoodpy-bench/data"), help="TPC-H data folder")
    parser.add_argument("--driver-memory", default="6g")
    args = parser.parse_args()

    spark = spark_session("load-ab", shuffle_partitions=8, driver_memory=args.driver_memory)
    src = lineitem.generate(args.data, 1)

    def hoodpy(path: Path) -> None:
        HoodieTable.create(spark, str(path), table_name="lineitem", record_key_fields=KEY, partition_fields=[],
                           hive_style_partitioning=True, options={}).bulk_insert(spark.read.parquet(str(src)))

    def parquet(path: Path) -> None:
        spark.read.parquet(str(src)).write.mode("overwrite").parquet(str(path))

    out: dict = {"hoodpy_bulk_insert": [], "spark_parquet_write": []}
    for rep in range(args.reps + 1):
        for name, write in (("hoodpy_bulk_insert", hoodpy), ("spark_parquet_write", parquet)):
            path = args.work / name
            shutil.rmtree(path, ignore_errors=True)
            with measure(spark) as m:
                write(path)
            d = m.as_dict()
            print(rep, name, d["seconds"], {k: v for k, v in d.items() if k.startswith("cpu_")}, flush=True)
            if rep:  # rep 0 warms the JVM
                out[name].append(d)
    med = {name: statistics.median(d["seconds"] for d in reps) for name, reps in out.items()}
    out["median_s"] = med
    out["ratio"] = med["hoodpy_bulk_insert"] / med["spark_parquet_write"]
    print("ratio", round(out["ratio"], 3), med)
    args.out.write_text(json.dumps(out, indent=1))
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()

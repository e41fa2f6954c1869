"""In-process A/B of how the JVM feeds a first bulk_insert's tasks (issue #16, session 25): "old" keeps Spark's
byte bound on the Arrow batches (spark.sql.execution.arrow.maxBytesPerBatch, which makes the JVM size the whole
batch after every row), "new" runs the code as it is (the bound lifted where idle, the record bound at 4,096 for
a first load: hoodpy/write/arrow_batches.py). SF 1 lineitem into an empty table with default options, modes
alternating rep by rep in one Spark session after one warm-up rep each; prints each rep's seconds and CPU split
and the medians, and writes them as JSON.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bulk_insert_byte_bound_ab.py --reps 4 --out /tmp/byte_bound.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lineitem  # noqa: E402
from measure import measure  # noqa: E402
from run import KEY  # noqa: E402
from spark_local import spark_session  # noqa: E402

from hoodpy.table import HoodieTable  # noqa: E402
from hoodpy.write import writer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4, help="counted reps of each mode (after one warm-up)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/byte_bound_ab"), help="folder for the tables")
    parser.add_argument("--out", type=Path, default=Path("/tmp/byte_bound_ab.json"))
    parser.add_argument("--data", type=Path, default=Path("/tmp/hoodpy-bench/data"), help="TPC-H data folder")
    parser.add_argument("--driver-memory", default="3g")
    args = parser.parse_args()

    spark = spark_session("byte-bound-ab", shuffle_partitions=8, driver_memory=args.driver_memory)
    src = lineitem.generate(args.data, 1)
    lifted = writer.batches_by_records
    modes = {"old": lambda spark, record_size: nullcontext(), "new": lifted}
    out: dict = {name: [] for name in modes}
    for rep in range(args.reps + 1):
        for name in (("old", "new") if rep % 2 == 0 else ("new", "old")):
            writer.batches_by_records = modes[name]
            path = args.work / name
            shutil.rmtree(path, ignore_errors=True)
            try:
                with measure(spark) as m:
                    HoodieTable.create(spark, str(path), table_name="lineitem", record_key_fields=KEY,
                                       partition_fields=[], hive_style_partitioning=True,
                                       options={}).bulk_insert(spark.read.parquet(str(src)))
            finally:
                writer.batches_by_records = lifted
            d = m.as_dict()
            print(rep, name, d["seconds"], {k: v for k, v in d.items() if k.startswith("cpu_")}, flush=True)
            if rep:  # rep 0 warms the JVM
                out[name].append(d)
    out["median"] = {name: {k: statistics.median(d[k] for d in out[name])
                            for k in ("seconds", "cpu_driver_s", "cpu_jvm_s", "cpu_workers_s")} for name in modes}
    print("median", out["median"])
    args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

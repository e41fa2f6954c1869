"""hoodpy bulk_insert (defaults) vs Spark's parquet write of the same SF 1 rows, alternating, one warm-up each."""
import shutil, sys, json, statistics
from pathlib import Path
sys.path.insert(0, "benchmarks")
import lineitem
from measure import measure
from spark_local import spark_session
from run import KEY
from hoodpy.table import HoodieTable

spark = spark_session("load-ab", shuffle_partitions=8, driver_memory="6g")
src = lineitem.generate(Path("/tmp/hoodpy-bench/data"), 1)
def hoodpy(path):
    HoodieTable.create(spark, str(path), table_name="lineitem", record_key_fields=KEY, partition_fields=[],
                       hive_style_partitioning=True, options={}).bulk_insert(spark.read.parquet(str(src)))
def parquet(path):
    spark.read.parquet(str(src)).write.mode("overwrite").parquet(str(path))
out = {"hoodpy_bulk_insert": [], "spark_parquet_write": []}
reps = int(sys.argv[1])
for rep in range(reps + 1):
    for name, fn in (("hoodpy_bulk_insert", hoodpy), ("spark_parquet_write", parquet)):
        path = Path("/tmp/s19/load") / name
        shutil.rmtree(path, ignore_errors=True)
        with measure(spark) as m:
            fn(path)
        d = m.as_dict()
        print(rep, name, d["seconds"], {k: v for k, v in d.items() if k.startswith("cpu_")}, flush=True)
        if rep:  # rep 0 warms the JVM
            out[name].append(d)
med = {n: statistics.median(d["seconds"] for d in v) for n, v in out.items()}
out["median_s"] = med
out["ratio"] = med["hoodpy_bulk_insert"] / med["spark_parquet_write"]
print("ratio", round(out["ratio"], 3), med)
json.dump(out, open("/tmp/s19/load_ab.json", "w"), indent=1)
shutil.rmtree("/tmp/s19/load", ignore_errors=True)

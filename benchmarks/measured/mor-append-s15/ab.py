"""A/B of one MOR upsert in one process: alternating reps of variant A (a patch) and B (the code as is)."""
import argparse, shutil, statistics, sys, time
from pathlib import Path
sys.path.insert(0, "/work/wt/mor-append/benchmarks"); sys.path.insert(0, "/work/wt/mor-append")
import pyarrow.parquet as pq
import lineitem
from spark_local import spark_session
from upsert_calls import CpuClock
from mor_upsert_calls import _jvm_threads, _jvm_split, _options

p = argparse.ArgumentParser()
p.add_argument("--sf", type=float, default=0.25)
p.add_argument("--reps", type=int, default=3)
p.add_argument("--options", type=_options, default={})
p.add_argument("--load-options", type=_options, default={})
p.add_argument("--patch", default="combine")
p.add_argument("--work", default="/tmp/mor-append/ab")
a = p.parse_args()
from hoodpy.table import HoodieTable
from hoodpy.write import writer as W

def patch_combine():
    orig = W.Writer._combines_in_merge_tasks
    W.Writer._combines_in_merge_tasks = lambda self, op: orig(self, op) and not self.merge_on_read
    return lambda: setattr(W.Writer, "_combines_in_merge_tasks", orig)

PATCHES = {"combine": patch_combine, "none": lambda: (lambda: None)}
spark = spark_session("ab", shuffle_partitions=8, driver_memory="2g")
data = Path("/tmp/hoodpy-bench/data"); src = lineitem.generate(data, a.sf)
rows = pq.ParquetFile(src).metadata.num_rows
updates, inserts = int(rows * 0.05), int(rows * 0.01)
batch = data / f"sf{a.sf:g}" / f"batch-w2-conc-{updates}-{inserts}.parquet"
assert batch.exists(), batch
work = Path(a.work); suffix = "".join(f"-{k.rsplit('.', 1)[-1]}{v}" for k, v in sorted(a.load_options.items()))
golden = work / f"golden-mor-sf{a.sf:g}{suffix}"
if not (golden / ".done").exists():
    shutil.rmtree(golden, ignore_errors=True)
    HoodieTable.create(spark, str(golden), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                       table_type="MERGE_ON_READ").bulk_insert(spark.read.parquet(str(src)), options=a.load_options)
    (golden / ".done").touch()
clock, tracker = CpuClock(), spark.sparkContext.statusTracker()
res = {"A": [], "B": []}
for rep in range(2 + 2 * a.reps):
    v = "AB"[rep % 2]
    path = work / f"rep{rep}"; shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(golden, path, ignore=shutil.ignore_patterns(".done"))
    undo = PATCHES[a.patch]() if v == "A" else (lambda: None)
    group = f"ab-{rep}"; spark.sparkContext.setJobGroup(group, group)
    th, before, t0 = _jvm_threads(clock.jvm), clock.read(), time.monotonic()
    try:
        HoodieTable.for_path(spark, str(path)).upsert(spark.read.parquet(str(batch)), options=a.options)
    finally:
        undo()
    secs, after = time.monotonic() - t0, clock.read()
    r = {"s": round(secs, 2), "jobs": len(tracker.getJobIdsForGroup(group)),
         **{f"cpu_{k}": round(after[k] - before[k], 2) for k in after},
         **_jvm_split(th, _jvm_threads(clock.jvm), after["jvm"] - before["jvm"])}
    shutil.rmtree(path)
    print(v, rep, r, flush=True)
    if rep >= 2:
        res[v].append(r)
for v in "AB":
    print(v, "median", {k: statistics.median(x[k] for x in res[v]) for k in res[v][0]})
spark.stop()

"""A downstream incremental model after a 1% change upstream: what reading only the changes saves.

The upstream is TPC-H lineitem (``--sf``) in a hoodpy table with ``hoodie.table.cdc.enabled`` and otherwise a new
user's defaults (unpartitioned, bulk_insert load, file sizing by bytes), plus an ``updated_at`` column. One upsert
then changes ``--change`` of it (updates and new keys, 4:1) on the newest orders, as change streams concentrate on
recent records (``--spread uniform`` samples all rows instead). A downstream model then needs the changed rows.

Three ways of getting them, timed alternately (``--reps``) in one session, each materialized with Spark's noop sink:

* **full scan**: dbt's usual pattern, ``select * from upstream where updated_at > (select max(updated_at) from
  {{ this }})``, the downstream being a parquet copy of the upstream before the change;
* **latest_state**: ``hudi_table_changes(upstream, 'latest_state', <last consumed instant>)``, what
  ``{{ hoodpy_changes(ref(...)) }}`` runs: the file groups the window's commits wrote, filtered by commit time;
* **cdc**: ``hudi_table_changes(upstream, 'cdc', ...)``: the CDC log files the commit wrote (and base files only
  for file groups it created).

Each query's time (and the CPU time of the driver, the JVM and its Python workers, which holds on a loaded
machine) is split into driver planning (``spark.sql`` building the DataFrame: for the changes queries
hoodpy's timeline, commit metadata, file-system view and schema) and Spark's run, and its Spark jobs are counted
(job groups). A **floor** is timed with them: Spark's own ``spark.read.parquet(<latest_state's files>)`` filtered
by the window's ``_hoodie_commit_time``, what any reader of those files pays (copy-on-write tables).

Bytes are those of the files each query opens (the file slices or CDC files its plan names; the full scan: every
latest base file of the upstream, and the downstream's files for its ``max``), from the plans, not from Spark's
input metrics (which need the JVM). Each query's rows are checked against the change.

Layouts (``--max-file-mb``): a new user's file sizing (SF 1 loads into 2 files), or smaller files, the layout a
user picks for change queries: a commit rewrites only the files holding changed keys, so ``latest_state`` reads
those. The three queries always run on the same table.

    .venv/bin/python benchmarks/changes.py --sf 1 --reps 3 --out /tmp/changes.json
    .venv/bin/python benchmarks/changes.py --sf 1 --reps 3 --max-file-mb 16 --out /tmp/changes-small.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineitem import RECORD_KEY, generate, upsert_batch  # noqa: E402
from spark_local import hoodpy_session, report  # noqa: E402

UPDATED_AT = "updated_at"


def with_updated_at(table: pa.Table, value: int) -> pa.Table:  # the change batch (small: through Arrow)
    return table.append_column(UPDATED_AT, pa.array([value] * table.num_rows, pa.int64()))


def tree_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its descendants: the driver, Spark's JVM (local mode:
    the executors too) and its Python workers. Unlike wall time, it holds on a loaded machine."""
    parents, own = {}, {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents.setdefault(int(fields[1]), []).append(int(entry))
            own[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += own.get(pid, 0.0)
        todo.extend(parents.get(pid, ()))
    return total


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*.parquet"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, default=0.1)
    p.add_argument("--change", type=float, default=0.01, help="share of the rows changed (default 1%%)")
    p.add_argument("--spread", choices=("newest", "uniform"), default="newest",
                   help="newest: the change samples the newest 2x --change of the orders; uniform: all rows")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--max-file-mb", type=float, default=None,
                   help="hoodie.parquet.max.file.size of the upstream in MB (default: hoodpy's, 120 MB)")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--out", default="/tmp/hoodpy-changes.json")
    args = p.parse_args()

    source_path = generate(Path(args.data), args.sf)
    source = pq.read_table(source_path).drop_columns(["ship_year", "ship_month"])
    changed = int(source.num_rows * args.change)
    updates, inserts = changed * 4 // 5, changed - changed * 4 // 5
    newest = 2 * changed if args.spread == "newest" else None
    batch = with_updated_at(upsert_batch(source, updates=updates, inserts=inserts, concentrated=False,
                                         newest=newest), 2)

    from hoodpy import HoodieTable
    from hoodpy.read.cdc import plan_cdc
    from hoodpy.read.query import plan_incremental

    with hoodpy_session("changes-bench", shuffle_partitions=4, prefix="hoodpy-changes-") as (spark, work):
        upstream, downstream = str(work / "lineitem"), work / "downstream"
        from pyspark.sql import functions as F

        # Read by Spark, not handed over from Arrow: a 6M-row table does not fit through the driver's JVM heap.
        loaded = spark.read.parquet(str(source_path)).drop("ship_year", "ship_month") \
            .withColumn(UPDATED_AT, F.lit(1).cast("long"))
        options = {"hoodie.table.cdc.enabled": "true"}
        if args.max_file_mb:
            options["hoodie.parquet.max.file.size"] = str(int(args.max_file_mb * (1 << 20)))
        table = HoodieTable.create(spark, upstream, table_name="lineitem", record_key_fields=list(RECORD_KEY),
                                   precombine_field=UPDATED_AT, options=options)
        t0 = time.perf_counter()
        load = table.write(loaded, "bulk_insert").instant_time
        load_s = time.perf_counter() - t0
        loaded.write.parquet(str(downstream))  # the model as of the last run
        t0 = time.perf_counter()
        table = HoodieTable.for_path(spark, upstream)
        table.upsert(spark.createDataFrame(batch))
        change_s = time.perf_counter() - t0

        table = HoodieTable.for_path(spark, upstream)
        latest = list(table.file_system_view().latest_file_slices())
        full_bytes = sum(s.base_file.size for s in latest)
        inc = plan_incremental(table, load)
        inc_bytes = sum((s.base_file.size if s.base_file else 0) + sum(lf.size for lf in s.log_files)
                        for s in inc.slices)
        cdc_paths = {f for split in plan_cdc(table, load) for f in
                     (*split.cdc_files, split.before_file, split.after_file) if f}
        cdc_bytes = sum(os.path.getsize(table.storage.full_path(f)) for f in cdc_paths)
        down_bytes = folder_bytes(downstream)

        spark.read.parquet(str(downstream)).createOrReplaceTempView("downstream")
        spark.read.format("hoodpy").load(upstream).createOrReplaceTempView("upstream")
        queries = {
            "full_scan": f"select * from upstream where {UPDATED_AT} > (select max({UPDATED_AT}) from downstream)",
            "latest_state": f"select * from hudi_table_changes('{upstream}', 'latest_state', '{load}')",
            "cdc": f"select * from hudi_table_changes('{upstream}', 'cdc', '{load}')",
        }
        keys = set(zip(*(batch.column(k).to_pylist() for k in RECORD_KEY), strict=True))
        floor_files = [table.storage.uri(s.base_file.path) for s in inc.slices if s.base_file is not None]
        floor_ok = bool(floor_files) and all(not s.log_files for s in inc.slices)
        frames = {name: (lambda sql=sql: spark.sql(sql)) for name, sql in queries.items()}
        if floor_ok:
            frames["floor"] = lambda: spark.read.parquet(*floor_files).where(inc.window.column())
        seconds: dict[str, list[float]] = {name: [] for name in frames}
        planning: dict[str, list[float]] = {name: [] for name in frames}
        cpu: dict[str, list[float]] = {name: [] for name in frames}
        jobs: dict[str, int] = {}
        counts: dict[str, int] = {}
        tracker = spark.sparkContext.statusTracker()
        for rep in range(args.reps + 1):  # the first round warms the JVM and the caches: not counted
            for name, frame in frames.items():
                group = f"changes-{name}-{rep}"
                spark.sparkContext.setJobGroup(group, name)
                c0, t0 = tree_cpu_seconds(), time.perf_counter()
                df = frame()
                t1 = time.perf_counter()
                df.write.format("noop").mode("overwrite").save()
                if rep:
                    seconds[name].append(time.perf_counter() - t0)
                    planning[name].append(t1 - t0)
                    cpu[name].append(tree_cpu_seconds() - c0)
                jobs[name] = len(tracker.getJobIdsForGroup(group))
        for name, frame in frames.items():
            counts[name] = frame().count()
        got = {tuple(r) for r in spark.sql(queries["latest_state"]).select(*RECORD_KEY).collect()}
        if got != keys or counts["full_scan"] != batch.num_rows or counts["cdc"] != batch.num_rows or \
                counts.get("floor", batch.num_rows) != batch.num_rows:
            raise SystemExit(f"wrong rows: counts {counts}, expected {batch.num_rows}; latest_state keys "
                             f"{'match' if got == keys else 'differ'}")
        med = {name: statistics.median(v) for name, v in seconds.items()}
        result = {
            "sf": args.sf, "max_file_mb": args.max_file_mb, "rows": source.num_rows, "changed_rows": batch.num_rows,
            "updates": updates,
            "inserts": inserts, "spread": args.spread, "reps": args.reps,
            "load_seconds": round(load_s, 2), "change_upsert_seconds": round(change_s, 2),
            "upstream_files": len(latest), "upstream_bytes": full_bytes, "downstream_bytes": down_bytes,
            "bytes": {"full_scan": full_bytes + down_bytes, "latest_state": inc_bytes, "cdc": cdc_bytes},
            "files": {"full_scan": len(latest), "latest_state": len(inc.slices), "cdc": len(cdc_paths)},
            "seconds": {name: [round(s, 3) for s in v] for name, v in seconds.items()},
            "median_seconds": {name: round(v, 3) for name, v in med.items()},
            "median_planning_seconds": {name: round(statistics.median(v), 3) for name, v in planning.items()},
            "median_cpu_seconds": {name: round(statistics.median(v), 3) for name, v in cpu.items()},
            "spark_jobs": jobs,
            "ratios_to_full_scan": {
                name: {"bytes": round((cdc_bytes if name == "cdc" else inc_bytes) / (full_bytes + down_bytes), 4),
                       "seconds": round(med[name] / med["full_scan"], 3),
                       "cpu_seconds": round(statistics.median(cpu[name]) / statistics.median(cpu["full_scan"]), 3)}
                for name in med if name != "full_scan"},
            "targets": "changes query <= 5% of the bytes and <= 0.2x the time of the full scan (issue #19)",
        }
        report(result, args.out)


if __name__ == "__main__":
    main()

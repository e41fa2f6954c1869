"""CPU split of snapshot reads (Q1-style aggregate) on tables benchmarks/run.py --workloads mor leaves in
<work>/scratch (mor-read-cow, mor-read-1, mor-read-5): per read, CPU seconds of the driver's Python, the JVM
and the Python workers (from /proc, so noise from other processes on the machine does not count), Spark jobs
and stages, wall seconds. Reads alternate between tables (A/B/C, ...), medians reported. ``cpu_sampler_s`` is
the measuring thread's share of ``cpu_driver_s`` (it grows with wall time, not with the read's work).

    python benchmarks/mor_read_profile.py --work /tmp/mr-work --reps 5

``--build SF`` first builds those three tables as the mor workload does (bulk_insert load; the COW table
upserted with the workload's batch, the MOR tables with small-file handling off so updates go to logs: one
batch, or five seeded update batches), without running the workload's timed upserts and compaction.
``--baseline FILE`` reads each table also with another slice_scan.py (alternating, same process: A/B);
``--columns`` also reads each table with ``read(columns=...)`` of the aggregate's columns (alternating);
``--phases`` gives the CPU seconds of each phase of the Python tasks' work (one part per slice), in this
process without Spark.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import measure  # noqa: E402
from run import Q1_COLUMNS, q1_aggregate  # noqa: E402
from spark_local import spark_session  # noqa: E402


def phases(work: Path, names: list[str], reps: int) -> dict:
    """CPU seconds of each phase of the Python tasks' work on every slice with logs of the tables (in this
    process, pyarrow only: what a read's Python tasks do, without Spark), medians over ``reps``."""
    import numpy as np
    import pyarrow as pa

    from pyspark.sql.pandas.types import to_arrow_schema

    from hoodpy.arrow_rows import align
    from hoodpy.config.write import event_time_ordering_field
    from hoodpy.file_group.log_file import effective_blocks
    from hoodpy.meta_fields import RECORD_KEY
    from hoodpy.read import file_scan, slice_merge, slice_parts
    from hoodpy.table import HoodieTable

    out = {}
    for n in names:
        table = HoodieTable.for_path(None, str(work / "scratch" / n))
        view = table.file_system_view()
        slices = [s for s in view.latest_file_slices() if s.log_files]
        if not slices:
            continue
        committed = view.timeline.committed(None)
        schema = to_arrow_schema(table.spark_schema(timeline=view.timeline))  # meta columns first
        ordering = event_time_ordering_field(table.config)
        storage = table.storage
        runs: list[dict] = []
        for _ in range(reps):
            t: dict[str, float] = {}

            def timed(name, fn, *a, **k):
                t0 = time.process_time()
                r = fn(*a, **k)
                t[name] = t.get(name, 0.0) + time.process_time() - t0
                return r

            for s in slices:
                rels = [lf.path for lf in s.log_files]
                raw = timed("log bytes", lambda: [(storage.full_path(r), storage.read_bytes(r)) for r in rels])
                blocks = timed("log blocks", effective_blocks, raw, committed).blocks
                keys = timed("log keys", slice_parts.named_keys, blocks)
                if s.base_file is not None:
                    timed("base key positions", file_scan.key_positions, storage, s.base_file.path, RECORD_KEY, keys)
                decoded = timed("log decode", slice_merge.decode_blocks, blocks, schema)
                base = None
                if s.base_file is not None and ordering:  # commit time: the logs win, the base is not read
                    compared = pa.schema([schema.field(RECORD_KEY), *([schema.field(ordering)] if ordering else [])])
                    base = timed("base key+ordering rows", file_scan.read_base_rows, storage, s.base_file.path,
                                 compared, RECORD_KEY, keys, position_column="_pos")
                wide = schema.append(pa.field("_pos", pa.int64()))
                logs = [d if isinstance(d, list) else align(d, wide) for d in decoded]
                merged = timed("merge", slice_merge.merge_decoded, base, logs, wide, ordering, False)[0]
                if base is not None:
                    won = merged.filter(merged.column("_pos").is_valid()).column("_pos").to_numpy()
                    t["base rows winning"] = t.get("base rows winning", 0) + len(won)
                    if len(won):
                        timed("base winners read", file_scan.read_base_positions, storage, s.base_file.path, schema,
                              np.asarray(won))
                t["merged rows"] = t.get("merged rows", 0) + merged.num_rows
                timed("to batches", merged.to_batches)
            runs.append(t)
        out[n] = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
        out[n]["slices with logs"] = len(slices)
        out[n]["log files"] = sum(len(s.log_files) for s in slices)
    return out


def build(spark, work: Path, sf: float, data: str) -> None:
    """mor-read-cow, mor-read-1 and mor-read-5 in ``work``/scratch, as run.py's ``w_mor`` leaves them."""
    import lineitem
    import pyarrow.parquet as pq
    from run import Bench

    args = argparse.Namespace(work=str(work), data=data, out=str(work / "out"), driver_memory=None, sf=sf,
                              reps=1, warmup=0, tuned={})
    bench = Bench.__new__(Bench)  # the session is ours: Bench.__init__ would start its own
    bench.args, bench.work, bench.data, bench.spark = args, work, Path(data), spark
    rows = pq.ParquetFile(lineitem.generate(bench.data, sf)).metadata.num_rows
    updates, inserts = int(rows * 0.05), int(rows * 0.01)
    batch = bench.batch_file(sf, True, updates, inserts, "w2")
    logs_only = {"hoodie.parquet.small.file.limit": "0"}
    cow = bench.copy_of(bench.golden(sf, "unpartitioned", "hoodpy"), "mor-read-cow")
    mor1 = bench.copy_of(bench.golden(sf, "unpartitioned", "hoodpy-mor"), "mor-read-1")
    mor5 = bench.copy_of(bench.golden(sf, "unpartitioned", "hoodpy-mor"), "mor-read-5")
    bench.hoodpy_open(cow).upsert(spark.read.parquet(str(batch)))
    bench.hoodpy_open(mor1).upsert(spark.read.parquet(str(batch)), options=logs_only)
    for seed in range(5):
        bench.hoodpy_open(mor5).upsert(spark.read.parquet(str(bench.batch_file_seeded(sf, seed, updates))),
                                       options=logs_only)


def baseline_reader(path: str):
    """``read_file_slices`` of another version of hoodpy/read/slice_scan.py (e.g. ``git show
    main:hoodpy/read/slice_scan.py > /tmp/old.py``), its task functions pickled by value so that Spark's
    workers need not import it: the same process reads with both, alternating."""
    import importlib.util

    from pyspark import cloudpickle

    spec = importlib.util.spec_from_file_location("baseline_slice_scan", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    cloudpickle.register_pickle_by_value(module)
    return module.read_file_slices


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--work", default="/tmp/mr-work")
    p.add_argument("--tables", default="mor-read-cow,mor-read-1,mor-read-5")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", default=None)
    p.add_argument("--build", type=float, default=None, help="first build the tables at this scale factor")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data", help="generated TPC-H data (as run.py's)")
    p.add_argument("--driver-memory", default="3g")
    p.add_argument("--phases", action="store_true", help="CPU by phase of the Python tasks' work, no Spark")
    p.add_argument("--baseline", default=None, help="a slice_scan.py to read with too, alternating (A/B)")
    p.add_argument("--columns", action="store_true",
                   help="also read with read(columns=...) of the columns the Q1 aggregate uses, alternating")
    args = p.parse_args()
    if args.phases:
        print(json.dumps(phases(Path(args.work), args.tables.split(","), args.reps), indent=1))
        return
    spark = spark_session("mor-read-profile", shuffle_partitions=8, driver_memory=args.driver_memory)
    if args.build is not None:
        build(spark, Path(args.work), args.build, args.data)
    from hoodpy.table import HoodieTable

    import hoodpy.read.query as query

    variants = {"": (query.read_file_slices, None)}  # label -> (read_file_slices, read's columns)
    if args.baseline:
        variants["baseline "] = (baseline_reader(args.baseline), None)
    if args.columns:
        variants["columns "] = (query.read_file_slices, Q1_COLUMNS)
    names = args.tables.split(",")
    runs: dict[str, list[dict]] = {v + n: [] for n in names for v in variants}
    for n in names:  # warm-up: JIT, Python workers
        for reader, columns in variants.values():
            query.read_file_slices = reader
            q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n)).read(columns=columns))
    for _ in range(args.reps):
        for n in names:
            for v, (reader, columns) in variants.items():
                query.read_file_slices = reader
                with measure(spark) as m:
                    q1_aggregate(HoodieTable.for_path(spark, str(Path(args.work) / "scratch" / n))
                                 .read(columns=columns))
                runs[v + n].append(m.as_dict())
    names = list(runs)
    summary = {n: {k: statistics.median(r[k] for r in rs) for k in rs[0] if isinstance(rs[0][k], (int, float))}
               for n, rs in runs.items()}
    base = summary[names[0]]["seconds"]
    for n in names:
        summary[n]["wall / first"] = round(summary[n]["seconds"] / base, 3)
    print(json.dumps(summary, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"runs": runs, "medians": summary}, indent=1))


if __name__ == "__main__":
    main()

"""One bulk_insert NONE write task's Python side, in process, without Spark (issue #16): the lineitem rows of
a generated source file, fed as Arrow batches of ``--batch`` rows (spark.sql.execution.arrow.maxRecordsPerBatch)
through rolling_bulk_insert_partition as an unpartitioned first load's task runs them (keys made in the task,
no partition path column, record size measured on the first rows). Prints CPU seconds per run, or a cProfile.

    PYTHONPATH=$PWD python benchmarks/bulk_insert_task_profile.py --rows 1500000 --profile

``--decimals doubles`` feeds the decimal columns as the JVM ships them now (doubles, rebuilt in the task:
hoodpy.write.decimal_transfer); ``--zstd-level`` writes at another zstd level than parquet-mr's 3.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import lineitem  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hoodpy.arrow_rows import _seq_counter  # noqa: E402
from hoodpy.index.bloom_filter import serialized_sizes  # noqa: E402
from hoodpy.keygen import COMPLEX_KEY_GENERATOR, KeyGenerator  # noqa: E402
from hoodpy.write import base_file  # noqa: E402
from hoodpy.write.base_file import BaseFileOptions  # noqa: E402
from hoodpy.write.decimal_transfer import MAX_PRECISION  # noqa: E402
from hoodpy.write.bucket_assignment import SizingConfig  # noqa: E402
from hoodpy.write.bulk_insert_modes import RollingContext, rolling_bulk_insert_partition  # noqa: E402
from hoodpy.write.merge import MergeContext  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=0.25)
    ap.add_argument("--rows", type=int, default=None, help="the first rows of the source (default: all)")
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--data", default="/tmp/hoodpy-bench/data")
    ap.add_argument("--decimals", choices=["decimal", "doubles"], default="doubles",
                    help="decimal(p<=15) columns arrive as decimals (before) or as doubles (as shipped now)")
    ap.add_argument("--zstd-level", type=int, default=None)
    args = ap.parse_args()
    if args.zstd_level is not None:
        base_file._PYARROW_CODECS["zstd"] = ("zstd", args.zstd_level)
    src = pq.read_table(lineitem.generate(Path(args.data), args.sf))
    if args.rows:
        src = src.slice(0, args.rows)
    shipped = tuple((f.name, f.type.precision, f.type.scale) for f in src.schema
                    if pa.types.is_decimal(f.type) and f.type.precision <= MAX_PRECISION)
    if args.decimals == "decimal":
        shipped = ()
    fed = src.cast(pa.schema([pa.field(f.name, pa.float64()) if any(f.name == s[0] for s in shipped) else f
                              for f in src.schema]))
    batches = fed.combine_chunks().to_batches(max_chunksize=args.batch)
    out = tempfile.mkdtemp(prefix="bulk-task-")
    options = BaseFileOptions()
    keygen = KeyGenerator(tuple(lineitem.RECORD_KEY), (), COMPLEX_KEY_GENERATOR)

    def run() -> pa.Table:
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        _seq_counter.clear()
        merge = MergeContext(base_uri=out, instant_time="20240101000000000", data_schema=src.schema, options=options)
        sizing = SizingConfig(max_file_size=125829120, small_file_limit=104857600, record_size=1024)
        ctx = RollingContext(merge, None, sizing, tuple(serialized_sizes()), keygen, partition_path="",
                             decimals=shipped)
        return pa.Table.from_batches(list(rolling_bulk_insert_partition(ctx, iter(batches))))

    try:
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(run)
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            return
        for _ in range(args.reps):
            started = time.process_time()
            stats = run()
            print(f"cpu {time.process_time() - started:.2f} s", stats.select(["num_writes", "file_size"]).to_pylist())
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()

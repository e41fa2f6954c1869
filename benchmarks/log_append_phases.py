"""Where one merge-on-read log append task's time goes, in process (no Spark): the ``mor`` workload's updates
for one file group (run.py's concentrated batch, half its updates), appended as hoodpy's deltacommit task does
(:func:`hoodpy.write.log_append.append_file_group`), and its phases timed one by one: the meta columns, the
Avro (or parquet) encoding of the records, the block framing, the file write. CPU seconds of this process,
median of ``--reps``.

    .venv/bin/python benchmarks/log_append_phases.py --sf 1 --reps 5
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402


def _cpu() -> float:
    return time.process_time()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sf", type=float, default=1)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--data", default="/tmp/hoodpy-bench/data")
    p.add_argument("--format", default="avro", choices=["avro", "parquet"])
    args = p.parse_args()

    from hoodpy.file_group import avro_columns, log_writer
    from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
    from hoodpy.schema.avro import avro_schema_from_arrow, avro_schema_to_json
    from hoodpy.timeline import log_format as lf
    from hoodpy.write.base_file import BaseFileOptions
    from hoodpy.write.log_append import AppendContext, LogSlice, append_file_group
    from hoodpy.write.merge import OP, OP_UPSERT, TARGET_FILE_ID, MergeContext

    src = lineitem.generate(Path(args.data), args.sf)
    rows = pq.ParquetFile(src).metadata.num_rows
    updates, inserts = int(rows * 0.05), int(rows * 0.01)
    batch_path = Path(args.data) / f"sf{args.sf:g}" / f"batch-w2-conc-{updates}-{inserts}.parquet"
    batch = pq.read_table(batch_path) if batch_path.exists() else lineitem.upsert_batch(
        pq.read_table(src), updates=updates, inserts=inserts, concentrated=True)
    batch = batch.slice(0, updates // 2)
    data_schema = batch.schema
    keys = pc.binary_join_element_wise(
        pc.binary_join_element_wise("l_orderkey", batch.column("l_orderkey").cast(pa.string()), ":"),
        pc.binary_join_element_wise("l_linenumber", batch.column("l_linenumber").cast(pa.string()), ":"), ",")
    n = batch.num_rows
    incoming = batch.append_column(RECORD_KEY, keys).append_column(
        PARTITION_PATH, pa.repeat(pa.scalar("", pa.string()), n)).append_column(
        OP, pa.repeat(pa.scalar(OP_UPSERT, pa.int8()), n)).append_column(
        TARGET_FILE_ID, pa.repeat(pa.scalar("fg-1", pa.string()), n))
    schema_json = avro_schema_to_json(log_writer.log_schema(avro_schema_from_arrow(data_schema, "lineitem")))
    instant = "20261126190000000"
    with tempfile.TemporaryDirectory(prefix="log-append-phases-") as work:
        merge = MergeContext(base_uri=work, instant_time=instant, data_schema=data_schema,
                             options=BaseFileOptions())
        ctx = AppendContext(merge=merge, schema_json=schema_json, block_format=args.format)
        phases: dict[str, list[float]] = {}

        def timed(name, fn, *a, **k):
            started = _cpu()
            out = fn(*a, **k)
            phases.setdefault(name, []).append(_cpu() - started)
            return out

        fields = avro_columns.flat_fields(schema_json)
        for rep in range(args.reps + 1):
            started = _cpu()
            append_file_group(ctx, "", f"fg-{rep}", LogSlice(instant), incoming)
            whole = _cpu() - started
            # The same work step by step (what append_file_group does, inlined): the phases' split.
            from hoodpy.arrow_rows import add_meta_columns, align, finalize
            rows_ = timed("meta columns", lambda: finalize(
                add_meta_columns(align(incoming, data_schema), keys, "", instant),
                pa.repeat(pa.scalar(True), n), instant_time=instant, file_name="fg", task_partition=0))
            if args.format == "avro":
                records = timed("avro encode", avro_columns.encode_records, rows_, fields)
                content = timed("block content", lambda: b"".join([b"\0" * 8, records]))
            else:
                from hoodpy.write.base_file import encode_parquet

                def parquet():
                    sink = io.BytesIO()
                    encode_parquet(sink, rows_, merge.options, {})
                    return sink.getvalue()
                content = timed("parquet encode", parquet)
            block = timed("block framing", lf.encode_block, lf.AVRO_DATA_BLOCK,
                          {lf.INSTANT_TIME: instant, lf.SCHEMA: schema_json}, content)
            timed("file write", lambda: Path(work, f"blob-{rep}").write_bytes(block))
            if rep:
                phases.setdefault("append_file_group (whole)", []).append(whole)
            else:
                phases = {}  # the first warms up
        print(f"rows {n}, block {len(block) / 1e6:.1f} MB, format {args.format}")
        for name, values in phases.items():
            print(f"{name:30s} {statistics.median(values):.3f} CPU s (median of {len(values)})")


if __name__ == "__main__":
    main()

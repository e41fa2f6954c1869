"""CPU seconds of decoding one Avro data block into Arrow (``avro_block.avro_block_table``), in process.

The block is written the way a merge-on-read upsert writes it (log_writer.avro_data_block's content: meta
columns first, the flat column-wise encoder) from the first ``--rows`` rows of a lineitem batch. Reported:
medians of time.process_time over ``--reps`` reps, for the whole decode and its two parts (record offsets,
column decode); ``--baseline`` alternates rep by rep with the decode of another checkout's hoodpy (a path to
its root), same block, so both figures come from the same run. ``--profile`` prints a cProfile of one decode.

    .venv/bin/python benchmarks/avro_block_decode.py \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 7 [--baseline /work/main]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
import statistics
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hoodpy.file_group import avro_block  # noqa: E402
from hoodpy.file_group.avro_columns import encode_records, flat_fields  # noqa: E402
from hoodpy.file_group.log_writer import log_schema  # noqa: E402
from hoodpy.meta_fields import META_COLUMNS  # noqa: E402
from hoodpy.schema.avro import avro_schema_from_arrow, avro_schema_to_json  # noqa: E402

INSTANT = "20991231235959000"


def block(batch: str, rows: int) -> tuple[bytes, str, pa.Schema]:
    """An Avro data block's content of the batch's first ``rows`` rows, its writer schema and Arrow schema."""
    data = pq.read_table(batch).slice(0, rows)
    n = data.num_rows
    keys = pc.cast(data["l_orderkey"], pa.string())
    meta = [pa.repeat(pa.scalar(INSTANT), n),
            pc.binary_join_element_wise(f"{INSTANT}_0", pc.cast(pa.array(range(n)), pa.string()), "_"),
            keys, pa.repeat(pa.scalar(""), n), pa.repeat(pa.scalar("f1-0_0-1-1_" + INSTANT + ".parquet"), n)]
    for name, column in reversed(list(zip(META_COLUMNS, meta))):
        data = data.add_column(0, name, column)
    schema_json = avro_schema_to_json(log_schema(avro_schema_from_arrow(data.schema, "lineitem")))
    records = encode_records(data, flat_fields(schema_json))
    assert records is not None, "the batch's columns do not encode column-wise"
    return struct.pack(">ii", 3, n) + records, schema_json, data.schema


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", default="/tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet")
    parser.add_argument("--rows", type=int, default=300_060)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--baseline", help="root of another hoodpy checkout to alternate with")
    args = parser.parse_args()
    content, schema_json, target = block(args.batch, args.rows)
    print(f"block: {len(content):,} bytes, {args.rows:,} records, {len(target)} fields")
    routes = {"this": avro_block}
    if args.baseline:
        for name in [m for m in sys.modules if m == "hoodpy" or m.startswith("hoodpy.")]:
            del sys.modules[name]
        sys.path.insert(0, args.baseline)
        routes["baseline"] = importlib.import_module("hoodpy.file_group.avro_block")
        sys.path.pop(0)
        expected = avro_block.avro_block_table(content, schema_json, target)
        assert routes["baseline"].avro_block_table(content, schema_json, target).equals(expected)
    times: dict[str, list[float]] = {name: [] for name in routes}
    parts: dict[str, list[float]] = {"record_offsets": [], "decode_records": []}
    fields = flat_fields(schema_json)
    for _ in range(args.reps):
        for name, module in routes.items():
            times[name].append(cpu(lambda: module.avro_block_table(content, schema_json, target)))
        offsets = []
        parts["record_offsets"].append(cpu(lambda: offsets.append(avro_block.record_offsets(content))))
        o = offsets[0]
        parts["decode_records"].append(cpu(lambda: avro_block.decode_records(content, o[:-1], o[1:] - 4, fields,
                                                                              target)))
    for name, values in {**times, **parts}.items():
        reps = ", ".join(f"{v:.3f}" for v in values)
        print(f"{name:>16}: median {statistics.median(values):.3f} s CPU  (reps {reps})")
    if args.profile:
        profiler = cProfile.Profile()  # wall clock: a process_time timer would outweigh the small calls
        profiler.runcall(avro_block.avro_block_table, content, schema_json, target)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()

"""CPU seconds of compacting one merge-on-read file slice, in process (no Spark), by route (``--modes``):
``whole_slice`` (``in_place`` False: read the whole base, merge as snapshot reads do, bloom over every key),
``rewrite`` (compaction in place, :mod:`hoodpy.services.compaction.slice_compact`, every row group decoded and
encoded again: ``splice`` False) and ``spliced`` (in place, the row groups no log record changes copied byte for
byte, the default), alternating rep by rep, medians of time.process_time (the whole process, every thread),
wall and calling-thread CPU too.

The slice is built without Spark: an existing hoodpy base file, and one log file holding one Avro data block
(the default log block format) of the batch rows whose key the file holds (``--inserts`` adds the others), as
a merge-on-read upsert with the small-file limit off writes them (benchmarks/run.py's ``compaction_of_1_log``).
The routes' outputs are checked: same rows (by key), and the in-place ones in base-file order.

    .venv/bin/python benchmarks/compaction_slice.py \\
        --file /tmp/hoodpy-bench/work-sf1/golden-sf1/hoodpy-unpartitioned/b346bb0a-...parquet \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 --modes rewrite,spliced
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hoodpy import arrow_rows  # noqa: E402
from hoodpy.file_group.log_writer import avro_data_block, log_schema  # noqa: E402
from hoodpy.file_group.naming import parse_base_file_name  # noqa: E402
from hoodpy.meta_fields import (  # noqa: E402
    COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY,
)
from hoodpy.schema import avro_schema_from_arrow, avro_schema_to_json  # noqa: E402
from hoodpy.services.compaction import execute  # noqa: E402
from hoodpy.timeline.compaction_plan import CompactionOperation  # noqa: E402
from hoodpy.write import merge  # noqa: E402
from hoodpy.write.base_file import BaseFileOptions  # noqa: E402
from merge_task_phases import incoming_table  # noqa: E402

LOG_INSTANT, COMPACTION_INSTANT = "20991231235959000", "20991231235959999"


def log_block(batch_path: str, base: Path, key_fields: list[str], inserts: bool) -> tuple[bytes, int]:
    """One Avro data block of the batch's rows as the deltacommit writes them (meta columns first)."""
    file_keys = pq.read_table(base, columns=[RECORD_KEY])[RECORD_KEY]
    incoming = incoming_table(batch_path, file_keys, key_fields, "", "", 1 << 30)
    if not inserts:
        incoming = incoming.filter(pc.is_in(incoming[RECORD_KEY], value_set=file_keys))
    data = incoming.drop_columns([RECORD_KEY, PARTITION_PATH, merge.OP, merge.TARGET_FILE_ID])
    n = data.num_rows
    meta = {COMMIT_TIME: pa.repeat(pa.scalar(LOG_INSTANT), n),
            COMMIT_SEQNO: pc.binary_join_element_wise(f"{LOG_INSTANT}_0", pc.cast(pa.array(range(n)), pa.string()),
                                                      "_"),
            RECORD_KEY: incoming[RECORD_KEY], PARTITION_PATH: pa.repeat(pa.scalar(""), n),
            FILE_NAME: pa.repeat(pa.scalar(base.name), n)}
    rows = pa.table({**meta, **{c: data[c] for c in data.column_names}})
    schema_json = avro_schema_to_json(log_schema(avro_schema_from_arrow(data.schema, "lineitem")))
    return avro_data_block(rows, LOG_INSTANT, schema_json), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True, help="an existing base file written by hoodpy")
    ap.add_argument("--batch", required=True, help="parquet of upserted rows (data columns only)")
    ap.add_argument("--key-fields", default="l_orderkey,l_linenumber")
    ap.add_argument("--ordering-field", default=None, help="event-time ordering by this field (default: commit time)")
    ap.add_argument("--inserts", action="store_true", help="the log holds the batch's new keys too")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="whole_slice,rewrite,spliced",
                    help="comma-separated routes, run in turn each rep: whole_slice, rewrite, spliced")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()

    src = Path(args.file)
    work = Path(tempfile.mkdtemp(prefix="compaction-slice-"))
    try:
        shutil.copy(src, work / src.name)
        parsed = parse_base_file_name(src.name)
        block, log_records = log_block(args.batch, src, args.key_fields.split(","), args.inserts)
        log_name = f".{parsed.file_id}_{parsed.instant_time}.log.1_0-1-0"
        (work / log_name).write_bytes(block)
        print(f"slice: base {src.stat().st_size} B, log {len(block)} B, {log_records} log records", flush=True)
        file_schema = pq.read_schema(src)
        schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS]
                           + [f for f in file_schema if f.name not in META_COLUMNS])
        op = CompactionOperation("", parsed.file_id, parsed.instant_time, src.name, (log_name,))
        ctx = execute._JobContext(str(work), COMPACTION_INSTANT, schema, BaseFileOptions(), [op],
                                  frozenset({LOG_INSTANT}), args.ordering_field)
        routes = {"whole_slice": dict(in_place=False), "rewrite": dict(in_place=True, splice=False),
                  "spliced": dict(in_place=True, splice=True)}
        modes = args.modes.split(",")
        cpu: dict[str, list[float]] = {m: [] for m in modes}
        wall: dict[str, list[float]] = {m: [] for m in modes}
        main_thread: dict[str, list[float]] = {m: [] for m in modes}
        outputs: dict[str, pa.Table] = {}
        for rep in range(args.reps * len(modes)):
            name = modes[rep % len(modes)]
            arrow_rows._seq_counter.clear()
            t0, w0, m0 = time.process_time(), time.perf_counter(), time.thread_time()
            stat = execute._compact(dataclasses.replace(ctx, **routes[name]), op)
            cpu[name].append(time.process_time() - t0)
            wall[name].append(time.perf_counter() - w0)
            main_thread[name].append(time.thread_time() - m0)
            written = work / stat["path"]
            if name not in outputs:
                outputs[name] = pq.read_table(written, columns=[RECORD_KEY, COMMIT_TIME, COMMIT_SEQNO, "l_comment"])
                outputs[name + " groups"] = pq.ParquetFile(written).metadata.num_row_groups
            written.unlink()
            print(f"rep {rep}: {name} {cpu[name][-1]:.2f} CPU s, {wall[name][-1]:.2f} wall s "
                  f"(writes {stat['num_writes']}, updates {stat['num_update_writes']}, inserts {stat['num_inserts']}, "
                  f"{stat['total_write_bytes']} B)", flush=True)
        first = outputs[modes[0]].sort_by(RECORD_KEY)
        same_rows = all(outputs[m].sort_by(RECORD_KEY).equals(first) for m in modes[1:])
        base_keys = pq.read_table(src, columns=[RECORD_KEY])[RECORD_KEY]
        in_base_order = {m: outputs[m][RECORD_KEY].slice(0, len(base_keys)).equals(base_keys)
                         for m in modes if m != "whole_slice"}
        med = {k: statistics.median(v) for k, v in cpu.items()}
        result = {"cpu_s": {k: round(v, 3) for k, v in med.items()},
                  "wall_s": {k: round(statistics.median(v), 3) for k, v in wall.items()},
                  "main_thread_cpu_s": {k: round(statistics.median(v), 3) for k, v in main_thread.items()},
                  **{f"cpu {m} / {modes[0]}": round(med[m] / med[modes[0]], 3) for m in modes[1:]},
                  "row_groups": {m: outputs[m + " groups"] for m in modes},
                  "base_row_groups": pq.ParquetFile(src).metadata.num_row_groups,
                  "same_rows": same_rows, "in_place_keeps_base_order": in_base_order}
        print(json.dumps(result, indent=2))
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

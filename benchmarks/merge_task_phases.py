"""CPU seconds of one copy-on-write merge task, per phase, in process (no Spark): hoodpy's merge_file_group on
an existing base file and an incoming batch, next to the floor (pyarrow reading and rewriting the same file at
the same codec).

The incoming table is built as the merge task receives it from Spark's applyInArrow: the working columns
(record key, partition path, op, target file id) plus the data columns, in Arrow batches of
``--arrow-batch`` rows (spark.sql.execution.arrow.maxRecordsPerBatch). Every batch row targets the file:
rows whose key the file holds are updates, the others inserts (the benchmark's concentrated upsert puts its
300k updates and 60k inserts into one file group of the SF 1 table).

Phases are cProfile cumulative CPU of the functions doing each step (process_time clock), median over reps;
``total`` is time.process_time around the call. Load-independent enough to compare A/B on a busy machine.
The merge overlaps steps on ``--threads`` threads (MergeContext.threads): cProfile sees the calling thread
only, so a phase's figure includes the CPU other threads spend meanwhile (the data-column read shows under
key matching, "rest"); CPU and wall totals are the whole process. ``--ab`` alternates threads=1 (each step in
turn) with ``--threads`` rep by rep, reports both, and checks that both wrote the same bytes. Wall time needs a
quiet machine; the calling thread's CPU (time.thread_time) shows the work moved off it on a busy one.

``--ab-rev REV`` compares code instead: the merge of git revision REV (its hoodpy, extracted to a temporary
tree) against this tree's, each rep one fresh process per side, sides alternating (the order flips each rep).
Per side: median CPU (user + sys), minor page faults and peak RSS of the merge call alone (getrusage around
it: a fresh process first-touches its memory as a Python worker does), wall, and whether the sides wrote the
same bytes.

    .venv/bin/python benchmarks/merge_task_phases.py --file ... --batch ... --reps 5 --ab-rev main

    .venv/bin/python benchmarks/merge_task_phases.py \\
        --file /tmp/hoodpy-bench/work-sf1/golden-sf1/hoodpy-unpartitioned/b346bb0a-...parquet \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import logging
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# --hoodpy-root: import hoodpy from another tree (a child of --ab-rev runs the revision's code).
_ROOT = sys.argv[sys.argv.index("--hoodpy-root") + 1] if "--hoodpy-root" in sys.argv else \
    str(Path(__file__).resolve().parents[1])
sys.path.insert(0, _ROOT)

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hoodpy import arrow_rows  # noqa: E402
from hoodpy.file_group.naming import parse_base_file_name  # noqa: E402
from hoodpy.meta_fields import META_COLUMNS, PARTITION_PATH, RECORD_KEY  # noqa: E402
from hoodpy.write import merge  # noqa: E402
from hoodpy.write.base_file import BaseFileOptions, _PYARROW_CODECS  # noqa: E402

# (phase, (module file suffix, function name) ...): cumulative CPU of these functions; a phase names only outermost
# calls. What no phase names (key matching and masks: pyarrow compute calls in merge_file_group itself) is "rest".
PHASES = {
    "read old file": [("parquet/core.py", "read_table", "_merge"), ("hoodpy/write/merge_overlap.py", "__init__"),
                      ("hoodpy/write/merge_overlap.py", "whole")],
    # take: as merge_file_group called it before _merged_rows (a whole-file gather), not the takes inside.
    "row assembly": [("pyarrow/compute.py", "take", "merge_file_group"), ("hoodpy/arrow_rows.py", "align"),
                     ("hoodpy/arrow_rows.py", "add_meta_columns"), ("hoodpy/write/merge.py", "merged_rows")],
    "meta columns (seqno, file name)": [("hoodpy/arrow_rows.py", "finalize")],
    "footer bloom + key range": [("hoodpy/write/base_file.py", "footer_metadata"),
                                 ("hoodpy/write/merge.py", "_continued_bloom")],
    "parquet encode + write": [("hoodpy/write/base_file.py", "encode_parquet")],
    "task ids (imports pyspark once; free in a Spark worker)": [("hoodpy/arrow_rows.py", "task_ids")],
}


def incoming_table(batch_path: str, file_keys: pa.Array, key_fields: list[str], file_id: str,
                   partition_path: str, arrow_batch: int, inserts_only: bool = False) -> pa.Table:
    data = pq.read_table(batch_path)
    parts = []
    for i, f in enumerate(key_fields):
        parts += [("," if i else "") + f"{f}:", pc.cast(data[f], pa.string())]
    keys = pc.binary_join_element_wise(*parts, "")
    n = data.num_rows
    table = pa.table({RECORD_KEY: keys, PARTITION_PATH: pa.repeat(pa.scalar(partition_path), n),
                      merge.OP: pa.repeat(pa.scalar(merge.OP_UPSERT, pa.int32()), n)})
    for name in data.column_names:
        table = table.append_column(name, data[name])
    table = table.append_column(merge.TARGET_FILE_ID, pa.repeat(pa.scalar(file_id), n))
    if inserts_only:  # the shape of a batch whose keys the file does not hold: every row group untouched
        table = table.filter(pc.invert(pc.is_in(keys, value_set=file_keys)))
        keys, n = table[RECORD_KEY], table.num_rows
    updates = pc.sum(pc.is_in(keys, value_set=file_keys)).as_py()
    print(f"incoming: {n} rows, {updates} updates, {n - updates} inserts, batches of {arrow_batch}", flush=True)
    return pa.Table.from_batches(table.to_batches(max_chunksize=arrow_batch))


def phase_seconds(stats: pstats.Stats) -> dict[str, float]:
    out = {}
    for phase, funcs in PHASES.items():
        total = 0.0
        for (file, _line, name), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
            for suffix, fn, *caller in funcs:
                if file.endswith(suffix) and name == fn:
                    total += sum(c[3] for (_f, _l, n), c in callers.items() if n == caller[0]) if caller else ct
        out[phase] = total
    out["rest (key matching, masks)"] = stats.total_tt - sum(out.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", required=True, help="an existing base file written by hoodpy")
    ap.add_argument("--batch", required=True, help="parquet of incoming rows (data columns only)")
    ap.add_argument("--key-fields", default="l_orderkey,l_linenumber")
    ap.add_argument("--codec", default="zstd")
    ap.add_argument("--zstd-level", type=int, help="zstd level instead of hoodpy's (both sides of an A/B)")
    ap.add_argument("--arrow-batch", type=int, default=10000)
    ap.add_argument("--inserts-only", action="store_true", help="only the batch rows whose key the file lacks")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=merge.MergeContext.threads)
    ap.add_argument("--ab", action="store_true", help="alternate threads=1 and --threads, rep by rep")
    ap.add_argument("--profile", action="store_true", help="print the top cProfile entries of the last rep")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--keep", help="copy the merged file of the first rep here (to compare outputs)")
    ap.add_argument("--ab-rev", help="compare with the merge of this git revision, one process per side and rep")
    ap.add_argument("--ab-env", nargs="+", metavar="K=V", help="compare this tree's merge without and with these "
                    "environment variables (allocator options), one process per side and rep")
    ap.add_argument("--hoodpy-root", help=argparse.SUPPRESS)  # read before the imports (see _ROOT)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one merge, rusage as JSON
    args = ap.parse_args()
    if args.zstd_level is not None:
        _PYARROW_CODECS["zstd"] = ("zstd", args.zstd_level)  # the table hoodpy's writers look the level up in
    if args.ab_rev or args.ab_env:
        return ab_sides(args)
    if args.child:
        return child(args)

    src = Path(args.file)
    work = Path(tempfile.mkdtemp(prefix="merge-phases-"))
    try:
        shutil.copy(src, work / src.name)
        parsed = parse_base_file_name(src.name)
        file_id, commit = parsed.file_id, parsed.instant_time
        schema = pq.read_schema(src)
        data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        file_keys = pq.read_table(src, columns=[RECORD_KEY])[RECORD_KEY]
        incoming = incoming_table(args.batch, file_keys, args.key_fields.split(","), file_id, "", args.arrow_batch,
                                  args.inserts_only)
        ctx = merge.MergeContext(base_uri=str(work), instant_time="20991231235959999", data_schema=data_schema,
                                 existing={("", file_id): merge.ExistingFile(src.name, commit)},
                                 options=BaseFileOptions(compression=args.codec))
        codec, level = _PYARROW_CODECS[args.codec]
        floors, totals, walls, mains, phases, digests = [], {}, {}, {}, {}, {}
        for rep in range(args.reps * (2 if args.ab else 1)):
            ctx.threads = (1 if rep % 2 == 0 else args.threads) if args.ab else args.threads
            # The floor: pyarrow reads the file and writes it back, same codec, nothing else.
            t0 = time.process_time()
            table = pq.read_table(work / src.name)
            pq.write_table(table, work / "floor.parquet", compression=codec, compression_level=level)
            floors.append(time.process_time() - t0)
            del table
            arrow_rows._seq_counter.clear()  # each rep numbers its rows alike: reps write comparable files
            profiler = cProfile.Profile(time.process_time)
            t0, w0, m0 = time.process_time(), time.perf_counter(), time.thread_time()
            profiler.enable()
            stats_row = merge.merge_file_group(ctx, incoming)
            profiler.disable()
            totals.setdefault(ctx.threads, []).append(time.process_time() - t0)
            walls.setdefault(ctx.threads, []).append(time.perf_counter() - w0)
            mains.setdefault(ctx.threads, []).append(time.thread_time() - m0)
            stats = pstats.Stats(profiler)
            phases.setdefault(ctx.threads, []).append(phase_seconds(stats))
            for p in work.glob("*.parquet"):
                if p.name not in (src.name, "floor.parquet"):
                    digests.setdefault(ctx.threads, set()).add(hashlib.sha256(p.read_bytes()).hexdigest())
                    if args.keep and rep == 0:
                        shutil.copy(p, args.keep)
                    p.unlink()
            row = stats_row.to_pylist()[0]
            print(f"rep {rep}: threads {ctx.threads}, floor {floors[-1]:.2f} s, merge {totals[ctx.threads][-1]:.2f} "
                  f"CPU s, {walls[ctx.threads][-1]:.2f} wall s (writes {row['num_writes']}, updates "
                  f"{row['num_update_writes']}, inserts {row['num_inserts']}, {row['file_size']} B)", flush=True)
        result = {"floor_cpu_s": round(statistics.median(floors), 3),
                  "merge_cpu_s": {t: round(statistics.median(v), 3) for t, v in totals.items()},
                  "merge_wall_s": {t: round(statistics.median(v), 3) for t, v in walls.items()},
                  # CPU of the calling thread alone: what the side threads took off it (parquet's own decode
                  # threads are never in it).
                  "merge_main_thread_cpu_s": {t: round(statistics.median(v), 3) for t, v in mains.items()},
                  "same_bytes": len(set().union(*digests.values())) == 1,
                  "phases_cpu_s": {t: {k: round(statistics.median(p[k] for p in v), 3) for k in v[0]}
                                   for t, v in phases.items()}}
        print(json.dumps(result, indent=2))
        if args.profile:
            stats.sort_stats("cumulative").print_stats(30)
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _usage() -> tuple[float, int, int]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_minflt, r.ru_maxrss


def child(args) -> None:
    """One merge in this (fresh) process: its CPU, page faults and peak RSS as one JSON line."""
    src = Path(args.file)
    work = Path(tempfile.mkdtemp(prefix="merge-ab-"))
    try:
        shutil.copy(src, work / src.name)
        parsed = parse_base_file_name(src.name)
        schema = pq.read_schema(src)
        data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        file_keys = pq.read_table(src, columns=[RECORD_KEY])[RECORD_KEY]
        incoming = incoming_table(args.batch, file_keys, args.key_fields.split(","), parsed.file_id, "",
                                  args.arrow_batch,
                                  args.inserts_only)
        del file_keys
        ctx = merge.MergeContext(base_uri=str(work), instant_time="20991231235959999", data_schema=data_schema,
                                 existing={("", parsed.file_id): merge.ExistingFile(src.name, parsed.instant_time)},
                                 options=BaseFileOptions(compression=args.codec), threads=args.threads)
        arrow_rows.task_ids()  # imports pyspark: not the merge's cost
        # The streamed merge logs how long its encoder thread and its merge waited for each other.
        logged: list[str] = []
        handler = logging.Handler(logging.DEBUG)
        handler.emit = lambda record: logged.append(record.getMessage())
        logging.getLogger(merge.__name__).addHandler(handler)
        logging.getLogger(merge.__name__).setLevel(logging.DEBUG)
        cpu0, flt0, _ = _usage()
        w0 = time.perf_counter()
        row = merge.merge_file_group(ctx, incoming).to_pylist()[0]
        wall = time.perf_counter() - w0
        cpu1, flt1, rss = _usage()
        digest = hashlib.sha256((work / row["path"]).read_bytes()).hexdigest()
        print("RESULT " + json.dumps({"cpu_s": cpu1 - cpu0, "minflt": flt1 - flt0, "maxrss_mb": rss / 1024,
                                      "wall_s": wall, "sha256": digest, "file_size": row["file_size"],
                                      "rows_sha256": _rows_digest(work / row["path"]),
                                      "row_groups": pq.ParquetFile(work / row["path"]).metadata.num_row_groups,
                                      "log": logged}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _rows_digest(path: Path) -> str:
    """A digest of a file's rows and footer key-value metadata, whatever its row groups and encodings: files
    with copied row groups are not the bytes of a full rewrite but must hold the same rows."""
    table = pq.read_table(path).combine_chunks()
    h = hashlib.sha256()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=1 << 20)
    h.update(sink.getvalue())
    del table, sink
    h.update(json.dumps(sorted((k.hex(), v.hex()) for k, v in (pq.read_metadata(path).metadata or {}).items()))
             .encode())
    return h.hexdigest()


def ab_sides(args) -> None:
    """Alternate fresh processes running REV's merge (or this tree's without the --ab-env variables) and this
    tree's (with them); medians per side."""
    here = Path(__file__).resolve()
    repo = here.parents[1]
    old_root = Path(tempfile.mkdtemp(prefix="merge-ab-rev-"))
    try:
        base_env = dict(os.environ)
        if args.ab_rev:
            archive = subprocess.run(["git", "-C", str(repo), "archive", args.ab_rev, "hoodpy"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive, check=True)
            sides = {args.ab_rev: (str(old_root), base_env)}
        else:
            sides = {"without env": (str(repo), base_env)}
        extra = dict(kv.split("=", 1) for kv in args.ab_env or ())
        sides["this tree" + (f" with {' '.join(args.ab_env)}" if extra else "")] = (str(repo), {**base_env, **extra})
        common = [sys.executable, str(here), "--child", "--file", args.file, "--batch", args.batch,
                  "--key-fields", args.key_fields, "--codec", args.codec, "--arrow-batch", str(args.arrow_batch),
                  "--threads", str(args.threads)] + (["--inserts-only"] if args.inserts_only else []) + \
            (["--zstd-level", str(args.zstd_level)] if args.zstd_level is not None else [])
        results: dict[str, list[dict]] = {s: [] for s in sides}
        for rep in range(args.reps):
            for name in (list(sides) if rep % 2 == 0 else list(sides)[::-1]):
                root, env = sides[name]
                out = subprocess.run(common + ["--hoodpy-root", root], env=dict(env, PYTHONPATH=root), check=True,
                                     capture_output=True, text=True).stdout
                res = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
                results[name].append(res)
                print(f"rep {rep} {name}: {res['cpu_s']:.2f} CPU s, {res['minflt']} faults, "
                      f"{res['maxrss_mb']:.0f} MB peak RSS, {res['wall_s']:.2f} wall s {' '.join(res['log'])}",
                      flush=True)
        summary = {name: {k: round(statistics.median(r[k] for r in rs), 3)
                          for k in ("cpu_s", "minflt", "maxrss_mb", "wall_s", "file_size", "row_groups")}
                   for name, rs in results.items()}
        summary["same_bytes"] = len({r["sha256"] for rs in results.values() for r in rs}) == 1
        summary["same_rows_and_footer"] = len({r["rows_sha256"] for rs in results.values() for r in rs}) == 1
        summary["load"] = os.getloadavg()
        print(json.dumps(summary, indent=2))
        if args.out:
            Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    finally:
        shutil.rmtree(old_root, ignore_errors=True)


if __name__ == "__main__":
    main()

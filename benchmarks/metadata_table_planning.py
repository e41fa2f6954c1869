"""Planning a filtered query over a table of ~5,000 small files, with the metadata table and without it: the
whole of what a hoodpy read does before Spark scans a file (load the timeline, list the table, data skipping
for ``x >= <value>``), cold.

The table is the one ``metadata_table_listing.py --column-stats`` writes (``--partitions`` x ``--commits`` small
parquet base files, column ``x`` with a range of its own per commit, through hoodpy's commit protocol with the
metadata table's files and column_stats partitions kept; the filter keeps one commit's files). With the
metadata table, the listing comes from its ``files`` partition and the ranges from ``column_stats``; without
it (``hoodie.table.metadata.partitions`` emptied, as a table without one), the listing comes from storage and
the ranges from every file's parquet footer. Runs alternate between the two (A, B, A, B, ...), each cold (the
footer cache cleared; a fresh process plans so); the median wall time, the median CPU time of this process
(all threads) and their ratio are reported, plus the storage requests each path makes (``--s3``: every one
an HTTP request to a local moto S3 endpoint).

    PYTHONPATH=. python benchmarks/metadata_table_planning.py --partitions 50 --commits 100
    PYTHONPATH=. python benchmarks/metadata_table_planning.py --partitions 50 --commits 100 --s3
    PYTHONPATH=. python benchmarks/metadata_table_planning.py --profile   # cProfile of the metadata path
    PYTHONPATH=. python benchmarks/metadata_table_planning.py --table <path> --phases   # CPU per step
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from metadata_table_listing import PARTITIONS_KEY, build, s3_storage, table_arguments  # noqa: E402

from hoodpy.config.properties import load_table_properties, save_table_properties  # noqa: E402
from hoodpy.file_group.fs_view import FileSystemView  # noqa: E402
from hoodpy.metadata_table.column_stats import read_column_stats  # noqa: E402
from hoodpy.read import data_skipping  # noqa: E402
from hoodpy.storage import Storage  # noqa: E402
from hoodpy.timeline.timeline import Timeline  # noqa: E402

SCHEMA = pa.schema([("x", pa.int64()), ("s", pa.string())])


def plan(storage: Storage, commits: int) -> tuple[int, int]:
    """Files listed and files kept by planning ``x >= <the last commit's first value>``, cold."""
    data_skipping.clear_cache()
    timeline = Timeline.load(storage)
    files = FileSystemView.load(storage, timeline).latest_base_files()
    kept = data_skipping.prune_by_column_stats(storage, files, [("x", ">=", (commits - 1) * 1000)], SCHEMA, timeline)
    return len(files), len(kept)


def phases(storage: Storage, runs: int, commits: int) -> dict:
    """Median CPU ms of each step of a cold metadata-table plan, and the full (generation 2) garbage collections
    per plan: thousands of objects per plan make Python collect during it, a share of the time that depends on
    the process's heap rather than on the code measured."""
    steps: dict[str, list[float]] = {}
    full_collections = []

    def step(name, fn):
        c0 = time.process_time()
        out = fn()
        steps.setdefault(name, []).append((time.process_time() - c0) * 1000)
        return out

    for _ in range(runs):
        data_skipping.clear_cache()
        before = gc.get_stats()[2]["collections"]
        timeline = step("timeline", lambda: Timeline.load(storage))
        files = step("view from the files partition", lambda: FileSystemView.load(storage, timeline).latest_base_files())
        stats = step("column_stats of x read", lambda: read_column_stats(storage, timeline, ["x"]))
        step("pruning (read included)", lambda: data_skipping.prune_by_column_stats(
            storage, files, [("x", ">=", (commits - 1) * 1000)], SCHEMA, timeline))
        full_collections.append(gc.get_stats()[2]["collections"] - before)
        assert len(stats) == len(files)
    out = {name: round(statistics.median(ms), 1) for name, ms in steps.items()}
    out["full gc collections per plan"] = statistics.median(full_collections)
    return out


def compare(storage: Storage, runs: int, commits: int) -> dict:
    props = load_table_properties(storage)
    without = {**props, PARTITIONS_KEY: ""}  # the same files, planned as for a table without a metadata table
    wall: dict[str, list[float]] = {"metadata table": [], "storage + footers": []}
    cpu: dict[str, list[float]] = {"metadata table": [], "storage + footers": []}
    answer: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        for what, properties in (("metadata table", props), ("storage + footers", without)):
            save_table_properties(storage, properties)
            c0, t0 = time.process_time(), time.perf_counter()
            answer[what] = plan(storage, commits)
            wall[what].append(time.perf_counter() - t0)
            cpu[what].append(time.process_time() - c0)
    save_table_properties(storage, props)
    out = {what: {"files": answer[what][0], "kept": answer[what][1],
                  "wall_ms": [round(s * 1000, 1) for s in wall[what]],
                  "median_wall_ms": round(statistics.median(wall[what]) * 1000, 1),
                  "median_cpu_ms": round(statistics.median(cpu[what]) * 1000, 1)} for what in wall}
    out["wall_ratio"] = round(out["storage + footers"]["median_wall_ms"] / out["metadata table"]["median_wall_ms"], 2)
    out["cpu_ratio"] = round(out["storage + footers"]["median_cpu_ms"] / out["metadata table"]["median_cpu_ms"], 2)
    return out


def main() -> None:
    parser = table_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), commits=100)
    parser.add_argument("--table", help="plan an existing table written by this benchmark (no build)")
    parser.add_argument("--profile", action="store_true", help="print a CPU-time cProfile of one metadata-table plan")
    parser.add_argument("--phases", action="store_true",
                        help="also report the median CPU ms of each step of the metadata-table plan (--runs plans)")
    args = parser.parse_args()
    server = None
    if args.s3:
        storage, server = s3_storage("planning")
    else:
        storage = Storage(args.table or tempfile.mkdtemp(prefix="mdt_planning_") + "/t")
    if not args.table:
        started = time.perf_counter()
        files = build(storage, args.partitions, args.commits, args.compact, column_stats=True)
        print(f"{files} base files in {args.partitions} partitions, {args.commits} commits "
              f"({time.perf_counter() - started:.1f} s to write) at {storage.base_uri}", file=sys.stderr)
    if args.profile:
        profile = cProfile.Profile(time.process_time)  # CPU time: wall time on a loaded machine misleads
        profile.runcall(plan, storage, args.commits)
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    result = {"table": storage.base_uri, "partitions": args.partitions, "commits": args.commits,
              **compare(storage, args.runs, args.commits)}
    if args.phases:
        result["metadata table steps (CPU ms, medians)"] = phases(storage, args.runs, args.commits)
    print(json.dumps(result, indent=2))
    if server is not None:
        server.stop()


if __name__ == "__main__":
    main()

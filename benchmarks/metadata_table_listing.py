"""Listing a table through its metadata table vs listing storage: the time ``FileSystemView.load`` takes (what
every hoodpy read and write plans from), on a synthetic copy-on-write table of small files.

The table is written through hoodpy's commit protocol without Spark: each commit adds one small base file per
partition (a new file group) and completes with ``complete_instant``, so the metadata table (built at the first
commit, a deltacommit per commit, compacted every ``--compact`` deltacommits) is the one hoodpy keeps. The
same table is then listed with the metadata table and with it switched off in hoodie.properties (a storage
listing), ``--runs`` times each; the median is reported. ``--s3`` puts the table on a local moto S3 endpoint
(needs moto), where every listing call is an HTTP request.

``--column-stats`` writes real parquet files (column ``x`` with a range of its own per file) with the metadata
table's column_stats partition on, and times planning a filtered query (``prune_by_column_stats`` of every
base file for ``x >= <value>``, matching one commit's files) from column_stats vs from the parquet footers
(footer cache cleared before each run: a fresh process plans cold).

    PYTHONPATH=. python benchmarks/metadata_table_listing.py --partitions 50 --commits 40
    PYTHONPATH=. python benchmarks/metadata_table_listing.py --partitions 20 --commits 20 --column-stats
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.config import HoodieConfig
from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.file_group.naming import base_file_name, join_partition
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.read import data_skipping
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, new_instant_time
from hoodpy.timeline.metadata import CommitMetadata, WriteStat
from hoodpy.timeline.timeline import Timeline
from hoodpy.write.commit import ensure_partition_metadata

PARTITIONS_KEY = "hoodie.table.metadata.partitions"


def _parquet(commit: int) -> bytes:
    """A small parquet file whose column ``x`` holds 100 values of commit ``commit``'s own range."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": pa.array(range(commit * 1000, commit * 1000 + 100), pa.int64()),
                             "s": [f"v{i}" for i in range(100)]}), sink)
    return sink.getvalue().to_pybytes()


def build(storage: Storage, partitions: int, commits: int, compact: int, column_stats: bool = False) -> int:
    save_table_properties(storage, {"hoodie.table.name": "listing_bench", "hoodie.table.type": "COPY_ON_WRITE",
                                    "hoodie.table.version": "6", "hoodie.timeline.layout.version": "1"})
    config = HoodieConfig({"hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": compact,
                           "hoodie.metadata.index.column.stats.enable": str(column_stats).lower()})
    names = [f"p={i:03d}" for i in range(partitions)]
    for c in range(commits):
        t = new_instant_time()
        inflight = transitions.transition_to_inflight(storage, transitions.create_requested(storage, t, Action.COMMIT))
        metadata = CommitMetadata("INSERT")
        data = _parquet(c) if column_stats else b"x" * 512
        for p in names:
            rel = join_partition(p, base_file_name(f"{uuid.uuid4()}-0", "0-1-0", t))
            storage.write_bytes(rel, data)
            metadata.add_write_stat(WriteStat(rel.rsplit("/", 1)[1].split("_")[0], rel, p, num_writes=1,
                                              num_inserts=1, total_write_bytes=len(data),
                                              file_size_in_bytes=len(data)))
        ensure_partition_metadata(storage, t, names)
        complete_instant(storage, inflight, metadata.to_json_bytes(), config)
    return partitions * commits


def timed(storage: Storage, runs: int) -> tuple[float, int]:
    seconds, groups = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        view = FileSystemView.load(storage, Timeline.load(storage))
        seconds.append(time.perf_counter() - started)
        groups = len(view.file_groups())
    return statistics.median(seconds), groups


def compare(storage: Storage, runs: int) -> dict[str, tuple[float, int]]:
    props = load_table_properties(storage)
    out = {"metadata table": timed(storage, runs)}
    save_table_properties(storage, {**props, PARTITIONS_KEY: ""})  # the same files, listed on storage
    out["storage listing"] = timed(storage, runs)
    save_table_properties(storage, props)
    return out


def compare_pruning(storage: Storage, runs: int, commits: int) -> dict[str, tuple[float, int]]:
    """Median seconds to plan ``x >= <the last commit's first value>`` over every base file, and files kept."""
    timeline = Timeline.load(storage)
    files = FileSystemView.load(storage, timeline).latest_base_files()
    schema = pa.schema([("x", pa.int64()), ("s", pa.string())])
    filters = [("x", ">=", (commits - 1) * 1000)]
    out = {}
    for what, tl in (("column_stats", timeline), ("parquet footers", None)):
        seconds, kept = [], 0
        for _ in range(runs):
            data_skipping.clear_cache()
            started = time.perf_counter()
            kept = len(data_skipping.prune_by_column_stats(storage, files, filters, schema, tl))
            seconds.append(time.perf_counter() - started)
        out[what] = (statistics.median(seconds), kept)
    return out


def table_arguments(parser: argparse.ArgumentParser, commits: int) -> argparse.ArgumentParser:
    """The options of the synthetic table and the runs, shared with metadata_table_planning.py."""
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--commits", type=int, default=commits)
    parser.add_argument("--compact", type=int, default=10, help="hoodie.metadata.compact.max.delta.commits")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--s3", action="store_true", help="a local moto S3 endpoint instead of a local folder")
    return parser


def s3_storage(name: str):
    """A table folder ``s3://bench/<name>`` on a local moto S3 endpoint just started, and the server."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise

    import boto3

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"spark.hadoop.fs.s3a.endpoint": f"http://{host}:{port}", "hoodie.aws.access.key": "bench",
               "hoodie.aws.secret.key": "bench", "spark.hadoop.fs.s3a.path.style.access": "true"}
    boto3.client("s3", endpoint_url=f"http://{host}:{port}", aws_access_key_id="bench",
                 aws_secret_access_key="bench", region_name="us-east-1").create_bucket(Bucket="bench")
    return Storage(f"s3://bench/{name}", options), server


def main() -> None:
    parser = table_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]), commits=40)
    parser.add_argument("--column-stats", action="store_true",
                        help="plan a filtered query from column_stats vs parquet footers")
    args = parser.parse_args()
    server = None
    if args.s3:
        storage, server = s3_storage("listing")
    else:
        storage = Storage(tempfile.mkdtemp(prefix="mdt_listing_") + "/t")
    started = time.perf_counter()
    files = build(storage, args.partitions, args.commits, args.compact, args.column_stats)
    print(f"{files} base files in {args.partitions} partitions, {args.commits} commits "
          f"({time.perf_counter() - started:.1f} s to write) at {storage.base_uri}")
    if args.column_stats:
        results = compare_pruning(storage, args.runs, args.commits)
        for what, (seconds, kept) in results.items():
            print(f"{what:16s} filtered planning median {seconds * 1000:8.1f} ms ({kept} of {files} files kept)")
        ratio = results["parquet footers"][0] / results["column_stats"][0]
        print(f"footers / column_stats: {ratio:.1f}x")
    else:
        for what, (seconds, groups) in compare(storage, args.runs).items():
            print(f"{what:16s} FileSystemView.load median {seconds * 1000:8.1f} ms ({groups} file groups)")
    if server is not None:
        server.stop()


if __name__ == "__main__":
    main()

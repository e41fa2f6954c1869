"""Upsert with ``hoodie.index.type=RECORD_INDEX`` vs the BLOOM and GLOBAL_BLOOM indexes, on a lineitem table.

One copy-on-write table (partitioned by ship year / month, metadata table on) is bulk-inserted, then a one-row
RECORD_INDEX upsert builds its record_index partition (base HFiles). Copies of it then take the same upsert
batch (``--updates`` updates spread over all orders plus ``--inserts`` new keys), once per index type, ``--reps``
times each on a fresh copy; the median wall time of ``upsert`` is reported, and the ratios. GLOBAL_BLOOM has the
record index's semantics (global: a key found in another partition moves there); BLOOM is per partition. BLOOM locates keys
on the driver (footer key ranges, bloom filters, key columns); RECORD_INDEX reads the record_index shards that
hold the batch's keys: on the driver for a batch of at most hoodie.record.index.driver.lookup.max.keys records
(``--driver-max-keys``; 0: one Spark task per shard). The build's driver CPU time is reported beside its wall
time (the build runs on the driver; wall times on a shared machine follow its load, reported at the end).

The lookup inside each upsert is reported apart (``lookup``, medians): its wall and driver CPU seconds and the
bytes the driver read (/proc/self/io rchar: footers, bloom filters and key columns for BLOOM; record_index
HFile ranges and logs for RECORD_INDEX, which also reports its own count of base-file and log bytes). For
BLOOM the lookup is ``locate_on_driver`` (the keys were collected by the validation job before it); for
RECORD_INDEX ``RecordLevelIndex.locate`` with its key collection. The Spark path (``--driver-max-keys 0``) is
lazy: its lookup runs inside the upsert's later jobs, so only its total is meaningful (GLOBAL_BLOOM's too).

``phases`` splits each upsert (medians; each phase exclusive of the ones inside it): its wall, driver CPU and
process-tree CPU seconds (driver, JVM, Python workers: the work, whatever the machine's load) and Spark jobs. ``prepare``: validation (and, for BLOOM, the key collection); ``lookup``; ``tagging``:
the rest of the tagging and target assignment on the driver (for the lazy Spark paths only planning: their joins
run in the merge jobs); ``merge``: the merge tasks' jobs and what they pull in; ``metadata``: the metadata-table
update (``mdt_record_index``: the record_index partition's change, ``mdt_compact`` / ``mdt_clean``: table
services); ``commit``: the rest of completing the instant; ``other``: the upsert's remainder (instant files,
rollback check, file listing).

    PYTHONPATH=. python benchmarks/record_index_lookup.py --sf 0.1
    PYTHONPATH=. python benchmarks/record_index_lookup.py --sf 2 --reps 3   # 0.1 .. 4: data in --data-dir
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from spark_local import spark_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/hoodpy-bench/data"))
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--inserts", type=int, default=500)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--driver-max-keys", type=int, default=None,
                        help="hoodie.record.index.driver.lookup.max.keys (default: hoodpy's)")
    parser.add_argument("--driver-memory", default="2g", help="spark.driver.memory of the benchmark's session")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the tables (default: a temp folder); a golden table already built there "
                             "(with its batch.parquet) is reused")
    parser.add_argument("--keep", action="store_true",
                        help="keep --work's golden table and batch (for benchmarks/record_index_lookup_profile.py)")
    args = parser.parse_args()

    from hoodpy.table import HoodieTable

    lookups = _measure_lookups()

    spark = spark_session("record-index-bench", shuffle_partitions=4, driver_memory=args.driver_memory)
    source = pq.read_table(lineitem.generate(args.data_dir, args.sf))
    batch = lineitem.upsert_batch(source, updates=args.updates, inserts=args.inserts, concentrated=False)
    rows, source = source.num_rows, None  # the whole table in the driver's memory (SF 4: ~5 GB) is not the index's
    work = Path(tempfile.mkdtemp(prefix="rli-bench-")) if args.work is None else args.work
    golden = work / "golden"
    options = {"hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false",
               "hoodie.archive.automatic": "false"}
    load_s = build_s = build_cpu_s = None
    if not (golden / ".hoodie" / "hoodie.properties").exists() or not (work / "batch.parquet").exists():
        shutil.rmtree(golden, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        pq.write_table(batch, work / "batch.parquet")
        table = HoodieTable.create(spark, str(golden), table_name="lineitem",
                                   record_key_fields=list(lineitem.RECORD_KEY),
                                   partition_fields=list(lineitem.PARTITION_FIELDS), hive_style_partitioning=True,
                                   options=options)
        t0 = time.perf_counter()
        table.bulk_insert(spark.read.parquet(str(lineitem.generate(args.data_dir, args.sf))))
        load_s = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        table.upsert(spark.read.parquet(str(work / "batch.parquet")).limit(1),
                     options={"hoodie.index.type": "RECORD_INDEX"})
        build_s = time.perf_counter() - t0
        build_cpu_s = time.process_time() - c0  # the driver's CPU: the build itself runs there, in Python
    batch = pq.read_table(work / "batch.parquet")

    phases = _measure_phases(spark)
    results: dict[str, list[float]] = {"BLOOM": [], "GLOBAL_BLOOM": [], "RECORD_INDEX": []}
    for rep in range(args.reps):
        for index_type in results:
            copy = work / f"{index_type}-{rep}"
            shutil.copytree(golden, copy)
            extra = {} if args.driver_max_keys is None else {
                "hoodie.record.index.driver.lookup.max.keys": str(args.driver_max_keys)}
            t = HoodieTable.for_path(spark, str(copy), options={**options, **extra, "hoodie.index.type": index_type})
            lookups.current = phases.current = index_type
            t0 = time.perf_counter()
            with phases.phase("upsert"):
                t.upsert(spark.read.parquet(str(work / "batch.parquet")))
            results[index_type].append(time.perf_counter() - t0)
            phases.end_run()
            shutil.rmtree(copy)
    medians = {k: statistics.median(v) for k, v in results.items()}
    lookup = {k: {m: statistics.median(r[m] for r in v) for m in v[0]} for k, v in lookups.results.items()}
    print(json.dumps({"sf": args.sf, "rows": rows, "batch_rows": batch.num_rows, "load_s": load_s,
                      "record_index_build_s": build_s, "record_index_build_driver_cpu_s": build_cpu_s,
                      "load_average_at_end": os.getloadavg(), "upsert_s": results, "median_s": medians,
                      "lookup": lookup, "lookup_runs": lookups.results,
                      "phases": phases.medians(), "phase_runs": phases.runs,
                      "record_index_over_bloom": medians["RECORD_INDEX"] / medians["BLOOM"],
                      "record_index_over_global_bloom": medians["RECORD_INDEX"] / medians["GLOBAL_BLOOM"]},
                     indent=2))
    if not args.keep:
        shutil.rmtree(golden)
        (work / "batch.parquet").unlink()
        if args.work is None:
            shutil.rmtree(work)
    spark.stop()


class _Lookups:
    """Wall / driver CPU seconds and bytes read of each upsert's index lookup, per index type."""

    def __init__(self):
        self.current = ""
        self.results: dict[str, list[dict[str, float]]] = {}

    def timed(self, fn, counts=None):
        def run(*args, **kwargs):
            t0, c0, r0 = time.perf_counter(), time.process_time(), _read_chars()
            out = fn(*args, **kwargs)
            row = {"wall_s": time.perf_counter() - t0, "driver_cpu_s": time.process_time() - c0,
                   "driver_read_bytes": _read_chars() - r0}
            row.update(counts(args[0]) if counts else {})
            if self.current:  # not the build's one-row upsert
                self.results.setdefault(self.current, []).append(row)
            return out
        return run


class _Phases:
    """Wall / driver CPU seconds and Spark jobs of each phase of an upsert, exclusive of the phases inside it."""

    def __init__(self, spark):
        self.tracker = spark.sparkContext.statusTracker()
        self.current = ""
        self.stack: list[str] = []
        self.run: dict[str, dict[str, float]] = {}
        self.runs: dict[str, list[dict[str, dict[str, float]]]] = {}

    def _jobs(self) -> int:
        return len(self.tracker.getJobIdsForGroup())

    @staticmethod
    def _tree_cpu() -> float:
        """CPU seconds of this process and its descendants (the driver JVM, its executors' threads, the Python
        workers; the finished children of each counted by their parent): work measured apart from the load."""
        stats = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(entry)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))  # ppid; u/s/cu/cs time
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        total, todo = 0, [os.getpid()]
        while todo:
            pid = todo.pop()
            total += stats.get(pid, (0, 0))[1]
            todo.extend(children.get(pid, ()))
        return total / os.sysconf("SC_CLK_TCK")

    @contextlib.contextmanager
    def phase(self, name: str):
        if not self.current or name in self.stack:  # the build's upsert, or a phase re-entered
            yield
            return
        parent = self.stack[-1] if self.stack else None
        self.stack.append(name)
        t0, c0, j0, p0 = time.perf_counter(), time.process_time(), self._jobs(), self._tree_cpu()
        try:
            yield
        finally:
            self.stack.pop()
            spent = {"wall_s": time.perf_counter() - t0, "driver_cpu_s": time.process_time() - c0,
                     "tree_cpu_s": self._tree_cpu() - p0, "spark_jobs": self._jobs() - j0}
            for target, sign in ((name, 1), (parent, -1)):
                if target is not None:
                    row = self.run.setdefault(target, dict.fromkeys(spent, 0.0))
                    for k, v in spent.items():
                        row[k] += sign * v

    def wrap(self, owner, attr: str, name: str) -> None:
        fn = getattr(owner, attr, None)
        if fn is None:  # a step this version of hoodpy does not have (the benchmark also measures older ones)
            return

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self.phase(name):
                return fn(*args, **kwargs)
        setattr(owner, attr, run)

    def end_run(self) -> None:
        self.run["other"] = self.run.pop("upsert")
        self.runs.setdefault(self.current, []).append(self.run)
        self.run = {}

    def medians(self) -> dict[str, dict[str, dict[str, float]]]:
        out = {}
        for index_type, runs in self.runs.items():
            names = [n for n in _PHASES if any(n in r for r in runs)]
            out[index_type] = {n: {m: statistics.median(r.get(n, {}).get(m, 0.0) for r in runs)
                                   for m in ("wall_s", "driver_cpu_s", "tree_cpu_s", "spark_jobs")}
                                for n in names}
        return out


_PHASES = ("prepare", "lookup", "tagging", "merge", "mdt_record_index", "mdt_compact", "mdt_clean", "metadata",
           "commit", "other")


def _measure_phases(spark) -> _Phases:
    """Wrap the writer's steps (see ``phases`` in the module docstring)."""
    from hoodpy.index.bloom import BloomIndex
    from hoodpy.index.record_index import RecordLevelIndex
    from hoodpy.metadata_table import record_index_writer, writer as mdt_writer
    from hoodpy.transaction.transaction import WriteTransaction
    from hoodpy.write import writer

    phases = _Phases(spark)
    phases.wrap(writer.Writer, "_prepare", "prepare")
    for owner, attr in ((writer, "locate_on_driver"), (RecordLevelIndex, "locate"),
                        (RecordLevelIndex, "locate_on_driver"), (BloomIndex, "locate")):
        phases.wrap(owner, attr, "lookup")
    for attr in [a for a in vars(writer.Writer) if a.startswith("_tag_and_assign")]:
        phases.wrap(writer.Writer, attr, "tagging")
    phases.wrap(writer.Writer, "_run", "merge")
    phases.wrap(mdt_writer.MetadataTableWriter, "before_complete", "metadata")
    phases.wrap(record_index_writer, "deltacommit_logs", "mdt_record_index")
    phases.wrap(mdt_writer.MetadataTableWriter, "compact_if_due", "mdt_compact")
    phases.wrap(mdt_writer.MetadataTableWriter, "clean_if_due", "mdt_clean")
    phases.wrap(WriteTransaction, "commit", "commit")
    return phases


def _read_chars() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def _measure_lookups() -> _Lookups:
    """Wrap both indexes' lookups (BLOOM's on the driver in the writer, RECORD_INDEX's locate)."""
    from hoodpy.index.record_index import RecordLevelIndex
    from hoodpy.write import writer

    lookups = _Lookups()
    writer.locate_on_driver = lookups.timed(writer.locate_on_driver)

    def index_counts(index):
        last = getattr(index, "last_lookup", None)  # None: the table had no record index yet
        c = last.counts if last is not None else None
        return {} if c is None else {"index_base_bytes": c.base_bytes, "index_log_bytes": c.log_bytes}
    RecordLevelIndex.locate = lookups.timed(RecordLevelIndex.locate, index_counts)
    if hasattr(RecordLevelIndex, "locate_on_driver"):  # the writer's driver path for global indexes
        RecordLevelIndex.locate_on_driver = lookups.timed(RecordLevelIndex.locate_on_driver, index_counts)
    return lookups


if __name__ == "__main__":
    main()

"""hoodpy side by side with delta-rs and plain Spark on TPC-H lineitem (issue #8).

One process runs every engine of a workload, ``--reps`` times each, and writes ``results.json`` plus one PNG
per workload into ``--out``. Workloads (``--workloads``, comma separated):

- ``load``: initial load. hoodpy bulk_insert and insert vs delta-rs write_deltalake vs Spark parquet write.
- ``upsert``: 5% updates + 1% inserts, keys concentrated in the newest 10% of orders or spread uniformly.
  hoodpy upsert vs delta-rs merge (streamed_exec=False and the default) vs a Spark full rewrite (read,
  anti-join, union, write: what a dbt-spark parquet user does). Also the floor: pyarrow read + write of the
  bytes hoodpy had to touch.
- ``scaling``: the same absolute batch (6% of SF 0.25's rows, concentrated) into tables of ``--scaling``
  scale factors.
- ``clustering``: linear vs z-order vs hilbert clustering on (l_shipdate, l_partkey), then files scanned and
  time of range queries on each column; delta-rs optimize.z_order on the same columns.
- ``clean``: 10 upsert rounds, then hoodpy cleaning vs delta-rs vacuum (needs HoodieTable.cleaning).
- ``read``: a TPC-H Q1-style aggregate through hoodpy's snapshot read vs spark.read.parquet over the same files.
- ``mor``: merge-on-read upsert (Avro and parquet log blocks) vs copy-on-write upsert vs delta-rs merge on the
  matched layout; snapshot read with 1 and 5 log files per touched group vs the copy-on-write read; compaction
  of the one-log state vs the copy-on-write upsert; the upsert into a MOR table under the BUCKET index (not in
  the default list: ``--workloads mor``).

hoodpy runs with a new user's defaults first (``hoodpy_*``) and, where ``--tuned`` names options, with them
beside (``hoodpy_*_tuned``, on its own table built with those options). delta-rs runs on two layouts: its own
defaults (``delta_*``, files of delta-rs's target size) and the **matched layout** (``delta_*_matched``: a
table written with ``target_file_size`` chosen so that it holds as many files as hoodpy's table of the same
rows), so that an upsert rewrites comparable bytes per touched file in both. Every result entry records the
layout it ran on (``layout``: files and average bytes of the table before the operation).

    .venv/bin/python benchmarks/run.py --sf 1 --out benchmarks/results/sf1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import lineitem  # noqa: E402
from measure import measure  # noqa: E402
from spark_local import spark_session  # noqa: E402

from hoodpy.spark_worker import PRELOAD_ENV  # noqa: E402

HOODPY_OPTIONS: dict[str, str] = {}  # a new user's defaults; --tuned adds a second hoodpy variant
KEY = list(lineitem.RECORD_KEY)
VARIANTS = {"unpartitioned": (), "partitioned": lineitem.PARTITION_FIELDS}
MERGE_PREDICATE = "t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber"
# The mor workload's BUCKET index table (the route a Hudi user takes for fast merge-on-read upserts): as many
# buckets as the bulk load's default layout has files, so the two tables hold the same files.
BUCKET_OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}


# -- plumbing ---------------------------------------------------------------------------------------


def summarize(reps: list[dict]) -> dict:
    secs = [r["seconds"] for r in reps]
    out = {"median_s": round(statistics.median(secs), 3), "min_s": round(min(secs), 3),
           "max_s": round(max(secs), 3), "reps": reps}
    for k in ("spark_jobs", "spark_job_seconds", "driver_seconds", "peak_rss_mb", "cpu_driver_s", "cpu_jvm_s",
              "cpu_workers_s"):
        if all(k in r for r in reps):
            out[f"median_{k}"] = statistics.median(r[k] for r in reps)
    return out


def dir_bytes(path: Path, suffix: str = ".parquet") -> tuple[int, int]:
    files = [p for p in Path(path).rglob(f"*{suffix}") if ".hoodie" not in p.parts and "_delta_log" not in p.parts]
    return len(files), sum(p.stat().st_size for p in files)


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = Path(args.work)
        self.data = Path(args.data)
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.spark = spark_session("hoodpy-bench", shuffle_partitions=8, driver_memory=args.driver_memory)
        self.results: dict = {"meta": self.meta(), "workloads": {}}

    def meta(self) -> dict:
        import deltalake
        import pyspark

        return {"sf": self.args.sf, "reps": self.args.reps, "warmup": self.args.warmup, "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "pyspark": pyspark.__version__, "deltalake": deltalake.__version__, "pyarrow": pa.__version__,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "hoodpy_options": HOODPY_OPTIONS,
                "hoodpy_tuned_options": self.args.tuned,
                "worker_preload": os.environ.get(PRELOAD_ENV, "default"),  # hoodpy/spark_worker.py
                "load_avg_at_start": os.getloadavg()}

    def save(self) -> None:
        (self.out / "results.json").write_text(json.dumps(self.results, indent=2, default=str))

    def repeat(self, fn, setup=None, reps: int | None = None, warmup: int | None = None) -> dict:
        """Run ``setup()`` (untimed) then ``fn(state)`` under measurement, ``reps`` times, after ``warmup``
        untimed runs (default ``--warmup``: the first run of a code path in a process pays for JIT, Python
        worker start and imports, for every engine). ``fn`` returns a dict of figures, or a callable giving
        them: bookkeeping (which files held updated keys) then runs untimed."""
        for _ in range(self.args.warmup if warmup is None else warmup):
            fn(setup() if setup else None)
        runs = []
        for _ in range(reps or self.args.reps):
            state = setup() if setup else None
            with measure(self.spark) as m:
                extra = fn(state)
            if callable(extra):
                extra = extra()
            m.extra.update(extra or {})
            runs.append(m.as_dict())
        return summarize(runs)

    # -- engines ------------------------------------------------------------------------------------
    def hoodpy_options(self, tuned: bool = False) -> dict[str, str]:
        return {**HOODPY_OPTIONS, **(self.args.tuned if tuned else {})}

    def hoodpy_create(self, path: Path, partition_fields, tuned: bool = False, table_type: str | None = None,
                      options: dict[str, str] | None = None):
        from hoodpy.table import HoodieTable

        return HoodieTable.create(self.spark, str(path), table_name="lineitem", record_key_fields=KEY,
                                  partition_fields=list(partition_fields), hive_style_partitioning=True,
                                  options={**self.hoodpy_options(tuned), **(options or {})}, table_type=table_type)

    def hoodpy_open(self, path: Path, tuned: bool = False):
        from hoodpy.table import HoodieTable

        return HoodieTable.for_path(self.spark, str(path), options=self.hoodpy_options(tuned))

    def matched_target_size(self, sf: float, variant: str) -> int:
        """delta-rs's first ``target_file_size`` guess for hoodpy's layout: hoodpy's rows per file times
        delta-rs's own bytes per row (the codecs differ, so equal bytes would not be equal files)."""
        h_files, _ = dir_bytes(self.golden(sf, variant, "hoodpy"))
        _, d_bytes = dir_bytes(self.golden(sf, variant, "delta"))
        return max(1, d_bytes // max(1, h_files))

    def golden(self, sf: float, variant: str, engine: str) -> Path:
        """A loaded table per (scale factor, variant, engine), built once and copied for each mutation."""
        path = self.work / f"golden-sf{sf:g}" / f"{engine}-{variant}"
        if (path / ".done").exists():
            return path
        fresh(path)
        src = lineitem.generate(self.data, sf)
        parts = VARIANTS[variant]
        log(f"building golden {engine} {variant} sf{sf:g}")
        if engine in ("hoodpy", "hoodpy-tuned", "hoodpy-mor", "hoodpy-mor-bucket"):
            bucketed = BUCKET_OPTIONS if engine == "hoodpy-mor-bucket" else {}
            self.hoodpy_create(path, parts, tuned=engine == "hoodpy-tuned", options=bucketed,
                               table_type="MERGE_ON_READ" if engine.startswith("hoodpy-mor") else None).bulk_insert(
                self.spark.read.parquet(str(src)), options=bucketed)
        elif engine == "delta":
            from deltalake import write_deltalake

            write_deltalake(str(path), pq.read_table(src), partition_by=list(parts) or None)
        elif engine == "delta-matched":
            self.write_delta_matched(path, src, sf, variant)
        else:
            w = self.spark.read.parquet(str(src)).write.mode("overwrite")
            (w.partitionBy(*parts) if parts else w).parquet(str(path))
        (path / ".done").touch()
        return path

    def write_delta_matched(self, path: Path, src: Path, sf: float, variant: str) -> None:
        """A delta-rs table with as many files as hoodpy's: delta-rs rolls files near, not at, its target,
        so the target is rescaled by the file count it gave, up to three writes."""
        from deltalake import write_deltalake

        want = dir_bytes(self.golden(sf, variant, "hoodpy"))[0]
        size = self.matched_target_size(sf, variant)
        data = pq.read_table(src)
        for attempt in range(3):
            fresh(path)
            write_deltalake(str(path), data, partition_by=list(VARIANTS[variant]) or None, target_file_size=size)
            got = dir_bytes(path)[0]
            log(f"delta matched layout: {got} files for hoodpy's {want} (target_file_size {size})")
            if got == want or attempt == 2:
                break
            size = max(1, size * got // want)

    def copy_of(self, golden: Path, name: str) -> Path:
        dest = fresh(self.work / "scratch" / name)
        shutil.copytree(golden, dest)
        return dest

    # -- workload 1: initial load ---------------------------------------------------------------------
    def w_load(self) -> None:
        from deltalake import write_deltalake

        src = lineitem.generate(self.data, self.args.sf)
        rows = pq.ParquetFile(src).metadata.num_rows
        out: dict = {"rows": rows, "scenarios": {}}
        for variant in self.args.variants:
            parts = VARIANTS[variant]
            target = self.work / "load"
            res = {}

            def hoodpy(op, tuned=False):
                def run(path):
                    table = self.hoodpy_create(path, parts, tuned)
                    r = getattr(table, op)(self.spark.read.parquet(str(src)))
                    return {"files": r.files_added, "bytes_written": r.total_bytes_written}
                return run

            def delta(path):
                write_deltalake(str(path), pq.read_table(src), partition_by=list(parts) or None)
                n, b = dir_bytes(path)
                return {"files": n, "bytes_written": b}

            def spark_parquet(path):
                w = self.spark.read.parquet(str(src)).write.mode("overwrite")
                (w.partitionBy(*parts) if parts else w).parquet(str(path))
                n, b = dir_bytes(path)
                return {"files": n, "bytes_written": b}

            engines = [("hoodpy_bulk_insert", hoodpy("bulk_insert")), ("hoodpy_insert", hoodpy("insert"))]
            if self.args.tuned:
                engines += [("hoodpy_bulk_insert_tuned", hoodpy("bulk_insert", True)),
                            ("hoodpy_insert_tuned", hoodpy("insert", True))]
            engines += [("delta_write_deltalake", delta), ("spark_parquet_write", spark_parquet)]
            for name, fn in engines:
                log(f"load {variant} {name}")
                res[name] = self.repeat(fn, setup=lambda name=name: fresh(target / name))
            base = res["spark_parquet_write"]["median_s"]
            res["ratios"] = {f"{n} / spark_parquet_write": round(res[n]["median_s"] / base, 3)
                             for n, _ in engines if n.startswith("hoodpy")}
            out["scenarios"][variant] = res
            self.results["workloads"]["load"] = out
            self.save()
        shutil.rmtree(self.work / "load", ignore_errors=True)

    # -- workload 2 (and 7, the floor): upserts -------------------------------------------------------
    def batch_file(self, sf: float, concentrated: bool, updates: int, inserts: int, tag: str,
                   newest: int | None = None) -> Path:
        shape = f"newest{newest}" if newest else ("conc" if concentrated else "unif")
        path = self.data / f"sf{sf:g}" / f"batch-{tag}-{shape}-{updates}-{inserts}.parquet"
        if not path.exists():
            table = pq.read_table(lineitem.generate(self.data, sf))
            pq.write_table(lineitem.upsert_batch(table, updates=updates, inserts=inserts,
                                                 concentrated=concentrated, newest=newest), path)
        return path

    def upsert_engines(self, sf: float, variant: str, batch: Path, engines: tuple[str, ...]) -> dict:
        from deltalake import DeltaTable

        batch_keys = pq.read_table(batch, columns=KEY)
        updated_keys = self.existing_keys(lineitem.generate(self.data, sf), batch_keys)
        res: dict = {"batch_rows": batch_keys.num_rows, "batch_updates": updated_keys.num_rows}
        ratios = res.setdefault("ratios", {})

        def hoodpy_setup(tuned: bool):
            golden = "hoodpy-tuned" if tuned else "hoodpy"
            return lambda: (self.copy_of(self.golden(sf, variant, golden), golden), tuned)

        def hoodpy_run(state):
            path, tuned = state
            table = self.hoodpy_open(path, tuned)
            before = {(bf.partition_path, bf.file_id): bf for bf in table.file_system_view().latest_base_files()}
            r = table.upsert(self.spark.read.parquet(str(batch)))
            return lambda: hoodpy_figures(path, before, r)

        def hoodpy_figures(path, before, r):
            rewritten = [before[(s.partition_path, s.file_id)] for s in r.metadata.write_stats
                         if (s.partition_path, s.file_id) in before]
            with_updates = self.files_with_keys([str(path / bf.path) for bf in before.values()], updated_keys)
            # Small existing files also take inserts (Hudi's file sizing): those are touched groups too.
            packed = {(s.partition_path, s.file_id) for s in r.metadata.write_stats
                      if (s.partition_path, s.file_id) in before and s.num_inserts > 0}
            needed = [bf for k, bf in before.items() if str(path / bf.path) in with_updates or k in packed]
            merge_ms = sum(s.total_upsert_time + s.total_create_time for s in r.metadata.write_stats)
            out = self.amplification(
                rewritten_bytes=sum(bf.size for bf in rewritten), files_rewritten=len(rewritten),
                needed=[bf.size for bf in needed], files_total=len(before), files_new=r.files_added,
                bytes_written=r.total_bytes_written, executor_merge_task_seconds=merge_ms / 1000,
                layout=self.layout_of([bf.size for bf in before.values()]))
            out["files_taking_inserts"] = len(packed)
            out["untouched_files_rewritten"] = len(rewritten) - len(needed)
            return out

        def delta_run(streamed: bool):
            def run(path):
                dt = DeltaTable(str(path))
                before = self.delta_files(dt, path)
                dt.merge(pq.read_table(batch), MERGE_PREDICATE, source_alias="s", target_alias="t",
                         streamed_exec=streamed).when_matched_update_all().when_not_matched_insert_all().execute()
                return lambda: delta_figures(path, before)

            def delta_figures(path, before):
                after = self.delta_files(DeltaTable(str(path)), path)
                removed = {p: s for p, s in before.items() if p not in after}
                added = {p: s for p, s in after.items() if p not in before}
                with_updates = self.files_with_keys(list(before), updated_keys)
                return self.amplification(
                    rewritten_bytes=sum(removed.values()), files_rewritten=len(removed),
                    needed=[s for p, s in before.items() if p in with_updates], files_total=len(before),
                    files_new=len(added), bytes_written=sum(added.values()),
                    layout=self.layout_of(list(before.values())))
            return run

        def delta_setup(golden: str):
            return lambda: self.copy_of(self.golden(sf, variant, golden), golden)

        def spark_setup():
            return self.golden(sf, variant, "spark"), fresh(self.work / "scratch" / "spark-out")

        def spark_rewrite(paths):
            src, dest = paths
            old = self.spark.read.parquet(str(src))
            new = self.spark.read.parquet(str(batch))
            merged = old.join(new.select(*KEY), KEY, "left_anti").unionByName(new)
            w = merged.write.mode("overwrite")
            parts = VARIANTS[variant]
            (w.partitionBy(*parts) if parts else w).parquet(str(dest))
            return lambda: spark_figures(src, dest)

        def spark_figures(src, dest):
            n_old, b_old = dir_bytes(src)
            n, b = dir_bytes(dest)
            with_updates = self.files_with_keys([str(p) for p in Path(src).rglob("*.parquet")], updated_keys)
            needed = [Path(p).stat().st_size for p in with_updates]
            return self.amplification(rewritten_bytes=b_old, files_rewritten=n_old, needed=needed,
                                      files_total=n_old, files_new=n, bytes_written=b,
                                      layout={"files": n_old, "avg_file_bytes": b_old // max(1, n_old)})

        runs = {"hoodpy_upsert": (hoodpy_setup(False), hoodpy_run),
                "hoodpy_upsert_tuned": (hoodpy_setup(True), hoodpy_run),
                "delta_merge_streamed_exec_false": (delta_setup("delta"), delta_run(False)),
                "delta_merge_default": (delta_setup("delta"), delta_run(True)),
                "delta_merge_streamed_exec_false_matched": (delta_setup("delta-matched"), delta_run(False)),
                "delta_merge_default_matched": (delta_setup("delta-matched"), delta_run(True)),
                "spark_full_rewrite": (spark_setup, spark_rewrite)}
        if not self.args.tuned:
            engines = tuple(e for e in engines if not e.endswith("_tuned"))
        for name in engines:
            setup, fn = runs[name]
            log(f"upsert sf{sf:g} {variant} {batch.name} {name}")
            res[name] = self.repeat(fn, setup=setup)
            self.save()
        for hoodpy in ("hoodpy_upsert", "hoodpy_upsert_tuned"):
            for delta in ("delta_merge_default_matched", "delta_merge_default"):
                if hoodpy in res and delta in res:
                    ratios[f"{hoodpy} / {delta}"] = round(res[hoodpy]["median_s"] / res[delta]["median_s"], 3)
        return res

    @staticmethod
    def layout_of(sizes: list[int]) -> dict:
        return {"files": len(sizes), "avg_file_bytes": int(sum(sizes) / len(sizes)) if sizes else 0}

    @staticmethod
    def amplification(*, rewritten_bytes: int, needed: list[int], **rest) -> dict:
        needed_bytes = sum(needed)
        return {"bytes_rewritten": rewritten_bytes, "bytes_of_touched_files": needed_bytes,
                "files_touched": len(needed),
                "write_amplification": round(rewritten_bytes / needed_bytes, 3) if needed_bytes else None, **rest}

    @staticmethod
    def existing_keys(source: Path, batch_keys: pa.Table) -> pa.Table:
        """The batch's keys that the loaded table holds (its updates)."""
        table = pq.read_table(source, columns=KEY)
        return batch_keys.join(table, KEY, join_type="inner")

    @staticmethod
    def files_with_keys(paths: list[str], keys: pa.Table) -> set[str]:
        """The parquet files among ``paths`` holding at least one of ``keys`` (untimed bookkeeping)."""
        probe = pc.add(pc.multiply(keys.column("l_orderkey").cast(pa.int64()), 8),
                       keys.column("l_linenumber").cast(pa.int64()))
        value_set = pc.unique(probe.combine_chunks() if isinstance(probe, pa.ChunkedArray) else probe)
        hit = set()
        for p in paths:
            t = pq.read_table(p, columns=KEY)
            mine = pc.add(pc.multiply(t.column("l_orderkey").cast(pa.int64()), 8),
                          t.column("l_linenumber").cast(pa.int64()))
            if pc.any(pc.is_in(mine, value_set=value_set)).as_py():
                hit.add(p)
        return hit

    @staticmethod
    def delta_files(dt, path: Path) -> dict[str, int]:
        actions = dt.get_add_actions(flatten=True)
        actions = pa.table(actions) if not isinstance(actions, pa.Table) else actions
        return {str(path / p): s for p, s in zip(actions.column("path").to_pylist(),
                                                 actions.column("size_bytes").to_pylist(), strict=True)}

    def floor(self, sf: float, variant: str, batch: Path) -> dict:
        """pyarrow read + write of exactly the files holding updated keys: the least any engine must do. Written
        with hoodpy's default codec (zstd level 3), so that the floor writes what the upsert writes."""
        golden = self.golden(sf, variant, "hoodpy")
        keys = self.existing_keys(lineitem.generate(self.data, sf), pq.read_table(batch, columns=KEY))
        table = self.hoodpy_open(golden)
        paths = sorted(self.files_with_keys([str(golden / bf.path) for bf in table.file_system_view().latest_base_files()],
                                            keys))
        out_dir = self.work / "scratch" / "floor"

        def run(_):
            fresh(out_dir).mkdir(parents=True)
            total = 0
            for i, p in enumerate(paths):
                t = pq.read_table(p)
                pq.write_table(t, out_dir / f"{i}.parquet", compression="zstd", compression_level=3)
                total += Path(p).stat().st_size
            return {"files": len(paths), "bytes_read": total}
        return self.repeat(run)

    def w_upsert(self) -> None:
        sf = self.args.sf
        rows = pq.ParquetFile(lineitem.generate(self.data, sf)).metadata.num_rows
        updates, inserts = int(rows * 0.05), int(rows * 0.01)
        out: dict = {"rows": rows, "updates": updates, "inserts": inserts, "scenarios": {}}
        self.results["workloads"]["upsert"] = out
        floor: dict = {"scenarios": {}}
        for variant in self.args.variants:
            for concentrated in (True, False):
                batch = self.batch_file(sf, concentrated, updates, inserts, "w2")
                scenario = f"{variant}-{'concentrated' if concentrated else 'uniform'}"
                out["scenarios"][scenario] = self.upsert_engines(sf, variant, batch, tuple(self.args.upsert_engines))
                if concentrated:
                    log(f"floor {scenario}")
                    floor["scenarios"][scenario] = {"pyarrow_read_write_touched": self.floor(sf, variant, batch)}
                    self.results["workloads"]["floor"] = floor
                self.save()

    # -- workload 3: scaling --------------------------------------------------------------------------
    def w_scaling(self) -> None:
        base_rows = pq.ParquetFile(lineitem.generate(self.data, 0.25)).metadata.num_rows
        updates, inserts = int(base_rows * 0.05), int(base_rows * 0.01)
        # The same batch everywhere: its keys come from the same number of newest rows (SF 0.25's newest
        # 10%), so a larger table holds more untouched data, not a more spread-out batch.
        newest = int(base_rows * 0.1)
        out: dict = {"updates": updates, "inserts": inserts, "newest_rows_sampled": newest, "scenarios": {}}
        self.results["workloads"]["scaling"] = out
        for sf in self.args.scaling:
            batch = self.batch_file(sf, True, updates, inserts, "w3", newest=newest)
            out["scenarios"][f"sf{sf:g}"] = self.upsert_engines(
                sf, "unpartitioned", batch,
                ("hoodpy_upsert", "hoodpy_upsert_tuned", "delta_merge_default_matched", "delta_merge_default"))
            self.save()

    # -- workload 4: clustering -----------------------------------------------------------------------
    def w_clustering(self) -> None:

        from hoodpy.read.data_skipping import prune_by_column_stats

        sf = self.args.sf
        src = lineitem.generate(self.data, sf)
        total_bytes = dir_bytes(self.golden(sf, "unpartitioned", "hoodpy"))[1]
        n_files = self.args.cluster_files
        target = total_bytes // n_files + 1
        dates = pq.read_table(src, columns=["l_shipdate", "l_partkey"])
        lo_d, hi_d = (v.as_py() for v in pc.min_max(dates.column("l_shipdate")).values())
        lo_p, hi_p = (v.as_py() for v in pc.min_max(dates.column("l_partkey")).values())
        span_d = (hi_d - lo_d) / 20
        d0 = lo_d + 10 * span_d
        p0 = lo_p + (hi_p - lo_p) // 2
        preds = {"l_shipdate 5% range": [("l_shipdate", ">=", d0), ("l_shipdate", "<", d0 + span_d)],
                 "l_partkey 5% range": [("l_partkey", ">=", p0), ("l_partkey", "<", p0 + (hi_p - lo_p) // 20)]}
        # Files scanned depend on where a range falls against file boundaries (one at the middle of each
        # column is likely): also count them for 5% ranges starting at ten positions across each column.
        positions = {
            "l_shipdate": [[("l_shipdate", ">=", lo_d + k * span_d * 1.9), ("l_shipdate", "<", lo_d + k * span_d * 1.9
                                                                            + span_d)] for k in range(10)],
            "l_partkey": [[("l_partkey", ">=", lo_p + k * (hi_p - lo_p) * 95 // 1000),
                           ("l_partkey", "<", lo_p + k * (hi_p - lo_p) * 95 // 1000 + (hi_p - lo_p) // 20)]
                          for k in range(10)]}
        out: dict = {"target_files": n_files, "layouts": {}}
        self.results["workloads"]["clustering"] = out

        def positions_scanned(count) -> dict:
            each = {col: [count(f) for f in ranges] for col, ranges in positions.items()}
            return {col: {"mean": round(sum(v) / len(v), 2), "each": v} for col, v in each.items()}

        def spark_filter(filters):
            from pyspark.sql import functions as F

            cond = F.lit(True)
            for col, op, v in filters:
                cond = cond & (F.col(col) >= F.lit(v) if op == ">=" else F.col(col) < F.lit(v))
            return cond

        # Curves over the values' own bits (DIRECT, Hudi's default) and over sampled quantiles (SAMPLE).
        # Defaults first (hoodpy's curve build method is SAMPLE), then Hudi's default DIRECT.
        for name, layout, method in (("linear", "linear", None), ("z-order", "z-order", None),
                                     ("hilbert", "hilbert", None), ("z-order DIRECT", "z-order", "DIRECT"),
                                     ("hilbert DIRECT", "hilbert", "DIRECT")):
            if self.args.cluster_layouts and name not in self.args.cluster_layouts:
                continue

            def setup():
                return self.copy_of(self.golden(sf, "unpartitioned", "hoodpy"), "cluster")

            def run(path, layout=layout, method=method):
                t = self.hoodpy_open(path)
                opts = {"hoodie.clustering.plan.strategy.target.file.max.bytes": target,
                        "hoodie.clustering.plan.strategy.max.bytes.per.group": total_bytes * 2,
                        "hoodie.clustering.plan.strategy.small.file.limit": total_bytes * 2,
                        **({"hoodie.layout.optimize.curve.build.method": method} if method else {})}
                r = t.clustering.run(sort_columns=["l_shipdate", "l_partkey"], layout=layout, options=opts)
                return {"result": str(r)[:200]}
            log(f"clustering {name}")
            entry = {"clustering": self.repeat(run, setup=setup), "queries": {}}
            path = self.work / "scratch" / "cluster"  # the last repetition's table
            t = self.hoodpy_open(path)
            files = t.file_system_view().latest_base_files()
            for query, filters in preds.items():  # not `name`: the layout's name keys the entry below
                kept = prune_by_column_stats(t.storage, files, filters)
                q = self.repeat(lambda _, kept=kept, filters=filters: {
                    "rows": self.spark.read.parquet(*[t.storage.uri(bf.path) for bf in kept])
                    .filter(spark_filter(filters)).count() if kept else 0})
                entry["queries"][query] = {"files_scanned": len(kept), "files_total": len(files), **q}
            entry["files_scanned_over_positions"] = positions_scanned(
                lambda filters: len(prune_by_column_stats(t.storage, files, filters)))
            out["layouts"][name] = entry
            self.save()

        # delta-rs: the same rows z-ordered into the same number of files, from its default layout and from
        # the matched one (as many input files as hoodpy's table).
        for golden, name in (("delta", "delta_z_order"), ("delta-matched", "delta_z_order_matched")):
            if self.args.cluster_layouts and name not in self.args.cluster_layouts:
                continue
            # The same number of output files as hoodpy's: delta-rs's codec and bytes per row differ, so
            # hoodpy's byte target would give it more, smaller files.
            d_target = dir_bytes(self.golden(sf, "unpartitioned", golden))[1] // n_files + 1
            out["layouts"][name] = self.delta_z_order(sf, golden, d_target, preds, positions_scanned)
            self.save()

    def delta_z_order(self, sf: float, golden: str, target: int, preds: dict, positions_scanned) -> dict:
        from deltalake import DeltaTable

        log(f"clustering {golden} z_order")
        path = self.work / "scratch" / f"{golden}-cluster"

        def d_setup():
            return self.copy_of(self.golden(sf, "unpartitioned", golden), f"{golden}-cluster")

        def d_run(path):
            m = DeltaTable(str(path)).optimize.z_order(["l_shipdate", "l_partkey"], target_size=target)
            return {"files_added": m.get("numFilesAdded"), "files_removed": m.get("numFilesRemoved")}
        before = dir_bytes(self.golden(sf, "unpartitioned", golden))
        entry = {"layout": {"files": before[0], "avg_file_bytes": before[1] // max(1, before[0])},
                 "clustering": self.repeat(d_run, setup=d_setup), "queries": {}}
        dataset = DeltaTable(str(path)).to_pyarrow_dataset()

        def expression(filters):
            expr = None
            for col, op, v in filters:
                e = ds.field(col) >= pa.scalar(v) if op == ">=" else ds.field(col) < pa.scalar(v)
                expr = e if expr is None else expr & e
            return expr
        entry["files_scanned_over_positions"] = positions_scanned(
            lambda filters: len(list(dataset.get_fragments(filter=expression(filters)))))
        for name, filters in preds.items():
            expr = expression(filters)
            frags = list(dataset.get_fragments(filter=expr))
            q = self.repeat(lambda _, expr=expr: {"rows": dataset.to_table(filter=expr, columns=["l_orderkey"]).num_rows})
            entry["queries"][name] = {"files_scanned": len(frags), "files_total": len(list(dataset.get_fragments())),
                                      **q}
        return entry

    # -- workload 5: cleaning -------------------------------------------------------------------------
    def w_clean(self) -> None:
        from deltalake import DeltaTable

        from hoodpy.table import HoodieTable

        if not hasattr(HoodieTable, "cleaning"):
            self.results["workloads"]["clean"] = {"skipped": "HoodieTable.cleaning is not available"}
            self.save()
            return
        sf = self.args.sf
        rows = pq.ParquetFile(lineitem.generate(self.data, sf)).metadata.num_rows
        rounds = 10
        batches = [self.batch_file_seeded(sf, i, int(rows * 0.005)) for i in range(rounds)]
        out: dict = {"rounds": rounds}
        self.results["workloads"]["clean"] = out

        # The rounds run without the automatic cleaner (it would already have cleaned inside them); the
        # measured clean then keeps only the latest version of each file group, as vacuum(retention 0) does.
        no_auto_clean = {**HOODPY_OPTIONS, "hoodie.clean.automatic": "false"}

        def h_setup():
            path = self.copy_of(self.golden(sf, "unpartitioned", "hoodpy"), "clean-hoodpy")
            t = HoodieTable.for_path(self.spark, str(path), options=no_auto_clean)
            for b in batches:
                t.upsert(self.spark.read.parquet(str(b)))
            return path

        def h_run(path):
            t = self.hoodpy_open(path)
            before = dir_bytes(path)
            r = t.cleaning.run({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                "hoodie.cleaner.fileversions.retained": "1"})
            after = dir_bytes(path)
            return {"files_deleted": before[0] - after[0], "bytes_deleted": before[1] - after[1],
                    "result": str(r)[:200]}

        def d_setup():
            path = self.copy_of(self.golden(sf, "unpartitioned", "delta"), "clean-delta")
            for b in batches:
                DeltaTable(str(path)).merge(pq.read_table(b), MERGE_PREDICATE, source_alias="s", target_alias="t") \
                    .when_matched_update_all().when_not_matched_insert_all().execute()
            return path

        def d_run(path):
            before = dir_bytes(path)
            DeltaTable(str(path)).vacuum(retention_hours=0, dry_run=False, enforce_retention_duration=False)
            after = dir_bytes(path)
            return {"files_deleted": before[0] - after[0], "bytes_deleted": before[1] - after[1]}
        log("clean hoodpy")
        # No warm-up: each setup is ten upsert rounds, which warm both engines anyway.
        out["hoodpy_clean"] = self.repeat(h_run, setup=h_setup, warmup=0)
        log("clean delta")
        out["delta_vacuum"] = self.repeat(d_run, setup=d_setup, warmup=0)
        self.save()

    def batch_file_seeded(self, sf: float, seed: int, updates: int) -> Path:
        path = self.data / f"sf{sf:g}" / f"batch-clean-{seed}-{updates}.parquet"
        if not path.exists():
            table = pq.read_table(lineitem.generate(self.data, sf))
            pq.write_table(lineitem.upsert_batch(table, updates=updates, inserts=0, concentrated=True, seed=seed),
                           path)
        return path

    # -- workload 7: merge-on-read ---------------------------------------------------------------------
    def w_mor(self) -> None:
        """Merge-on-read against copy-on-write and delta-rs on the same layout (issue #18): the upsert batch of
        the upsert workload (5% updates + 1% inserts, concentrated) into a MOR table (Avro log blocks, the
        default; parquet blocks as the tuned variant), a COW table and delta-rs's matched layout; then the
        Q1-style aggregate over the MOR table with 1 and with 5 log files per touched group (written with the
        small-file limit off, so that updates go to logs) against the COW table after the same batches, and the
        compaction of the one-log state against the COW upsert. ``mor_upsert_bucket``: the same upsert into a MOR
        table loaded and written with the BUCKET index (``BUCKET_OPTIONS``), whose updates and inserts all go to
        the buckets' logs with no key lookup. ``--mor-entries`` runs only the entries it names (``read`` and
        ``compaction`` for those steps)."""
        from deltalake import DeltaTable

        sf = self.args.sf
        rows = pq.ParquetFile(lineitem.generate(self.data, sf)).metadata.num_rows
        updates, inserts = int(rows * 0.05), int(rows * 0.01)
        out: dict = {"rows": rows, "updates": updates, "inserts": inserts, "scenarios": {}}
        self.results["workloads"]["mor"] = out
        parquet_blocks = {"hoodie.logfile.data.block.format": "parquet"}
        # With the default small-file limit (100 MB) a file group below it takes the batch's inserts and is
        # rewritten whole, updates included (Hudi's small-file handling for merge-on-read): with it off, updates
        # always go to log files and inserts to new base files.
        logs_only = {"hoodie.parquet.small.file.limit": "0"}
        entries = self.args.mor_entries

        def wanted(name: str) -> bool:
            return not entries or name in entries

        def ratios(res: dict) -> dict:
            """The workload's ratios, of the entries that ran."""
            med = {k: v["median_s"] for k, v in res.items() if isinstance(v, dict) and "median_s" in v}
            med |= {f"read {k}": v["median_s"] for k, v in res.get("read", {}).items()}
            pairs = [("mor_upsert", "delta_merge_matched"), ("mor_upsert_parquet_blocks", "delta_merge_matched"),
                     ("mor_upsert", "cow_upsert"), ("mor_upsert_no_small_files", "delta_merge_matched"),
                     ("mor_upsert_bucket", "delta_merge_matched"), ("read mor_1_log", "read cow"),
                     ("read mor_5_logs", "read cow"), ("read mor_1_log_columns", "read cow"),
                     ("read mor_5_logs_columns", "read cow"), ("compaction_of_1_log", "cow_upsert")]
            return {(f"{a} / {b[5:]}" if a.startswith("read ") else f"{a} / {b}"): round(med[a] / med[b], 3)
                    for a, b in pairs if a in med and b in med}

        for variant in self.args.variants:
            batch = self.batch_file(sf, True, updates, inserts, "w2")
            res: dict = {}
            out["scenarios"][variant] = res

            def setup(golden: str):
                return lambda: self.copy_of(self.golden(sf, variant, golden), golden)

            def upsert(options=None):
                def run(path):
                    self.hoodpy_open(path).upsert(self.spark.read.parquet(str(batch)), options=options)
                return run

            def delta_merge(path):
                DeltaTable(str(path)).merge(pq.read_table(batch), MERGE_PREDICATE, source_alias="s",
                                            target_alias="t").when_matched_update_all() \
                    .when_not_matched_insert_all().execute()

            for name, golden, fn in (("cow_upsert", "hoodpy", upsert()), ("mor_upsert", "hoodpy-mor", upsert()),
                                     ("mor_upsert_parquet_blocks", "hoodpy-mor", upsert(parquet_blocks)),
                                     ("mor_upsert_no_small_files", "hoodpy-mor", upsert(logs_only)),
                                     ("mor_upsert_bucket", "hoodpy-mor-bucket", upsert(BUCKET_OPTIONS)),
                                     ("delta_merge_matched", "delta-matched", delta_merge)):
                if not wanted(name):
                    continue
                log(f"mor sf{sf:g} {variant} {name}")
                res[name] = self.repeat(fn, setup=setup(golden))
                self.save()
            res["layout"] = self.layout_of([bf.size for bf in self.hoodpy_open(
                self.golden(sf, variant, "hoodpy")).file_system_view().latest_base_files()])
            if not (wanted("read") or wanted("compaction")):
                res["ratios"] = ratios(res)
                log(f"mor ratios {variant}: {res['ratios']}")
                self.save()
                continue

            # Reads and compaction: states built once (untimed), then measured interleaved.
            cow = self.copy_of(self.golden(sf, variant, "hoodpy"), "mor-read-cow")
            mor1 = self.copy_of(self.golden(sf, variant, "hoodpy-mor"), "mor-read-1")
            mor5 = self.copy_of(self.golden(sf, variant, "hoodpy-mor"), "mor-read-5")
            upsert()(cow)
            upsert(logs_only)(mor1)
            for seed in range(5):
                self.hoodpy_open(mor5).upsert(self.spark.read.parquet(str(self.batch_file_seeded(sf, seed, updates))),
                                              options=logs_only)
            # *_columns: read(columns=...) of the aggregate's columns (the merge tasks return only those).
            targets = (("cow", cow, None), ("mor_1_log", mor1, None), ("mor_5_logs", mor5, None),
                       ("mor_1_log_columns", mor1, Q1_COLUMNS), ("mor_5_logs_columns", mor5, Q1_COLUMNS))
            reads: dict = {name: [] for name, _, _ in targets}
            for _ in range(self.args.warmup if wanted("read") else 0):
                for _, path, columns in targets:
                    q1_aggregate(self.hoodpy_open(path).read(columns=columns))
            for _ in range(self.args.reps if wanted("read") else 0):
                for name, path, columns in targets:
                    with measure(self.spark) as m:
                        q1_aggregate(self.hoodpy_open(path).read(columns=columns))
                    reads[name].append(m.as_dict())
            if wanted("read"):
                res["read"] = {k: summarize(v) for k, v in reads.items()}

            def compaction_setup():
                return self.copy_of(mor1, "mor-compact")

            def compact(path):
                done = self.hoodpy_open(path).compaction.run()
                return {"compactions": len(done), "files_written": sum(r.files_written for r in done)}

            if wanted("compaction"):
                res["compaction_of_1_log"] = self.repeat(compact, setup=compaction_setup, warmup=0)
            res["ratios"] = ratios(res)
            log(f"mor ratios {variant}: {res['ratios']}")
            self.save()

    # -- workload 6: snapshot read --------------------------------------------------------------------
    def w_read(self) -> None:

        sf = self.args.sf
        out: dict = {"query": "TPC-H Q1-style: group by l_returnflag, l_linestatus; sums, avg, count", "scenarios": {}}
        self.results["workloads"]["read"] = out

        q1 = q1_aggregate
        for variant in self.args.variants:
            path = self.golden(sf, variant, "hoodpy")
            table = self.hoodpy_open(path)
            uris = [table.storage.uri(bf.path) for bf in table.file_system_view().latest_base_files()]
            q1(self.spark.read.parquet(*uris))  # warm the JVM and the page cache for both
            res = {}
            # Interleaved so machine load drifts over both alike.
            h, p = [], []
            for _ in range(self.args.reps):
                with measure(self.spark) as m:
                    q1(self.hoodpy_open(path).read())
                h.append(m.as_dict())
                with measure(self.spark) as m:
                    q1(self.spark.read.parquet(*uris))
                p.append(m.as_dict())
            res["hoodpy_snapshot"] = summarize(h)
            res["spark_read_parquet"] = summarize(p)
            res["ratio"] = round(res["hoodpy_snapshot"]["median_s"] / res["spark_read_parquet"]["median_s"], 3)
            out["scenarios"][variant] = res
            self.save()


# The columns q1_aggregate uses.
Q1_COLUMNS = ["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_shipdate"]


def q1_aggregate(df) -> list:
    """TPC-H Q1-style aggregate: group by l_returnflag, l_linestatus; sums, an average, a count."""
    from pyspark.sql import functions as F

    return (df.filter(F.col("l_shipdate") <= F.lit("1998-09-02").cast("date"))
            .groupBy("l_returnflag", "l_linestatus")
            .agg(F.sum("l_quantity"), F.sum("l_extendedprice"),
                 F.sum(F.col("l_extendedprice") * (1 - F.col("l_discount"))), F.avg("l_discount"),
                 F.count(F.lit(1))).collect())


# -- charts -----------------------------------------------------------------------------------------
def charts(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for name, w in results["workloads"].items():
        groups = {}
        if "scenarios" in w:
            for scen, engines in w["scenarios"].items():
                groups[scen] = {e: v for e, v in engines.items() if isinstance(v, dict) and "median_s" in v}
        elif "layouts" in w:
            for layout, entry in w["layouts"].items():
                groups[layout] = {"clustering": entry["clustering"],
                                  **{f"query {q}": v for q, v in entry["queries"].items()}}
        elif name == "clean":
            groups["clean"] = {e: v for e, v in w.items() if isinstance(v, dict) and "median_s" in v}
        if not groups:
            continue
        engines = sorted({e for g in groups.values() for e in g})
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups) * max(1, len(engines)) / 2), 4.5))
        width = 0.8 / max(1, len(engines))
        for i, e in enumerate(engines):
            xs, ys, lo, hi = [], [], [], []
            for j, g in enumerate(groups.values()):
                if e in g:
                    v = g[e]
                    xs.append(j + i * width)
                    ys.append(v["median_s"])
                    lo.append(v["median_s"] - v["min_s"])
                    hi.append(v["max_s"] - v["median_s"])
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=e)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
        ax.set_xticklabels(list(groups), rotation=15, fontsize=8)
        ax.set_ylabel("seconds (median, min/max bars)")
        ax.set_title(f"{name} — SF {results['meta']['sf']}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=110)
        plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--workloads", default="load,upsert,scaling,clustering,clean,read")
    p.add_argument("--variants", default="unpartitioned,partitioned")
    p.add_argument("--upsert-engines", default="hoodpy_upsert,hoodpy_upsert_tuned,delta_merge_default_matched,"
                                               "delta_merge_streamed_exec_false_matched,delta_merge_default,"
                                               "delta_merge_streamed_exec_false,spark_full_rewrite")
    p.add_argument("--tuned", default="", help="hoodie.* options of the tuned hoodpy variant, k=v,k=v "
                                               "(empty or 'none': hoodpy runs with defaults only)")
    p.add_argument("--scaling", default="0.25,1,2,4", help="scale factors for the scaling workload")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1, help="untimed runs of each engine before its timed ones")
    p.add_argument("--cluster-files", type=int, default=16, help="files the clustering workload aims for")
    p.add_argument("--mor-entries", default="", help="mor workload entries to run, comma separated (e.g. "
                                                      "'mor_upsert_bucket,delta_merge_matched'; 'read' and "
                                                      "'compaction' name those steps; default: all)")
    p.add_argument("--cluster-layouts", default="", help="clustering workload entries to run, comma separated "
                                                         "(e.g. 'z-order,delta_z_order'; default: all)")
    p.add_argument("--data", default="/tmp/hoodpy-bench/data", help="generated TPC-H data (kept between runs)")
    p.add_argument("--work", default="/tmp/hoodpy-bench/work", help="tables written by the benchmark")
    p.add_argument("--out", default="benchmarks/results/latest")
    p.add_argument("--driver-memory", default="6g")
    args = p.parse_args()
    args.variants = [v for v in args.variants.split(",") if v]
    args.upsert_engines = [e for e in args.upsert_engines.split(",") if e]
    args.scaling = [float(s) for s in args.scaling.split(",") if s]
    args.cluster_layouts = [c for c in args.cluster_layouts.split(",") if c]
    args.mor_entries = [e for e in args.mor_entries.split(",") if e]
    tuned = "" if args.tuned.strip().lower() == "none" else args.tuned
    args.tuned = dict(kv.split("=", 1) for kv in tuned.split(",") if kv)
    bench = Bench(args)
    for w in [w for w in args.workloads.split(",") if w]:
        started = time.perf_counter()
        getattr(bench, f"w_{w}")()
        log(f"workload {w} done in {time.perf_counter() - started:.0f}s")
        charts(bench.results, bench.out)
    bench.results["meta"]["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    bench.save()
    charts(bench.results, bench.out)
    print(json.dumps(bench.results["workloads"], indent=1, default=str)[:20000])
    bench.spark.stop()


if __name__ == "__main__":
    main()

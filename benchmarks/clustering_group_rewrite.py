"""Wall and CPU seconds of clustering's in-task group rewrite (group_rewrite.rewrite_group) without Spark, and
an A/B against the same function at another git revision, alternated in this one process.

The group is every base file of a hoodpy table (as benchmarks/run.py's clustering workload plans it at SF <= 1);
the sample that places the column and output-file boundaries is drawn here with pyarrow (fixed seed), so both
sides get the same spec and boundaries. Each run writes its output files into a fresh copy of the table's
directory layout and deletes them afterwards. With ``--ab REV`` the first repetition's files of both sides are
compared row for row.

    python benchmarks/clustering_group_rewrite.py --table /tmp/x/golden-sf0.25/hoodpy-unpartitioned --reps 3 --ab main
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SAMPLE_ROWS = 200_000
SNAP = 0.1
STRATEGIES = {"z-order": "ZORDER", "hilbert": "HILBERT", "linear": "LINEAR"}


def _module_at(rev: str, rel: str, name: str) -> types.ModuleType:
    source = subprocess.run(["git", "show", f"{rev}:{rel}"], check=True, capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{rel}"
    sys.modules[name] = module  # dataclasses look their module up while the class body runs
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _side(rev: str | None) -> tuple[types.ModuleType, types.ModuleType]:
    """(layout, group_rewrite) modules: this worktree's, or ``rev``'s."""
    if rev is None:
        from hoodpy.services.clustering import group_rewrite, layout
        return layout, group_rewrite
    layout = _module_at(rev, "hoodpy/services/clustering/layout.py", f"_ab_layout_{rev}")
    rewrite = _module_at(rev, "hoodpy/services/clustering/group_rewrite.py", f"_ab_group_rewrite_{rev}")
    rewrite.layout = layout
    return layout, rewrite


def _work(layout, rewrite, table_dir: Path, base_files: list[str], files: int, strategy: str):
    """The GroupRewrite for one group of every base file, sample and boundaries as execute.py makes them."""
    from hoodpy.meta_fields import RECORD_KEY

    columns = ("l_shipdate", "l_partkey")
    sample = pa.concat_tables(pq.read_table(table_dir / rel, columns=[RECORD_KEY, *columns]) for rel in base_files)
    picked = np.sort(np.random.default_rng(17).choice(sample.num_rows, min(SAMPLE_ROWS, sample.num_rows),
                                                      replace=False))
    sample = sample.take(pa.array(picked))
    spec = layout.LayoutSpec(strategy, columns, layout.SAMPLE, None, RECORD_KEY)
    if spec.needs_boundaries:
        bounds = tuple(layout.column_boundaries(layout.direct_keys(layout.resolve_column(sample, c)), 4096)
                       for c in columns)
        spec = layout.LayoutSpec(strategy, columns, layout.SAMPLE, bounds, RECORD_KEY)
    boundaries = layout.range_boundaries(layout.sort_keys(sample, spec), files, snap=SNAP)
    file_ids = tuple(f"{i:08d}-0000-0000-0000-000000000000-0" for i in range(files))
    return rewrite.GroupRewrite("", tuple(base_files), file_ids, spec, boundaries)


class _GcClock:
    """Seconds spent in Python's garbage collector (all generations) while running."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--table", required=True, help="a hoodpy table (its base files are the group)")
    p.add_argument("--files", type=int, default=16)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--layout", default="z-order", choices=sorted(STRATEGIES))
    p.add_argument("--threads", type=int, default=2, help="the rewrite's threads (execute.py: cores per task)")
    p.add_argument("--ab", default=None, help="a git revision to alternate with (its group_rewrite and layout)")
    args = p.parse_args()

    from hoodpy.file_group.fs_view import list_base_files
    from hoodpy.meta_fields import META_COLUMNS
    from hoodpy.storage import Storage
    from hoodpy.write.base_file import BaseFileOptions

    source = Path(args.table)
    base_files = sorted(bf.path for bf in list_base_files(Storage(str(source)), None))
    data_schema = pq.read_schema(source / base_files[0])
    schema = pa.schema([data_schema.field(c) for c in META_COLUMNS]
                       + [f for f in data_schema if f.name not in META_COLUMNS])
    sides = {"this": _side(None)}
    if args.ab:
        sides[args.ab] = _side(args.ab)
    works = {name: _work(lay, rw, source, base_files, args.files, STRATEGIES[args.layout])
             for name, (lay, rw) in sides.items()}
    work_dir = Path(tempfile.mkdtemp(prefix="clustering-group-rewrite-", dir=os.environ.get("TMPDIR")))
    table_dir = work_dir / "t"
    shutil.copytree(source, table_dir)
    storage = Storage(str(table_dir))
    results: dict = {name: [] for name in sides}
    gc_clock = _GcClock()
    written: dict[str, list[str]] = {}
    try:
        for rep in range(args.reps):
            for name, (_, rw) in (sides.items() if rep % 2 == 0 else reversed(list(sides.items()))):
                instant = f"2026010100000{rep}{len(written)}"
                gc_before = gc_clock.seconds
                before_cpu, started = _cpu(), time.monotonic()
                stats = rw.rewrite_group(storage, works[name], schema, instant, BaseFileOptions(),
                                         threads=args.threads)
                wall, cpu = time.monotonic() - started, _cpu() - before_cpu
                results[name].append({"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                                      "gc_s": round(gc_clock.seconds - gc_before, 2), "files": len(stats),
                                      "bytes": sum(s["file_size"] for s in stats)})
                paths = [s["path"] for s in sorted(stats, key=lambda s: s["file_id"])]
                if rep == 0:
                    written[name] = [pq.read_table(table_dir / rel) for rel in paths]
                for rel in paths:
                    (table_dir / rel).unlink()
                print(name, results[name][-1], file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    out: dict = {"table": str(source), "input_files": len(base_files), "layout": args.layout,
                 "threads": args.threads, "runs": results,
                 "median_wall_s": {n: float(np.median([r["wall_s"] for r in v])) for n, v in results.items()},
                 "median_cpu_s": {n: float(np.median([r["cpu_s"] for r in v])) for n, v in results.items()}}
    if args.ab:
        drop = ["_hoodie_file_name"]  # names carry the instant, which differs per run
        same = [a.drop_columns(drop).equals(b.drop_columns(drop))
                for a, b in zip(written["this"], written[args.ab], strict=True)]
        out["same_rows_row_for_row"] = all(same) and len(written["this"]) == len(written[args.ab])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

"""Alternating in-process A/B of the writer's driver bloom lookup (hoodpy.index.bloom.locate_on_driver): A runs
another version of hoodpy/index/bloom.py (``--base``, e.g. ``git show main:hoodpy/index/bloom.py > /tmp/a.py``),
B this tree's, on a loaded table and an upsert batch, median CPU and wall seconds of ``--reps`` alternations.

``--mode mor``: the default merge-on-read upsert's lookup (the smallest file takes the inserts and is not looked
up; every other file's candidates are confirmed). ``--mode cow``: the copy-on-write upsert's (the candidates no
other file's range holds are sent unconfirmed where the file is rewritten anyway, else confirmed).

    .venv/bin/python benchmarks/bloom_lookup_ab.py --base /tmp/a.py --table /tmp/lookup2/work/golden-mor-sf1 \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --mode mor --reps 7
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bloom_lookup_phases import batch_keys  # noqa: E402

from hoodpy.file_group.fs_view import FileSystemView  # noqa: E402
from hoodpy.index import bloom  # noqa: E402
from hoodpy.storage import Storage  # noqa: E402
from hoodpy.timeline.timeline import Timeline  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the A version of hoodpy/index/bloom.py")
    ap.add_argument("--table", required=True)
    ap.add_argument("--batch", required=True)
    ap.add_argument("--key-fields", default="l_orderkey,l_linenumber")
    ap.add_argument("--mode", choices=["mor", "cow"], default="mor")
    ap.add_argument("--max-file-size", type=int, default=120 * 1024 * 1024, help="cow: hoodie.parquet.max.file.size")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("bloom_base", args.base)
    base = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(base)
    storage = Storage(args.table)
    base_files = FileSystemView.load(storage, Timeline.load(storage)).latest_base_files()
    keys = batch_keys(args.batch, args.key_fields.split(","), base_files[0].partition_path)
    insert_file = min(base_files, key=lambda bf: bf.size)
    looked = [bf for bf in base_files if bf is not insert_file]
    trust = {} if args.mode == "mor" else dict(unconfirmed_max_file_size=args.max_file_size, ranged_only=[insert_file])
    runs: dict[str, list[tuple[float, float, int]]] = {"A base": [], "B this tree": []}
    for _ in range(args.reps):
        for name, module in (("A base", base), ("B this tree", bloom)):
            t0, w0 = time.process_time(), time.perf_counter()
            located = module.locate_on_driver(storage, keys, looked, is_global=False, **trust)
            runs[name].append((time.process_time() - t0, time.perf_counter() - w0, located.num_rows))
    print(json.dumps({name: {"cpu_s": round(statistics.median(r[0] for r in rs), 3),
                             "wall_s": round(statistics.median(r[1] for r in rs), 3),
                             "cpu_s_each": [round(r[0], 3) for r in rs], "located": rs[-1][2]}
                      for name, rs in runs.items()}, indent=1))


if __name__ == "__main__":
    main()

"""CPU and wall seconds of the BLOOM index's driver lookup (hoodpy.index.bloom.locate_on_driver), in process (no
Spark), on a loaded table and an upsert batch, with each file's steps timed apart: footer key range, footer
read + bloom filter decode, bloom probes, key column read, candidate confirmation.

The batch keys are built as the key generator builds them for lineitem (``l_orderkey:N,l_linenumber:M``). The
per-file steps are run one after another in this thread (CPU = process_time of the step); the end-to-end
``locate_on_driver`` call is timed as the writer runs it (threads and all).

    .venv/bin/python benchmarks/bloom_lookup_phases.py --table /tmp/cow-upsert/w/golden-sf1/hoodpy-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hoodpy.file_group.fs_view import FileSystemView  # noqa: E402
from hoodpy.index import bloom  # noqa: E402
from hoodpy.index.bloom_filter import FOOTER_BLOOM_FILTER_KEY, BloomFilter  # noqa: E402
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY  # noqa: E402
from hoodpy.storage import Storage  # noqa: E402
from hoodpy.timeline.timeline import Timeline  # noqa: E402


def batch_keys(batch_path: str, key_fields: list[str], partition_path: str) -> pa.Table:
    data = pq.read_table(batch_path, columns=key_fields)
    parts = []
    for i, f in enumerate(key_fields):
        parts += [("," if i else "") + f"{f}:", pc.cast(data[f], pa.string())]
    keys = pc.binary_join_element_wise(*parts, "")
    return pa.table({RECORD_KEY: keys, PARTITION_PATH: pa.repeat(pa.scalar(partition_path), data.num_rows)})


class Clock:
    def __init__(self):
        self.cpu: dict[str, float] = {}

    def timed(self, name, fn, *args, **kwargs):
        t0 = time.process_time()
        out = fn(*args, **kwargs)
        self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - t0
        return out


def steps(storage: Storage, keys: pa.Table, base_files, clock: Clock) -> dict:
    """locate_on_driver's work, one step at a time, one file after another."""
    ranges = clock.timed("key ranges (footers)", bloom.key_ranges, storage, base_files)
    unique = clock.timed("batch keys sorted", lambda: pc.unique(keys.column(RECORD_KEY).combine_chunks()).sort())
    np_keys = unique.to_numpy(zero_copy_only=False)
    per_file = {}
    for bf, (lo, hi) in zip(base_files, ranges):
        start, stop = (0, len(np_keys)) if lo is None else (int(np.searchsorted(np_keys, lo, "left")),
                                                            int(np.searchsorted(np_keys, hi, "right")))
        cands = unique.slice(start, stop - start)
        f = storage.fs.open_input_file(storage.full_path(bf.path))
        pf = clock.timed("footer open", pq.ParquetFile, f)
        text = (pf.metadata.metadata or {}).get(FOOTER_BLOOM_FILTER_KEY.encode())
        filt = clock.timed("bloom decode", BloomFilter.deserialize, text.decode()) if text else None
        hits = clock.timed("bloom probe", filt.might_contain_many, cands) if filt else None
        stored = clock.timed("key column read", bloom.stored_record_keys, pf, None)
        held = clock.timed("confirm (_held)", bloom._held, cands, stored)
        per_file[bf.file_name] = {"rows": pf.metadata.num_rows, "candidates": len(cands),
                                  "bloom_rows": filt.num_rows if filt else None,
                                  "bloom_text_bytes": len(text) if text else 0,
                                  "bloom_positive": sum(hits) if hits is not None else None, "held": len(held)}
        f.close()
    return per_file


def writer_ab(args) -> None:
    """In-process A/B of Writer._tag_and_assign_on_driver's copy-on-write lookup: A confirms every candidate
    against the key column, B sends the candidates no other file's range holds unconfirmed."""
    storage = Storage(args.table)
    view = FileSystemView.load(storage, Timeline.load(storage))
    base_files = view.latest_base_files()
    keys = batch_keys(args.batch, args.key_fields.split(","), base_files[0].partition_path)
    insert_file = min(base_files, key=lambda bf: bf.size)
    looked = [bf for bf in base_files if bf is not insert_file]
    runs: dict[str, list[tuple[float, float, int]]] = {"A confirmed": [], "B unconfirmed sole": []}
    for _ in range(args.reps):
        for name, trust in (("A confirmed", {}), ("B unconfirmed sole", dict(
                unconfirmed_max_file_size=120 * 1024 * 1024, ranged_only=[insert_file]))):
            bloom._key_range.cache_clear()
            t0, w0 = time.process_time(), time.perf_counter()
            located = bloom.locate_on_driver(storage, keys, looked, is_global=False, **trust)
            runs[name].append((time.process_time() - t0, time.perf_counter() - w0, located.num_rows))
            print(f"{name}: {runs[name][-1][0]:.2f} CPU s, {runs[name][-1][1]:.2f} wall s, "
                  f"{located.num_rows} located", flush=True)
    print(json.dumps({name: {"cpu_s": round(statistics.median(r[0] for r in rs), 3),
                             "wall_s": round(statistics.median(r[1] for r in rs), 3), "located": rs[-1][2]}
                      for name, rs in runs.items()}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", required=True)
    ap.add_argument("--batch", required=True)
    ap.add_argument("--key-fields", default="l_orderkey,l_linenumber")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--writer-ab", action="store_true",
                    help="instead: the copy-on-write writer's lookup (the smallest file takes the inserts, not looked "
                         "up), with unconfirmed sole candidates (B) and without (A), alternated --reps times")
    args = ap.parse_args()
    if args.writer_ab:
        writer_ab(args)
        return
    storage = Storage(args.table)
    view = FileSystemView.load(storage, Timeline.load(storage))
    base_files = view.latest_base_files()
    keys = batch_keys(args.batch, args.key_fields.split(","), base_files[0].partition_path)
    print(f"{len(base_files)} base files, {keys.num_rows} batch keys", flush=True)
    walls, cpus, clocks, files, found = [], [], [], None, None
    for _ in range(args.reps):
        bloom._key_range.cache_clear()
        t0, w0 = time.process_time(), time.perf_counter()
        located = bloom.locate_on_driver(storage, keys, base_files, is_global=False)
        cpus.append(time.process_time() - t0)
        walls.append(time.perf_counter() - w0)
        found = located.num_rows
        bloom._key_range.cache_clear()
        clock = Clock()
        files = steps(storage, keys, base_files, clock)
        clocks.append(clock.cpu)
        print(f"locate_on_driver: {cpus[-1]:.2f} CPU s, {walls[-1]:.2f} wall s, {found} located; steps "
              + ", ".join(f"{k} {v:.2f}" for k, v in clock.cpu.items()), flush=True)
    result = {"located": found, "locate_cpu_s": round(statistics.median(cpus), 3),
              "locate_wall_s": round(statistics.median(walls), 3),
              "steps_cpu_s": {k: round(statistics.median(c[k] for c in clocks), 3) for k in clocks[0]},
              "files": files}
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

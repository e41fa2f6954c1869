"""The record-index lookup of an upsert batch, in-process and without Spark: ``RecordIndex.lookup`` of the batch's
keys on a table that ``benchmarks/record_index_lookup.py --work DIR --keep`` built (DIR/golden, DIR/batch.parquet).

Each rep opens a fresh ``RecordIndex`` (as every upsert does) and looks the keys up; reported per rep and as
medians: wall and CPU seconds (time.process_time: the driver's work, apart from the machine's load), the bytes
the lookup read (base HFile ranges, log files), the HFile data blocks it inflated and the keys it found.
``--profile`` prints a cProfile of one more lookup, its shards read on one thread (by own time, top 25).

    PYTHONPATH=. python benchmarks/record_index_lookup.py --sf 0.25 --reps 1 --work /tmp/me/sf0.25 --keep
    PYTHONPATH=. python benchmarks/record_index_lookup_profile.py --work /tmp/me/sf0.25 --reps 7
    PYTHONPATH=. python benchmarks/record_index_lookup_profile.py --work /tmp/me/sf0.25 --code /tmp/before  # A/B
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import time
from pathlib import Path

# --code DIR: import hoodpy from DIR (another checkout, for A/B runs of the same table)
_CODE = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv else str(Path(__file__).resolve().parents[1])
sys.path.insert(0, _CODE)

import pyarrow.parquet as pq  # noqa: E402

from hoodpy.config import HoodieConfig  # noqa: E402
from hoodpy.config.properties import load_table_properties  # noqa: E402
from hoodpy.hfile import block  # noqa: E402
from hoodpy.keygen import KeyGenerator  # noqa: E402
from hoodpy.metadata_table import record_index  # noqa: E402
from hoodpy.metadata_table.reader import ValidInstants  # noqa: E402
from hoodpy.metadata_table.record_index import RecordIndex  # noqa: E402
from hoodpy.storage import Storage  # noqa: E402
from hoodpy.timeline.timeline import Timeline  # noqa: E402


class _Inflations:
    """Counts the HFile blocks the lookup inflates and the bytes it inflates (not thread-safe: approximate when
    shards are read on threads; exact with --threads 1)."""

    def __init__(self):
        self.blocks = self.bytes = 0
        original = block.decompress

        def counted(payload, codec, size):
            self.blocks += 1
            self.bytes += size
            return original(payload, codec, size)
        block.decompress = counted
        inflating = getattr(block, "InflatingPayload", None)  # data blocks inflated as far as a lookup needs
        if inflating is not None:
            grow = inflating.grow

            def grown(payload):
                before, first = len(payload.data), not payload.data and not payload.complete
                out = grow(payload)
                self.blocks += first
                self.bytes += len(payload.data) - before
                return out
            inflating.grow = grown


def lookup_once(storage: Storage, keys: list[str], inflations: _Inflations) -> dict[str, float]:
    b0, y0 = inflations.blocks, inflations.bytes
    t0, c0 = time.perf_counter(), time.process_time()
    index = RecordIndex(storage)
    found = index.lookup(keys, Timeline.load(storage))
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "found": len(found),
            "base_bytes": index.counts.base_bytes, "log_bytes": index.counts.log_bytes, "files": index.counts.files,
            "blocks_inflated": inflations.blocks - b0, "inflated_bytes": inflations.bytes - y0}


def _lookup_on_this_thread(storage: Storage, keys: list[str]) -> None:
    """What RecordIndex.lookup does, its shards read one after the other on this thread (cProfile sees one)."""
    index = RecordIndex(storage)
    valid = ValidInstants.of(index.table.timeline, Timeline.load(storage))
    for shard, shard_keys in index.shard_keys(keys).items():
        index._read_group(index.groups[shard], shard_keys, valid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keys", type=int, default=None,
                        help="look up only the batch's first N keys (fewer keys per block: a larger table's ratio)")
    parser.add_argument("--code", help="the folder holding the hoodpy package to measure (default: this checkout's)")
    parser.add_argument("--threads", type=int, default=None,
                        help="shards read at once (default: hoodpy's; the profile reads them on one thread)")
    args = parser.parse_args()
    storage = Storage(str(args.work / "golden"))
    keygen = KeyGenerator.from_config(HoodieConfig(load_table_properties(storage)))
    keys = keygen.record_keys_of(pq.read_table(args.work / "batch.parquet")).to_pylist()[:args.keys]
    if args.threads:
        record_index._READ_THREADS = args.threads
    inflations = _Inflations()
    runs = [lookup_once(storage, keys, inflations) for _ in range(args.reps)]
    print(json.dumps({"keys": len(keys), "median": {k: statistics.median(r[k] for r in runs) for k in runs[0]},
                      "runs": runs}, indent=2))
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(_lookup_on_this_thread, storage, keys)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()

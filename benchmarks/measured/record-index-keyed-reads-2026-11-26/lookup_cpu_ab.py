"""In-process A/B of the record index lookup (no Spark): RecordIndex.lookup of the first N keys of the batch
build_table.py wrote, driver CPU seconds (median of 5) and bytes read. The old code (before rli-speed) read each
touched shard's whole slice: its bytes are the files' sizes.

    PYTHONPATH=/path/to/old python lookup_cpu_ab.py /tmp/t025 /tmp/batch-0.25.parquet 2500
    PYTHONPATH=. python lookup_cpu_ab.py /tmp/t025 /tmp/batch-0.25.parquet 2500
"""
import sys, time, statistics, os
import pyarrow.parquet as pq
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline
from hoodpy.metadata_table.record_index import RecordIndex, shards_of
t, batch, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
st = Storage(t); b = pq.read_table(batch)
keys = [f"l_orderkey:{o},l_linenumber:{l}" for o, l in zip(b.column("l_orderkey").to_pylist(), b.column("l_linenumber").to_pylist())][:n]
tl = Timeline.load(st)
cpu = []
for _ in range(5):
    c = time.process_time(); idx = RecordIndex(st); r = idx.lookup(keys, tl); cpu.append(time.process_time() - c)
counts = getattr(idx, "counts", None)
if counts is None:  # the old code read every touched shard's whole slice
    paths = idx.slice_paths(); touched = set(shards_of(keys, idx.file_group_count).tolist())
    read = sum(os.path.getsize(f"{t}/.hoodie/metadata/{p}") for s in touched for p in paths[s] if p)
else:
    read = counts.base_bytes + counts.log_bytes  # the last lookup's snapshot
print(f"{'new' if counts else 'old'} keys={n} found={len(r)} cpu_median_s={statistics.median(cpu):.3f} bytes_read={read}")

"""CPU seconds of the record index build's in-memory part (shard, encode, bloom, HFile) for N keys, as the
code under PYTHONPATH does it (old: per key; new: bulk)."""
import sys, time, uuid, random
from hoodpy.metadata_table import record_index as ri
from hoodpy.metadata_table.records import SCHEMA
from hoodpy.hfile import write_records
from hoodpy.index.bloom_filter import BloomFilter
N, groups = int(sys.argv[1]), 4
random.seed(1)
fids = [str(uuid.UUID(int=random.getrandbits(128))) + "-0" for _ in range(200)]
entries = {f"{i}:{i % 7}": ri.Location(f"l_shipdate_year={1992 + i % 7}/m={i % 12}", fids[i % 200], "20261126064500123")
           for i in range(N)}
new = hasattr(ri, "encoded_records")
c = time.process_time()
shards = [{} for _ in range(groups)]
if new:
    for (k, loc), s in zip(entries.items(), ri.shards_of(list(entries), groups).tolist()):
        shards[s][k] = loc
else:
    for k, loc in entries.items():
        shards[ri.shard_of(k, groups)][k] = loc
size = 0
for shard in shards:
    recs = ri.encoded_records(shard, True) if new else [(k, ri.index_record(k, shard[k], utc=True)) for k in sorted(shard)]
    keys = [k for k, _ in recs]
    bloom = BloomFilter.create(10000, 1e-9, 100000)
    if new:
        bloom.add_all(keys)
    else:
        for k in keys:
            bloom.add(k)
    size += len(write_records(recs, SCHEMA, create_time_ms=1, meta_blocks={"bloomFilter": bloom.serialize().encode()}))
print(f"{'new' if new else 'old'} {time.process_time() - c:.2f} {size}")

"""Build a lineitem table with its record_index (bulk_insert, then a one-row RECORD_INDEX upsert) and keep it,
with the upsert batch record_index_lookup.py uses, for lookup_cpu_ab.py.

    PYTHONPATH=. python benchmarks/measured/record-index-keyed-reads-2026-11-26/build_table.py 0.25 /tmp/t025
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import pyarrow.parquet as pq
import lineitem
from spark_local import spark_session
from hoodpy.table import HoodieTable
sf = float(sys.argv[1]); out = Path(sys.argv[2])
spark = spark_session("rli-build", shuffle_partitions=4)
src = lineitem.generate(Path("/tmp/hoodpy-bench/data"), sf)
source = pq.read_table(src)
batch = lineitem.upsert_batch(source, updates=2000, inserts=500, concentrated=False)
pq.write_table(batch, out.parent / f"batch-{sf}.parquet")
options = {"hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}
t = HoodieTable.create(spark, str(out), table_name="lineitem", record_key_fields=list(lineitem.RECORD_KEY),
                       partition_fields=list(lineitem.PARTITION_FIELDS), hive_style_partitioning=True, options=options)
t.bulk_insert(spark.read.parquet(str(src)))
t.upsert(spark.read.parquet(str(out.parent / f"batch-{sf}.parquet")).limit(1), options={"hoodie.index.type": "RECORD_INDEX"})
print("built", out)

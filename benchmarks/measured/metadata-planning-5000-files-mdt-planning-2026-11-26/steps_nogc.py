import sys, time, statistics
sys.path.insert(0, "benchmarks")
import pyarrow as pa
from hoodpy.file_group.fs_view import FileSystemView, table_listing
from hoodpy.read import data_skipping
from hoodpy.metadata_table.column_stats import read_column_stats
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline
SCHEMA = pa.schema([("x", pa.int64()), ("s", pa.string())])
st = Storage(sys.argv[1])
import gc, os
if os.environ.get("NOGC"): gc.disable()
acc = {}
def t(name, fn):
    c = time.process_time(); r = fn(); acc.setdefault(name, []).append((time.process_time() - c) * 1000); return r
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 7):
    data_skipping.clear_cache()
    tl = t("timeline", lambda: Timeline.load(st))
    listing = t("listing(mdt files)", lambda: table_listing(st, tl))
    view = t("view+latest", lambda: FileSystemView.load(st, tl).latest_base_files())
    stats = t("read_column_stats x", lambda: read_column_stats(st, tl, ["x"]))
    kept = t("prune total", lambda: data_skipping.prune_by_column_stats(st, view, [("x", ">=", 99000)], SCHEMA, tl))
    assert len(kept) == 50, len(kept)
for k, v in acc.items():
    print(f"{k:25s} median {statistics.median(v):7.1f} ms CPU  {[round(x) for x in v]}")

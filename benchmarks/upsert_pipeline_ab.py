"""In-process A/B of the copy-on-write upsert's pipeline around the merge (issue #16, session 15): "old" restores
the session-14 steps by patching them back in, "new" runs the code as it is. Restored:

* the merge tasks as ``groupBy(bin, partition, file id).applyInArrow`` (Spark sorts the batch by group in the
  JVM) instead of ``mapInArrow`` over the bins, each task splitting its rows by group (targets.merge_bin);
* a copy-on-write upsert of a single merge bin shuffled by its bin label (now: the joined records' partitions
  coalesced into the one task, no shuffle).

Modes alternate rep by rep in one Spark session, each on a fresh copy of a loaded table, so both see the same
machine load; figures per rep: wall, Spark jobs, CPU seconds of the driver, the JVM and the Python workers (from
/proc), and the write stats (the same in both modes).

    .venv/bin/python benchmarks/upsert_pipeline_ab.py --golden /tmp/cow-upsert/w/golden-sf1/hoodpy-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 --out /tmp/ab.json
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import DataFrame  # noqa: E402

from upsert_ab import run_upsert_ab  # noqa: E402

from hoodpy.meta_fields import PARTITION_PATH  # noqa: E402
from hoodpy.write import targets, writer  # noqa: E402
from hoodpy.write.merge import TARGET_FILE_ID, merge_file_group  # noqa: E402


@contextmanager
def old_pipeline():
    """Session 14's merge tasks: Spark groups (and sorts) each bin's rows by file group."""
    saved = DataFrame.mapInArrow

    def map_in_arrow(self, func, schema, *a, **k):
        if isinstance(func, functools.partial) and func.func is targets.merge_bin:
            return self.groupBy(targets.MERGE_BIN, PARTITION_PATH, TARGET_FILE_ID).applyInArrow(
                functools.partial(merge_file_group, *func.args), schema)
        return saved(self, func, schema, *a, **k)

    attach = writer.attach_targets

    def shuffled_attach(spark, records, table, storage, temp_dir, num_bins, *a, **k):
        joined = attach(spark, records, table, storage, temp_dir, 2, *a, **k)  # 2 bins: not coalesced
        return joined.repartition(max(1, num_bins), targets.MERGE_BIN)  # replaces the 2-bin repartition

    DataFrame.mapInArrow = map_in_arrow
    writer.attach_targets = shuffled_attach
    try:
        yield
    finally:
        DataFrame.mapInArrow = saved
        writer.attach_targets = attach


if __name__ == "__main__":
    run_upsert_ab("upsert-pipeline-ab", __doc__, old_pipeline)

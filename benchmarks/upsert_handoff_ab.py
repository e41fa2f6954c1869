"""In-process A/B of what the JVM hands an upsert's one merge task (issues #16/#18, session 25): "old" ships the
records with their constant partition path, target file id and merge bin columns, and keeps Spark's byte bound on
the Arrow batches, as before; "new" runs the code as it is (the task adds the one target's partition path and
file id itself, log_append.each_file_group; the byte bound is lifted where idle, arrow_batches). Covers
both the copy-on-write merge (targets.merge_bin) and the merge-on-read task (log_append.write_partition): pass
a COW or a MOR golden table. Modes alternate rep by rep in one Spark session (upsert_ab.run_upsert_ab): wall,
Spark jobs, CPU seconds of the driver, the JVM and the Python workers, and the write stats.

    .venv/bin/python benchmarks/upsert_handoff_ab.py --golden /tmp/w/golden-sf1/hoodpy-mor-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 4 --out /tmp/ab.json
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.classic.dataframe import DataFrame  # noqa: E402  (Spark 4: the class whose method runs)

from upsert_ab import run_upsert_ab  # noqa: E402

from hoodpy.meta_fields import PARTITION_PATH  # noqa: E402
from hoodpy.write import writer  # noqa: E402
from hoodpy.write.merge import TARGET_FILE_ID  # noqa: E402
from hoodpy.write.targets import MERGE_BIN  # noqa: E402


@contextmanager
def old_handoff():
    """The one target's columns made in the JVM and shipped with every record; Spark's byte bound kept."""
    saved = DataFrame.mapInArrow
    lifted = writer.batches_by_records

    def map_in_arrow(self, func, schema, *a, **k):
        if isinstance(func, functools.partial) and func.keywords.get("target") is not None:
            partition, file_id = func.keywords["target"]
            self = self.withColumns({PARTITION_PATH: F.lit(partition), TARGET_FILE_ID: F.lit(file_id),
                                     MERGE_BIN: F.lit(0)})
            func = functools.partial(func.func, *func.args, **{**func.keywords, "target": None})
        return saved(self, func, schema, *a, **k)

    DataFrame.mapInArrow = map_in_arrow
    writer.batches_by_records = lambda spark, record_size: nullcontext()
    try:
        yield
    finally:
        DataFrame.mapInArrow = saved
        writer.batches_by_records = lifted


if __name__ == "__main__":
    run_upsert_ab("upsert-handoff-ab", __doc__, old_handoff)

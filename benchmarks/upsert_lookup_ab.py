"""In-process A/B of the BLOOM index's driver lookup in one default upsert (issue #16): the session-14 lookup
("new": filters probed only when they can rule a file out, key columns read only from row groups whose key range
holds a candidate, the insert file left to its merge task) against the session-13 lookup ("old": every filter
probed with every candidate, whole key columns, every file looked up), restored by patching those three steps.
Modes alternate rep by rep in one Spark session, each on a fresh copy of a loaded table, so both see the same
machine load; figures per rep: wall, Spark jobs, CPU seconds of the driver, the JVM and the Python workers (from
/proc), and the write stats (the same in both modes).

    .venv/bin/python benchmarks/upsert_lookup_ab.py --golden /tmp/cow-upsert/w/golden-sf1/hoodpy-unpartitioned \\
        --batch /tmp/hoodpy-bench/data/sf1/batch-w2-conc-300060-60012.parquet --reps 3 --out /tmp/ab.json
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from upsert_ab import run_upsert_ab  # noqa: E402

from hoodpy.index import bloom  # noqa: E402
from hoodpy.keygen.stored import stored_record_keys  # noqa: E402
from hoodpy.write.writer import Writer  # noqa: E402


@contextmanager
def old_lookup():
    """The session-13 lookup: full probes, whole key columns, no insert file left out."""
    saved = bloom.rules_out, bloom._stored_keys_for, Writer._insert_files
    bloom.rules_out = lambda b, candidates: not any(b.might_contain_many(candidates))
    bloom._stored_keys_for = lambda pf, candidates, virtual, read=None: stored_record_keys(pf, virtual)
    Writer._insert_files = lambda self, *_: {}
    try:
        yield
    finally:
        bloom.rules_out, bloom._stored_keys_for, Writer._insert_files = saved


if __name__ == "__main__":
    run_upsert_ab("upsert-lookup-ab", __doc__, old_lookup)

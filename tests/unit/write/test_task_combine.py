"""Combining one file group's records in its merge task (hoodpy.write.task_combine): the record
hoodpy.write.records.combine keeps, per key."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.write.task_combine import BATCH_SEQ, combined_in_task

RECORDS = st.lists(st.tuples(st.sampled_from("abcde"), st.one_of(st.none(), st.integers(0, 3)), st.integers(0, 2)),
                   max_size=25)


@settings(max_examples=100, deadline=None)
@given(records=RECORDS, shuffle=st.randoms(use_true_random=False))
def test_largest_ordering_then_last_in_batch_wins(records, shuffle):
    # Rows reach the task in shuffled order; their batch positions (seq) say which came later.
    rows = [(k, ts, b, seq) for seq, (k, ts, b) in enumerate(records)]
    shuffle.shuffle(rows)
    table = pa.table({RECORD_KEY: pa.array([r[0] for r in rows], pa.string()),
                      "ts": pa.array([r[1] for r in rows], pa.int64()), "b": pa.array([r[2] for r in rows], pa.int64()),
                      BATCH_SEQ: pa.array([r[3] for r in rows], pa.int64())})
    out = combined_in_task(table, ("ts", "b"))

    def rank(r):  # Spark's struct ordering: a null is the smallest value
        return (r[1] is not None, r[1] or 0, r[2], r[3])
    best = {}
    for r in rows:
        if r[0] not in best or rank(r) > rank(best[r[0]]):
            best[r[0]] = r
    if len(best) == len(rows):
        assert out is table  # nothing to combine
    else:  # one row per key, the winners in batch order
        assert list(zip(*[out.column(c).to_pylist() for c in (RECORD_KEY, "ts", "b", BATCH_SEQ)])) == \
            sorted(best.values(), key=lambda r: r[3])


def test_unique_keys_pass_through_untouched():
    table = pa.table({RECORD_KEY: ["b", "a"], BATCH_SEQ: pa.array([1, 0], pa.int64())})
    assert combined_in_task(table, ()) is table

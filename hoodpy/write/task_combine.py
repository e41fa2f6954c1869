"""Combining a batch's records per key inside the merge tasks, where every record of a key reaches one task.

Under the BUCKET index a key's file group follows from the key alone, so all records of a key land in one merge
task: combining there (in Arrow) picks the same record :func:`hoodpy.write.records.combine` picks, without that
function's shuffle of the whole batch. The batch order that breaks ties is numbered before the shuffle
(:func:`hoodpy.write.records.with_batch_order`), as ``combine`` numbers it. Pure pyarrow: runs in executors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.meta_fields import RECORD_KEY

BATCH_SEQ = "_hoodie_batch_seq"  # a record's position in the batch; ties between ordering values go to the last


def combined_in_task(incoming: pa.Table, ordering: Sequence[str]) -> pa.Table:
    """One record per key of one file group's records: the largest ordering value (several fields compare as a
    tuple, the first field first; a null is the smallest, as in Spark's struct ordering), on ties the last in
    the batch. The winners come in batch order; a table whose keys are all distinct is returned as it is."""
    keys = incoming.column(RECORD_KEY)
    if pc.count_distinct(keys).as_py() == incoming.num_rows:
        return incoming  # the common case: nothing to combine
    order = pc.sort_indices(incoming, sort_keys=[(c, "ascending", "at_start")
                                                 for c in (RECORD_KEY, *ordering, BATCH_SEQ)])
    sorted_keys = keys.take(order).combine_chunks()
    n = len(sorted_keys)
    last = np.ones(n, dtype=bool)  # the last of each key's run holds its largest (ordering, batch position)
    if n > 1:
        last[:-1] = pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1)).to_numpy(zero_copy_only=False)
    winners = order.to_numpy()[last]
    seq = incoming.column(BATCH_SEQ).take(pa.array(winners)).to_numpy()
    return incoming.take(pa.array(winners[np.argsort(seq, kind="stable")]))

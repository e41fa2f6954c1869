"""Table rows as Arrow tables in Spark tasks: conforming them to a schema, stamping the meta columns, and the
one-row write stats each written base file reports to the driver.

Shared by the write path (merge, bulk insert), clustering and the pyarrow file scan, so it sits below all of
them; pure pyarrow plus the running task's ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.meta_fields import COMMIT_SEQNO, FILE_NAME, META_COLUMNS

# What every file-writing task returns per file; the field order is the DDL's. The log_* and base_file fields
# are set for merge-on-read log files only (HoodieDeltaWriteStat), null for base files.
WRITE_STATS_SCHEMA = pa.schema([
    ("partition_path", pa.string()), ("file_id", pa.string()), ("path", pa.string()),
    ("prev_commit", pa.string()), ("num_writes", pa.int64()), ("num_deletes", pa.int64()),
    ("num_update_writes", pa.int64()), ("num_inserts", pa.int64()), ("file_size", pa.int64()),
    ("create_time_ms", pa.int64()), ("upsert_time_ms", pa.int64()),
    ("log_version", pa.int64()), ("log_offset", pa.int64()), ("base_file", pa.string()),
    ("log_files", pa.list_(pa.string())),
    ("cdc_paths", pa.list_(pa.string())), ("cdc_sizes", pa.list_(pa.int64())),  # the write stat's cdcStats
])
_DDL_TYPES = {pa.string(): "string", pa.int64(): "long", pa.list_(pa.string()): "array<string>",
              pa.list_(pa.int64()): "array<long>"}
WRITE_STATS_DDL = ", ".join(f"{f.name} {_DDL_TYPES[f.type]}" for f in WRITE_STATS_SCHEMA)


def align(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table``'s columns in ``schema``'s order and types; absent columns become nulls."""
    columns = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            columns.append(col if col.type == f.type else col.cast(f.type))
        else:
            columns.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def null_columns(table: pa.Table, names: Sequence[str]) -> pa.Table:
    """``table`` with the string columns ``names`` all null (the meta values a table with virtual keys does not
    keep)."""
    for name in names:
        table = table.set_column(table.schema.get_field_index(name), name, pa.nulls(table.num_rows, pa.string()))
    return table


def task_ids() -> tuple[int, int, int]:
    from pyspark import TaskContext  # executors only; keeps this module importable without a task

    tc = TaskContext.get()
    if tc is None:
        return 0, 0, 0
    return tc.partitionId(), tc.stageId(), tc.taskAttemptId()


def add_meta_columns(data: pa.Table, keys: pa.Array, partition_path: str, instant_time: str) -> pa.Table:
    n = data.num_rows
    meta = [
        pa.repeat(pa.scalar(instant_time, pa.string()), n),
        pa.nulls(n, pa.string()),  # sequence numbers depend on the final row position
        keys.cast(pa.string()),
        pa.repeat(pa.scalar(partition_path, pa.string()), n),
        pa.nulls(n, pa.string()),
    ]
    return pa.Table.from_arrays(meta + list(data.columns), names=list(META_COLUMNS) + data.column_names)


# Sequence numbers handed out by the running task: one task may write several files (groupBy assigns many
# file groups to one Spark partition), and "<instant>_<partition>_<n>" must stay unique within a commit.
_seq_counter: dict[int | None, int] = {}


def claim_sequence_numbers(count: int) -> int:
    """The first of ``count`` consecutive record sequence numbers, unique within the running task attempt."""
    from pyspark import TaskContext

    tc = TaskContext.get()
    attempt = tc.taskAttemptId() if tc is not None else None
    if attempt not in _seq_counter:
        _seq_counter.clear()  # a Python worker runs one task at a time: forget finished attempts
    first = _seq_counter.get(attempt, 0)
    _seq_counter[attempt] = first + count
    return first


def finalize(rows: pa.Table, fresh: pa.Array, *, instant_time: str, file_name: str, task_partition: int,
             first: int | None = None) -> pa.Table:
    """Stamp the file name on every row and sequence numbers on the rows this write produced, from ``first``
    (None: the task's next ones, claimed)."""
    n = rows.num_rows
    if first is None:
        first = claim_sequence_numbers(n)
    fresh = fresh.combine_chunks() if isinstance(fresh, pa.ChunkedArray) else fresh
    fresh_count = pc.sum(fresh).as_py() or 0
    prefix = f"{instant_time}_{task_partition}"
    if fresh_count == n:
        seqno = numbered(prefix, first, n)
    else:  # numbers for the fresh rows only (a merge rewrites mostly kept rows): row i gets first + i
        seqno = pa.chunked_array([_numbered(chunk, fresh.slice(offset, len(chunk)), first + offset, prefix)
                                  for chunk, offset in _chunks(rows.column(COMMIT_SEQNO))], pa.string())
    rows = rows.set_column(rows.schema.get_field_index(COMMIT_SEQNO), COMMIT_SEQNO, seqno)
    return rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME, repeated(file_name, rows))


def numbered(prefix: str, first: int, n: int) -> pa.Array:
    """The strings ``f"{prefix}_{first + i}"`` for ``i`` in ``range(n)`` (``first`` >= 0), written straight into
    an Arrow string array's buffers: the numbers are consecutive, so they come in runs of one digit count, and
    each run is a matrix of fixed-width rows filled a column at a time. A cast of the numbers to strings and a
    join cost ~0.13 s per million rows of a bulk_insert task; this ~0.03 s.

    Example:
        >>> numbered("20240101000000000_3", 98, 3).to_pylist()
        ['20240101000000000_3_98', '20240101000000000_3_99', '20240101000000000_3_100']
    """
    if first < 0:
        raise ValueError(f"sequence numbers start at 0 or above, not {first}")
    head = np.frombuffer(f"{prefix}_".encode(), dtype=np.uint8)
    last = first + n - 1
    runs = []  # (first number, count, digits) per digit count
    start = first
    while start <= last:
        digits = len(str(start))
        stop = min(last, 10 ** digits - 1)
        runs.append((start, stop - start + 1, digits))
        start = stop + 1
    total = sum(count * (len(head) + digits) for _, count, digits in runs)
    if total > np.iinfo(np.int32).max:  # beyond a string array's 32-bit offsets: Arrow's kernels chunk it
        positions = pc.cast(pa.array(np.arange(first, first + n, dtype=np.int64)), pa.string())
        return pc.binary_join_element_wise(prefix, positions, "_")
    data = np.empty(total, dtype=np.uint8)
    offsets = np.empty(n + 1, dtype=np.int32)
    offsets[0] = 0
    at = row = 0
    for start, count, digits in runs:
        width = len(head) + digits
        block = data[at:at + count * width].reshape(count, width)
        block[:, :len(head)] = head
        # uint32 divides several times faster than int64; sequence numbers past 2^32 are not seen in practice.
        rest = np.arange(start, start + count, dtype=np.uint32 if start + count <= 2**32 else np.uint64)
        ten, zero = rest.dtype.type(10), rest.dtype.type(48)
        quotient = np.empty_like(rest)
        for column in range(width - 1, len(head) - 1, -1):  # last digit first
            # rest - (rest // 10) * 10: numpy divides by a scalar with SIMD, its % divides element by element.
            np.floor_divide(rest, ten, out=quotient)
            rest -= quotient * ten
            rest += zero  # ASCII '0' + digit
            block[:, column] = rest
            rest, quotient = quotient, rest
        offsets[row + 1:row + count + 1] = at + width * np.arange(1, count + 1, dtype=np.int32)
        at += count * width
        row += count
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _chunks(column: pa.ChunkedArray) -> list[tuple[pa.Array, int]]:
    """The chunks of ``column`` with their first row."""
    out, offset = [], 0
    for chunk in column.chunks:
        out.append((chunk, offset))
        offset += len(chunk)
    return out


def _numbered(seqno: pa.Array, fresh: pa.Array, first: int, prefix: str) -> pa.Array:
    """``seqno`` with the fresh rows' numbers set (row i of the chunk gets ``first + i``); a chunk without
    fresh rows is kept as it is, not copied."""
    if not pc.any(fresh).as_py():
        return seqno
    positions = pc.cast(pc.add(pc.indices_nonzero(fresh).cast(pa.int64()), first), pa.string())
    return pc.replace_with_mask(seqno, fresh, pc.binary_join_element_wise(prefix, positions, "_"))


def repeated(value: str, rows: pa.Table) -> pa.ChunkedArray:
    """``value`` on every row, chunked as ``rows``: one array as long as the longest chunk, sliced per chunk
    (a file's name repeated over millions of rows is hundreds of MB of string data otherwise)."""
    lengths = [len(c) for c in rows.column(0).chunks] if rows.num_columns else [rows.num_rows]
    longest = max(lengths, default=0)
    cached = _repeated_last.get(value)
    if cached is not None and len(cached) >= longest:
        whole = cached
    else:
        whole = _string_run(value, longest)
        # A task stamps one file's name on batch after batch of rows: the array is made once per file, not
        # per batch (fresh MBs of strings per batch cost a bulk_insert task ~0.1 s per million rows).
        _repeated_last.clear()
        if whole.nbytes <= _REPEATED_CACHE_BYTES:  # a batch's worth; not a whole table's hundreds of MB
            _repeated_last[value] = whole
    return pa.chunked_array([whole.slice(0, n) for n in lengths], pa.string())


def _string_run(value: str, n: int) -> pa.Array:
    """``value`` ``n`` times, built from its bytes repeated (pa.repeat takes ~50 ms for 360k file ids, this well
    under 1 ms); pa.repeat where the run's bytes pass a string array's 32-bit offsets."""
    data = value.encode()
    if len(data) * n >= 2**31:
        return pa.repeat(pa.scalar(value, pa.string()), n)
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(data))
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])


# The last repeated value's array (one entry: the running task's current file name); immutable, so slices of
# it are safe to hand out again.
_repeated_last: dict[str, pa.Array] = {}
_REPEATED_CACHE_BYTES = 32 << 20


def write_stats_row(partition_path: str, file_id: str, path: str, *, prev_commit: str | None, num_writes: int,
                    num_inserts: int, file_size: int, elapsed_ms: int, num_deletes: int = 0,
                    num_update_writes: int = 0, cdc_stats: dict[str, int] | None = None) -> dict[str, Any]:
    """The stats of one written base file; ``prev_commit`` None means a new file group, whose write time
    counts as create time (else as upsert time). ``cdc_stats``: the CDC log files written with it (path ->
    size)."""
    created = prev_commit is None
    return {
        "cdc_paths": list(cdc_stats) if cdc_stats is not None else None,
        "cdc_sizes": list(cdc_stats.values()) if cdc_stats is not None else None,
        "partition_path": partition_path, "file_id": file_id, "path": path,
        "prev_commit": "null" if created else prev_commit,
        "num_writes": num_writes, "num_deletes": num_deletes, "num_update_writes": num_update_writes,
        "num_inserts": num_inserts, "file_size": file_size,
        "create_time_ms": elapsed_ms if created else 0, "upsert_time_ms": 0 if created else elapsed_ms,
    }


def write_stats(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows of :func:`write_stats_row` as the table Spark receives (``WRITE_STATS_DDL``)."""
    return pa.Table.from_pylist(rows, schema=WRITE_STATS_SCHEMA)


def ordering_greater(left: Sequence[pa.Array], right: Sequence[pa.Array]) -> pa.Array:
    """Per row, whether ordering value ``left`` is larger than ``right``, each given as its fields' columns:
    several fields compare as a tuple (Hudi 1.x's ordering fields), the first field first, a tie going to the
    next. Null where a compared value is null (there is nothing to compare)."""
    result = pc.greater(left[-1], right[-1])
    for a, b in zip(reversed(left[:-1]), reversed(right[:-1]), strict=True):
        result = pc.or_(pc.greater(a, b), pc.and_(pc.equal(a, b), result))
    return result


def ordering_rank(columns: Sequence[pa.ChunkedArray]) -> np.ndarray:
    """Dense ascending rank of each row's ordering value, given as its fields' columns (a tuple for several,
    ranked lexicographically); nulls rank last."""
    ranks = [pc.rank(c, sort_keys="ascending", tiebreaker="dense").to_numpy(zero_copy_only=False) for c in columns]
    if len(ranks) == 1:
        return ranks[0]
    order = np.lexsort(ranks[::-1])  # lexsort's last key is the primary one
    stacked = np.stack(ranks)[:, order]
    dense = np.cumsum(np.r_[0, np.any(stacked[:, 1:] != stacked[:, :-1], axis=0)]).astype(np.uint64) + 1
    out = np.empty(len(order), dtype=np.uint64)
    out[order] = dense
    return out

"""Running the steps of one copy-on-write merge task side by side on the executor's cores.

A merge task is one Python worker per touched file group: on a layout of few large files the other cores sit
idle. pyarrow releases the GIL in its readers and compute kernels, so threads overlap the steps that do not
depend on each other: the old file's data columns are read while its keys are matched, and the record batches
of the new file are assembled in parallel. The rows, their order and chunks, and so the written bytes, are
those of doing each step in turn (``threads=1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq


class InlineExecutor(Executor):
    """Runs each call at once in the calling thread: the sequential merge."""

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as e:  # re-raised by result(), as a thread pool's future does
            future.set_exception(e)
        return future


def task_executor(threads: int) -> Executor:
    """Where a merge task runs its side steps: ``threads`` threads, or the calling thread for 1."""
    return ThreadPoolExecutor(threads, thread_name_prefix="hoodpy-merge") if threads > 1 else InlineExecutor()


class SplitRead:
    """A parquet file read in two parts: ``first`` columns now (:attr:`head`), the others in ``executor``;
    :meth:`whole` joins them into the table ``pq.read_table`` gives for the file (file column order, its
    key-value metadata, the same chunks per column), without the ``skip`` columns: those the caller replaces
    whole (a merge stamps every row's file name anew: decoding the stored one is 3M strings of ~70 bytes for
    an SF 1 file, a fifth of the rows' memory)."""

    def __init__(self, path: str, filesystem, first: Iterable[str], executor: Executor, skip: Iterable[str] = ()):
        wanted, skipped = set(first), set(skip)
        names = [n for n in pq.read_schema(path, filesystem=filesystem).names if n not in skipped]
        self._names = names
        self.head = pq.read_table(path, columns=[n for n in names if n in wanted], filesystem=filesystem)
        rest = [n for n in names if n not in wanted]
        self._tail = executor.submit(pq.read_table, path, columns=rest, filesystem=filesystem) if rest else None

    def whole(self) -> pa.Table:
        parts = [self.head] + ([self._tail.result()] if self._tail is not None else [])
        fields = {f.name: (f, part.column(f.name)) for part in parts for f in part.schema}
        ordered = [fields[n] for n in self._names]
        schema = pa.schema([f for f, _ in ordered], metadata=self.head.schema.metadata)
        return pa.Table.from_arrays([c for _, c in ordered], schema=schema)

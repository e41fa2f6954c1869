"""Running the steps of one copy-on-write merge task side by side on the executor's cores.

A merge task is one Python worker per touched file group: on a layout of few large files the other cores sit
idle. pyarrow releases the GIL in its readers and compute kernels, so threads overlap the steps that do not
depend on each other: the old file's data columns are read while its keys are matched, the record batches of
the new file are assembled in parallel, and (streamed merges) each row group of the new file is encoded on a
thread of its own while the next is read and merged (:class:`EncodeThread`). The rows, their order and chunks,
and so the written bytes, are those of doing each step in turn (``threads=1``).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait

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
    an SF 1 file, a fifth of the rows' memory). ``whole=False``: the other columns are not read ahead; the
    caller reads them row group by row group (:meth:`row_groups`), or whole after all."""

    def __init__(self, path: str, filesystem, first: Iterable[str], executor: Executor, skip: Iterable[str] = (),
                 whole: bool = True):
        wanted, skipped = set(first), set(skip)
        names = [n for n in pq.read_schema(path, filesystem=filesystem).names if n not in skipped]
        self._names, self._path, self._fs, self._executor = names, path, filesystem, executor
        self.head = pq.read_table(path, columns=[n for n in names if n in wanted], filesystem=filesystem)
        self._rest = [n for n in names if n not in wanted]
        self._tail = self._read_tail() if whole else None

    def _read_tail(self) -> Future | None:
        return self._executor.submit(pq.read_table, self._path, columns=self._rest, filesystem=self._fs) \
            if self._rest else None

    def whole(self) -> pa.Table:
        if self._tail is None:
            self._tail = self._read_tail()
        return self._joined(self.head, self._tail.result() if self._tail is not None else None)

    def row_groups(self, skip: Collection[int] = ()) -> Iterator[tuple[int, pa.Table | None]]:
        """The file's rows (as :meth:`whole` gives them) one row group at a time, with the number of rows
        before it; the next group is read in the executor while the caller works on this one. The groups in
        ``skip`` are not read (a merge copies them as they are): None in their place."""
        with pq.ParquetFile(self._path, filesystem=self._fs) as file:
            counts = [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)]
            wanted = [i for i in range(len(counts)) if i not in skip]

            def read(i: int) -> pa.Table | None:
                return file.read_row_group(i, columns=self._rest) if self._rest else None

            ahead = self._executor.submit(read, wanted[0]) if wanted else None
            try:
                offset, k = 0, 0
                for i, n in enumerate(counts):
                    if i in skip:
                        yield offset, None
                        offset += n
                        continue
                    tail = ahead.result()
                    k += 1
                    ahead = self._executor.submit(read, wanted[k]) if k < len(wanted) else None
                    yield offset, self._joined(self.head.slice(offset, n), tail)
                    offset += n
            finally:  # a caller that stops early (a failed merge): the file closes once no read is under way
                if ahead is not None:
                    wait([ahead])

    def _joined(self, head: pa.Table, tail: pa.Table | None) -> pa.Table:
        parts = [head] + ([tail] if tail is not None else [])
        fields = {f.name: (f, part.column(f.name)) for part in parts for f in part.schema}
        ordered = [fields[n] for n in self._names]
        schema = pa.schema([f for f, _ in ordered], metadata=self.head.schema.metadata)
        return pa.Table.from_arrays([c for _, c in ordered], schema=schema)


class EncodeThread:
    """Row groups handed to a base file writer (``write(rows)``) on a thread of their own: a merge reads and
    merges the next row group of the old file while this one is encoded (pyarrow's parquet writer releases the
    GIL, but encodes one column at a time). At most ``depth`` groups wait; :meth:`put` blocks beyond that, which
    bounds the memory to a few row groups. ``threaded=False`` writes in the calling thread (the sequential merge).

    A failed write fails the next :meth:`put` or :meth:`finish` with its error; the thread then drops what is
    still queued. ``blocked_s``: how long :meth:`put` waited for the encoder (the encoder was the critical path);
    ``idle_s``: how long the encoder waited for rows (reading and merging were).
    """

    _STOP = object()

    def __init__(self, write: Callable[[pa.Table], None], depth: int = 1, threaded: bool = True):
        self._write = write
        self._error: BaseException | None = None
        self.blocked_s = self.idle_s = 0.0
        self._queue: queue.Queue | None = queue.Queue(maxsize=depth) if threaded else None
        self._thread = threading.Thread(target=self._run, name="hoodpy-merge-encode", daemon=True) \
            if threaded else None
        if self._thread is not None:
            self._thread.start()

    def _run(self) -> None:
        while True:
            waited = time.perf_counter()
            rows = self._queue.get()
            self.idle_s += time.perf_counter() - waited
            if rows is self._STOP:
                return
            if self._error is None:  # after a failure, queued rows are dropped: put() raises it
                try:
                    self._write(rows)
                except BaseException as e:  # noqa: BLE001 - re-raised in the task's thread
                    self._error = e

    def put(self, rows: pa.Table) -> None:
        self._raise_failure()
        if self._queue is None:
            self._write(rows)
            return
        waited = time.perf_counter()
        self._queue.put(rows)
        self.blocked_s += time.perf_counter() - waited

    def finish(self) -> None:
        """Wait until every row group is written; raises the error of a failed write."""
        self._stop()
        self._raise_failure()

    def abort(self) -> None:
        """Stop without writing what is still queued (the task failed)."""
        if self._error is None:
            self._error = RuntimeError("aborted")
        self._stop()

    def _stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise self._error

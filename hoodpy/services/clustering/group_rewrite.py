"""Rewriting a whole clustering group in one Python task: read its base files with pyarrow, sample them to
place the layout's boundaries, find each row's output file and write each output file's rows in order.

This replaces, for groups of base files only (no log files) whose uncompressed size is at most
``hoodie.clustering.group.task.max.bytes``, the Spark scan for the sample, the Spark scan of the rows, the
JVM-to-Python transfer of every row, the Python-side output assignment, the shuffle by output file and the
second JVM-to-Python transfer into the writing tasks. The layout is the distributed path's: the same sort keys
(``layout.sort_keys``), boundaries placed by the same functions from a sample of the same size (drawn here
from the rows in memory with a fixed seed, where the distributed path samples through Spark), the same stable
order (ties broken by the record key).

The group is never sorted as a whole: each row's range (output file) comes from a binary search against the
boundaries (``layout.assign_ranges``), and each output file's rows are sorted on their own in the thread
that writes the file, so sorting overlaps encoding on the task's cores.

The price is memory: a task holds its group's rows (Arrow, uncompressed) plus the output files being
written, hence the bound; larger groups and groups with log files take the distributed path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.arrow_rows import align, finalize, task_ids, write_stats, write_stats_row
from hoodpy.file_group.naming import base_file_name, join_partition, write_token
from hoodpy.meta_fields import FILE_NAME
from hoodpy.services.clustering import layout
from hoodpy.storage import Storage
from hoodpy.write.base_file import BaseFileOptions, write_base_file


@dataclass(frozen=True)
class GroupRewrite:
    """One task's work: a group's base files and the output files (partition path, file id) it becomes."""

    partition_path: str
    base_files: tuple[str, ...]  # relative paths
    file_ids: tuple[str, ...]  # one per output file, in range order
    spec: layout.LayoutSpec  # without column boundaries when the task samples (``boundaries`` None)
    # len(file_ids) - 1 key rows or fewer (see layout.range_boundaries); None: the task places them (and a
    # SAMPLE curve's column boundaries) from ``sample_rows`` rows of the group, drawn with SAMPLE_SEED.
    boundaries: pa.Table | None = None
    sample_rows: int = 0


SAMPLE_SEED = 17


def sampled_layout(rows: pa.Table, work: GroupRewrite) -> tuple[layout.LayoutSpec, pa.Table]:
    """``work``'s spec and output-file boundaries placed from a sample of the group's ``rows``: the same
    functions over the same kind of sample (``sample_rows`` rows, uniformly, without replacement) as the
    driver uses for groups Spark rewrites, drawn here from rows already in memory instead of by a Spark scan."""
    n = rows.num_rows
    if work.sample_rows >= n:
        picked = np.arange(n)
    else:
        picked = np.sort(np.random.default_rng(SAMPLE_SEED).choice(n, max(1, work.sample_rows), replace=False))
    heads = {c if c in rows.column_names else c.split(".")[0] for c in work.spec.columns}
    needed = [c for c in rows.column_names if c in heads or c == work.spec.tiebreak]
    sample = rows.select(needed).take(pa.array(picked, pa.int64()))
    return layout.sampled_layout(work.spec, sample, len(work.file_ids))


def uncompressed_bytes(metadata: pq.FileMetaData) -> int:
    """The in-memory size estimate of a parquet file's rows: its row groups' uncompressed bytes."""
    return sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))


def _read_group(storage: Storage, paths: Sequence[str], schema: pa.Schema) -> pa.Table:
    def read(rel: str) -> pa.Table:
        with storage.fs.open_input_file(storage.full_path(rel)) as f:
            return align(pq.read_table(f), schema)
    with ThreadPoolExecutor(max_workers=4) as pool:
        rows = pa.concat_tables(list(pool.map(read, paths)))
        # Every output file names itself (finalize): the old names need not be carried through the take.
        rows = rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME,
                               pa.nulls(rows.num_rows, pa.string()))
        # One array per column: a take from a chunked column concatenates its chunks on every call, and
        # there is one take per output file. Columns are concatenated in parallel (a copy of the whole group).
        columns = list(pool.map(lambda c: c.combine_chunks(), rows.columns))
    return pa.Table.from_arrays(columns, schema=rows.schema)


def rewrite_group(storage: Storage, work: GroupRewrite, schema: pa.Schema, instant_time: str,
                  options: BaseFileOptions, threads: int = 1) -> list[dict]:
    """Write ``work``'s output files; their write stats rows (see arrow_rows.write_stats_row)."""
    started = time.monotonic()
    rows = _read_group(storage, work.base_files, schema)
    spec, boundaries = (work.spec, work.boundaries) if work.boundaries is not None else sampled_layout(rows, work)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        keys = layout.sort_keys(rows, spec, pool, threads)
    # Each output file is one range of the group's order: its rows are found without sorting the group,
    # then sorted on their own in the writing threads (the same order: see layout.ordered_ranges).
    members = layout.range_members(layout.assign_ranges(keys, boundaries), len(work.file_ids))
    task_partition, stage_id, attempt_id = task_ids()
    token = write_token(task_partition, stage_id, attempt_id)

    def write(k: int) -> dict:
        positions = members[k]
        order = positions[layout.order_indices(keys.take(pa.array(positions, pa.int64())))]
        part = rows.take(pa.array(order, pa.int64()))
        name = base_file_name(work.file_ids[k], token, instant_time)
        rel_path = join_partition(work.partition_path, name)
        # Clustering keeps every record's commit time and sequence number; only the file name changes.
        part = finalize(part, pa.array(np.zeros(part.num_rows, dtype=bool)), instant_time=instant_time,
                        file_name=name, task_partition=task_partition)
        size = write_base_file(storage, rel_path, part, options)
        return write_stats_row(work.partition_path, work.file_ids[k], rel_path, prev_commit=None,
                               num_writes=part.num_rows, num_inserts=part.num_rows, file_size=size,
                               elapsed_ms=int((time.monotonic() - started) * 1000))
    # Only files with rows are written (the distributed path has no task for an empty range either).
    wanted = [k for k in range(len(work.file_ids)) if len(members[k])]
    if threads <= 1:
        return [write(k) for k in wanted]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(write, wanted))


def group_rewrite_task(base_uri: str, works: Sequence[GroupRewrite], schema: pa.Schema, instant_time: str,
                       options: BaseFileOptions, threads: int,
                       ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function over ``spark.range(len(works))``: task i rewrites group i."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        storage = Storage(base_uri)
        for batch in batches:
            for i in batch.column(0).to_pylist():
                stats = rewrite_group(storage, works[i], schema, instant_time, options, threads)
                if stats:
                    yield from write_stats(stats).to_batches()
    return run


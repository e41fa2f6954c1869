"""Compacting one file slice in place, the copy-on-write merge task's way (:mod:`hoodpy.write.merge`).

The slice's log records are folded to one winner per key first (:func:`hoodpy.read.slice_merge.merge_decoded`
over the log blocks and only the base rows whose key a log names, as snapshot reads fold them; its stats are
compaction's write stats). The base file is then rewritten as Java's merge handle rewrites it: base rows keep
their place (a row whose key a log names is replaced by mask with the log's winner, or dropped when a delete
won, or kept when it won by ordering), and keys only the logs name are appended in the order of their first
log record. That is the order of Java 1.1's compacted files in the v9_txns_* samples: an updated key keeps its
row, with the log record's commit time and sequence number. The base file's key and ordering columns are read
first and folded while its other columns load on a second thread
(:class:`hoodpy.write.merge_overlap.SplitRead`); the record batches are built side by side, and the footer's
bloom filter is continued from the old footer with the appended keys (a filter that still holds keys since
deleted is valid: it only answers "maybe" for them).

The base file's row groups holding no row a log record changes (no update, no delete won) are not decoded at
all: their column chunks are copied into the new file byte for byte, the file name column encoded anew, as the
copy-on-write merge copies them (:func:`hoodpy.write.merge.write_spliced`); a changed group is copied but for the
columns the logs change when they are few, else merged and encoded; the log-only keys follow. That needs the base
file's parquet schema to be the one this write has (:meth:`hoodpy.write.base_file.SplicedBaseFile.of`): a file
parquet-mr wrote (Java Hudi), a table schema evolved since the base file, or virtual keys rewrite the whole file
as before. Rows, order and footer entries are the
same either way; only the row groups' bounds differ (a copied group stays one group).

Rows and values are those of merging the whole slice at once (:func:`merge_slice_with_stats`); only the place
of the base rows a log names differs (there: after the untouched ones), as does the bloom filter after deletes
(there: rebuilt over the written keys).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import align
from hoodpy.config import ordering_fields
from hoodpy.keygen.stored import with_record_keys
from hoodpy.meta_fields import FILE_NAME, RECORD_KEY
from hoodpy.read.file_scan import read_base_file
from hoodpy.read.slice_merge import MergeStats, decode_blocks, merge_decoded
from hoodpy.storage import Storage
from hoodpy.timeline.log_format import LogBlock
from hoodpy.write.base_file import BaseFileOptions, SplicedBaseFile, write_base_file
from hoodpy.write.merge import Masks, RowStamp, continued_bloom, merged_rows, untouched_groups, write_spliced
from hoodpy.write.merge_overlap import SplitRead

# Working column of the fold: the base row a version comes from (null: a log record). Never written.
_BASE_ROW = "_hoodie_compaction_base_row"


@dataclass(frozen=True)
class CompactedFile:
    """What compacting a slice wrote: ``size`` None when nothing (a slice of logs only without a record)."""

    stats: MergeStats  # what the merge did
    num_rows: int
    size: int | None
    folded: float  # time.monotonic() when the log records were folded against the base file's keys


def compact_in_place(storage: Storage, base_path: str | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                     ordering_field: str | None, options: BaseFileOptions, executor: Executor, stamp: RowStamp,
                     rel_path: str, threads: int = 2, splice: bool = True) -> CompactedFile:
    """Compact a slice (``base_path``, None for logs only, and its effective log ``blocks``) with ``schema``
    (meta columns first) into the base file ``rel_path``, its rows stamped by ``stamp`` (the new file name;
    ``stamp.fresh`` False: rows keep their commit time and sequence number). With ``splice`` the base file's row
    groups no log record changes are copied byte for byte (:func:`hoodpy.write.merge.write_spliced`) when its
    parquet schema is the one this write has, and a changed group is copied but for the columns the logs change
    when they are few; otherwise (a file parquet-mr wrote, a schema evolved since the base file was written,
    virtual keys) the whole file is decoded and encoded again: the same rows, order and footer entries either
    way."""
    virtual = options.virtual_keys
    fields = tuple(f for f in ordering_fields(ordering_field) if f in schema.names)
    # The log blocks decode (most of a compaction's CPU after the parquet write) while the base file is read.
    decoding = executor.submit(decode_blocks, blocks, schema, virtual)
    footer: dict[bytes, bytes] = {}
    split = spliced = None
    try:
        if base_path is not None and virtual is None:
            # Virtual keys never splice: the keys are computed from the whole rows (as the merge: merge._streams).
            spliced = SplicedBaseFile.of(storage, rel_path, options, schema, base_path) if splice else None
            # The keys and ordering values first: the log is folded against them while the other columns load
            # (all of them when the file cannot be spliced; else only the groups the logs change, afterwards).
            split = SplitRead(storage.full_path(base_path), storage.fs, (RECORD_KEY, *fields), executor,
                              skip=(FILE_NAME,), whole=spliced is None)  # every row gets the new file name
            footer = split.head.schema.metadata or {}
            keyed = align(split.head, pa.schema([schema.field(f) for f in (RECORD_KEY, *fields)]))
        elif base_path is not None:  # virtual keys: the file holds none; they are computed from the whole rows
            keyed = old = with_record_keys(read_base_file(storage, base_path, schema), virtual)
        else:
            keyed = old = schema.empty_table()
        n_old = keyed.num_rows
        # Chunked as read: one array would copy every key of the file (~100 MB at SF 1) for kernels that take chunks.
        old_keys = keyed.column(RECORD_KEY)

        decoded = decoding.result()
        log_keys = pc.unique(pa.chunked_array(
            [pa.array([d.record_key for d in e], pa.string()) if isinstance(e, list)
             else e.column(RECORD_KEY).combine_chunks() for e in decoded], pa.string()).combine_chunks())
        hit_rows = pc.indices_nonzero(pc.is_in(old_keys, value_set=log_keys)).cast(pa.int64())
        touched = keyed.take(hit_rows).append_column(_BASE_ROW, hit_rows)
        work_schema = schema.append(pa.field(_BASE_ROW, pa.int64()))
        nulls = [e if isinstance(e, list) else e.append_column(_BASE_ROW, pa.nulls(e.num_rows, pa.int64()))
                 for e in decoded]
        winners, stats = merge_decoded(touched, nulls, work_schema, ordering_field, untouched=False)
        folded = time.monotonic()
        if base_path is None and stats.log_records == 0:  # only rolled-back blocks: nothing to write
            return CompactedFile(stats, 0, None, folded)

        # Winners in the order of their key's first version: the base file's keys in file order, then log-only
        # keys.
        new_rows = winners.filter(pc.is_null(winners.column(_BASE_ROW))).drop_columns([_BASE_ROW])
        new_keys = new_rows.column(RECORD_KEY).combine_chunks()
        touched_keys = touched.column(RECORD_KEY).combine_chunks()
        hit = hit_rows.to_numpy()
        match_np = np.full(n_old, -1, dtype=np.int64)
        match_np[hit] = pc.fill_null(pc.index_in(touched_keys, value_set=new_keys), -1).to_numpy(
            zero_copy_only=False)
        replaced = match_np >= 0
        deleted = np.zeros(n_old, dtype=bool)
        deleted[hit] = ~np.asarray(pc.is_in(touched_keys, value_set=winners.column(RECORD_KEY).combine_chunks()),
                                   dtype=bool)
        inserted = pc.indices_nonzero(pc.invert(pc.is_in(new_keys, value_set=touched_keys)))
        bloom = executor.submit(continued_bloom, footer, n_old, new_keys.take(inserted), options) \
            if virtual is None else None
        match = pa.array(match_np, mask=~replaced)
        num_rows = n_old - int(deleted.sum()) + len(inserted)
        if spliced is not None:
            masks = Masks(new_rows, match, pa.array(replaced), pa.array(deleted))
            if num_rows:  # as the merge: a changed group is copied but for the columns the logs change, if few
                untouched = untouched_groups(spliced, masks, len(inserted), options.block_size)
                target, spliced = spliced, None  # write_spliced closes or discards it
                size = write_spliced(stamp, options, threads, target, split, schema, new_rows, masks, inserted,
                                     bloom, executor, untouched)
                return CompactedFile(stats, num_rows, size, folded)
            spliced.discard()  # no row left: an empty file, written whole
            spliced = None
        if split is not None:
            old = align(split.whole(), schema)
        rows, _ = merged_rows(old, new_rows, match, pa.array(replaced), pa.array(deleted), inserted, executor)
        rows = stamp.stamped(rows, np.zeros(rows.num_rows, dtype=bool), None)
        size = write_base_file(storage, rel_path, rows, options, bloom.result() if bloom is not None else None)
        return CompactedFile(stats, rows.num_rows, size, folded)
    finally:
        if spliced is not None:  # a failure before the write: the old file closes
            spliced.discard()

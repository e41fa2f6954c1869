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

Rows and values are those of merging the whole slice at once (:func:`merge_slice_with_stats`); only the place
of the base rows a log names differs (there: after the untouched ones), as does the bloom filter after deletes
(there: rebuilt over the written keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import align
from hoodpy.config import ordering_fields
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.keygen.stored import with_record_keys
from hoodpy.meta_fields import FILE_NAME, RECORD_KEY
from hoodpy.read.file_scan import read_base_file
from hoodpy.read.slice_merge import MergeStats, decode_blocks, merge_decoded
from hoodpy.storage import Storage
from hoodpy.timeline.log_format import LogBlock
from hoodpy.write.base_file import BaseFileOptions
from hoodpy.write.merge import continued_bloom, merged_rows
from hoodpy.write.merge_overlap import SplitRead

# Working column of the fold: the base row a version comes from (null: a log record). Never written.
_BASE_ROW = "_hoodie_compaction_base_row"


def compact_in_place(storage: Storage, base_path: str | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                     ordering_field: str | None, options: BaseFileOptions, executor: Executor,
                     ) -> tuple[pa.Table, MergeStats, BloomFilter | None]:
    """The compacted rows of a slice (``base_path``, None for logs only, and its effective log ``blocks``) with
    ``schema`` (meta columns first), what the merge did, and the new file's bloom filter when it could be
    continued from the old footer (it then holds the rows' keys in order, plus any deleted ones)."""
    virtual = options.virtual_keys
    fields = tuple(f for f in ordering_fields(ordering_field) if f in schema.names)
    # The log blocks decode (most of a compaction's CPU after the parquet write) while the base file is read.
    decoding = executor.submit(decode_blocks, blocks, schema, virtual)
    footer: dict[bytes, bytes] = {}
    split = None
    if base_path is not None and virtual is None:
        # The keys and ordering values first: the log is folded against them while the other columns load.
        split = SplitRead(storage.full_path(base_path), storage.fs, (RECORD_KEY, *fields), executor,
                          skip=(FILE_NAME,))  # finalize stamps the new file name on every row
        footer = split.head.schema.metadata or {}
        keyed = align(split.head, pa.schema([schema.field(f) for f in (RECORD_KEY, *fields)]))
    elif base_path is not None:  # virtual keys: the file holds none; they are computed from the whole rows
        keyed = old = with_record_keys(read_base_file(storage, base_path, schema), virtual)
    else:
        keyed = old = schema.empty_table()
    n_old = keyed.num_rows
    old_keys = keyed.column(RECORD_KEY).combine_chunks()

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

    # Winners in the order of their key's first version: the base file's keys in file order, then log-only keys.
    new_rows = winners.filter(pc.is_null(winners.column(_BASE_ROW))).drop_columns([_BASE_ROW])
    new_keys = new_rows.column(RECORD_KEY).combine_chunks()
    touched_keys = touched.column(RECORD_KEY).combine_chunks()
    hit = hit_rows.to_numpy()
    match_np = np.full(n_old, -1, dtype=np.int64)
    match_np[hit] = pc.fill_null(pc.index_in(touched_keys, value_set=new_keys), -1).to_numpy(zero_copy_only=False)
    replaced = match_np >= 0
    deleted = np.zeros(n_old, dtype=bool)
    deleted[hit] = ~np.asarray(pc.is_in(touched_keys, value_set=winners.column(RECORD_KEY).combine_chunks()),
                               dtype=bool)
    inserted = pc.indices_nonzero(pc.invert(pc.is_in(new_keys, value_set=touched_keys)))
    bloom = executor.submit(continued_bloom, footer, n_old, new_keys.take(inserted), options) \
        if virtual is None else None
    if split is not None:
        old = align(split.whole(), schema)
    match = pa.array(match_np, mask=~replaced)
    rows, _ = merged_rows(old, new_rows, match, pa.array(replaced), pa.array(deleted), inserted, executor)
    return rows, stats, bloom.result() if bloom is not None else None

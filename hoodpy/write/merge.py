"""The per-file-group merge that runs in executors: old base file + incoming records -> new base file.

Copy-on-write semantics as Hudi's merge handle has them: rows of the old file keep their place, their
commit time and sequence number; updated rows are replaced in place; deleted rows are dropped; inserts
are appended. Every row gets the new file name. Pure pyarrow; the context ships in the task closure.

The old file's keys (and ordering values) are read and matched first; its other columns are then streamed
row group by row group, each merged group encoded on a thread of its own while the next is read and merged
(:func:`_write_streamed`). A row group without an updated or deleted row is not read at all: its column chunks
are copied into the new file byte for byte, the file name column encoded anew (:func:`write_spliced`, see
:mod:`~hoodpy.write.parquet_splice`), when the old file's parquet schema is the one this write has; a touched
group whose updates change few columns (a uniform batch touches every group) is copied but for those and the
fresh rows' commit time and sequence number, which alone are merged and encoded (:func:`_changed_columns`).
Where the whole old table is needed (CDC change records, virtual keys) the merge builds the whole new table and
writes it at once (:func:`merged_rows`); all write the same rows and footer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hoodpy.arrow_rows import (
    add_meta_columns, align, claim_sequence_numbers, finalize, ordering_greater, task_ids, write_stats,
    write_stats_row,
)
from hoodpy.config import ordering_fields
from hoodpy.file_group.naming import base_file_name, join_partition, write_token
from hoodpy.index.bloom_filter import BloomFilter, footer_key_range
from hoodpy.meta_fields import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hoodpy.storage import Storage
from hoodpy.write.base_file import (
    BaseFileOptions, BaseFileWriter, SplicedBaseFile, footer_entries, new_bloom, resumed_bloom, write_base_file,
)
from hoodpy.write.cdc import CdcWrite, MergeChanges, change_records, write_cdc_log
from hoodpy.write.merge_overlap import EncodeThread, SplitRead, task_executor
from hoodpy.write.task_combine import combined_in_task

_log = logging.getLogger(__name__)

# Working columns of the incoming DataFrame; never written.
TARGET_FILE_ID = "_hoodie_target_file_id"
INVALID_KEY = "_hoodie_invalid_key"  # true where the record key is null or empty
OP = "_hoodie_op"
OP_UPSERT = 0
OP_DELETE = 1


@dataclass(frozen=True)
class ExistingFile:
    path: str  # relative to the base path
    instant_time: str


@dataclass
class MergeContext:
    """What a merge task needs to know, in plain picklable values."""

    base_uri: str
    instant_time: str
    data_schema: pa.Schema  # table columns without meta columns, in table order
    existing: dict[tuple[str, str], ExistingFile] = field(default_factory=dict)
    match_keys: bool = True  # False for insert: incoming rows are appended, never matched
    ordering_field: str | None = None  # set for event-time ordering against storage
    options: BaseFileOptions = field(default_factory=BaseFileOptions)
    cdc: CdcWrite | None = None  # set on tables with hoodie.table.cdc.enabled: merges write CDC log files
    # Set when the batch reaches the tasks uncombined and every record of a key comes to one task (the BUCKET
    # index): the ordering fields the task combines by (see task_combine).
    combine_ordering: tuple[str, ...] | None = None
    # Threads a merge task overlaps its steps on (see merge_overlap); 1 runs them in turn. Same bytes either way.
    threads: int = 2
    # Stream the old file row group by row group when the merge can (see _streams); False: always whole.
    stream: bool = True
    # Streamed merges copy the old file's untouched row groups byte for byte (see write_spliced); False:
    # every group is decoded and encoded again. Same rows and footer either way.
    splice: bool = True


def _continued_bloom(ctx: MergeContext, footer: dict[bytes, bytes], new_keys: pa.Array, inserted: pa.Array,
                     n_old: int, deleted: pa.Array) -> BloomFilter | None:
    """The new file's bloom filter from the old file's, when the old keys stay in place (no deletes) and the
    new ones (``new_keys`` at ``inserted``) follow them: only those are hashed (the 30 hashes per key are a
    third of a merge)."""
    if not n_old or pc.any(deleted).as_py():
        return None
    return continued_bloom(footer, n_old, new_keys.take(inserted), ctx.options)


def continued_bloom(footer: dict[bytes, bytes], n_old: int, appended: pa.Array,
                    options: BaseFileOptions) -> BloomFilter | None:
    """The old file's bloom filter (of its ``n_old`` keys) with the ``appended`` keys added; None when the
    footer holds none to resume (the writer then builds one over every key)."""
    bloom = resumed_bloom(footer, n_old, options) if n_old else None
    if bloom is not None:
        bloom.add_all(appended)
    return bloom


def _replaced(column: pa.Array, is_new: np.ndarray, mask: pa.Array, values: pa.Array) -> pa.Array:
    """``column`` with the rows under ``mask`` replaced by ``values``, in order."""
    try:
        return pc.replace_with_mask(column, mask, values)
    except pa.ArrowNotImplementedError:  # types the kernel lacks (some nested ones): a gather of this batch
        index = np.arange(len(column), dtype=np.int64)
        index[is_new] = len(column) + np.arange(len(values), dtype=np.int64)
        return pa.concat_arrays([column, values]).take(pa.array(index))


# Old keys are looked up only within the batch's key range when at most this share of them lies in it.
_MAX_RANGE_SHARE = 0.5


def matched_rows(old_keys: pa.ChunkedArray, new_keys: pa.Array,
                 old_range: tuple[str, str] | None = None) -> pa.ChunkedArray:
    """``pc.index_in(old_keys, value_set=new_keys)``: per old key, the row of ``new_keys`` holding it, or null.
    A key can only match if it lies between the batch's smallest and largest key: when few old keys do (a batch
    concentrated on a key range, against a file of ~3M keys), only those are looked up and the rows scattered
    back (the hash probe of every key of the file was most of the matching's CPU). ``old_range``: the key range
    the old file's footer states; a batch range holding it holds every old key (a uniform batch): no pruning."""
    n = len(old_keys)
    if not len(new_keys) or not n:
        return pa.chunked_array([pa.nulls(n, pa.int32())])
    bounds = pc.min_max(new_keys)
    low, high = bounds["min"], bounds["max"]
    if not low.is_valid:  # every batch key null: none matches
        return pa.chunked_array([pa.nulls(n, pa.int32())])
    if old_range is not None and low.as_py() <= old_range[0] and old_range[1] <= high.as_py():
        return pc.index_in(old_keys, value_set=new_keys)  # str order is the byte order of their UTF-8
    in_range = pc.fill_null(pc.and_(pc.greater_equal(old_keys, low), pc.less_equal(old_keys, high)), False)
    rows = pc.indices_nonzero(in_range)
    if len(rows) > _MAX_RANGE_SHARE * n:  # a batch spread over the file's keys: the range prunes little
        return pc.index_in(old_keys, value_set=new_keys)
    found = pc.index_in(old_keys.take(rows), value_set=new_keys).combine_chunks() if len(rows) else \
        pa.array([], pa.int32())
    index = np.full(n, -1, dtype=np.int32)
    index[rows.to_numpy()] = pc.fill_null(found, -1).to_numpy(zero_copy_only=False)
    return pa.chunked_array([pa.array(index, mask=index < 0)])


class Masks:
    """Per old row of a file, what a merge does with it, as numpy (``replaced``: by its update, ``deleted``), with
    the updates in old-row order; :meth:`batch` applies them to a record batch of the old file's rows."""

    def __init__(self, new_rows: pa.Table, match: pa.Array, replaced: pa.Array, deleted: pa.Array):
        self.replaced = np.asarray(replaced.to_numpy(zero_copy_only=False), dtype=bool)
        self.deleted = np.asarray(deleted.to_numpy(zero_copy_only=False), dtype=bool)
        self.updates = new_rows.take(match.filter(replaced))  # in old-row order
        # Per old row: the updates taken by the rows before it.
        self.used_before = np.concatenate([[0], np.cumsum(self.replaced, dtype=np.int64)])

    def batch(self, batch: pa.RecordBatch, offset: int) -> tuple[pa.RecordBatch, np.ndarray]:
        """The merged rows of ``batch`` (the old rows from ``offset`` on) and which are fresh: a batch without
        updates or deletes is passed on as it is, one with some gets them by mask (no gather)."""
        n = batch.num_rows
        is_new, gone = self.replaced[offset:offset + n], self.deleted[offset:offset + n]
        count, used = int(is_new.sum()), int(self.used_before[offset])
        if count:
            mask = pa.array(is_new)
            batch = pa.RecordBatch.from_arrays(
                [_replaced(column, is_new, mask, self.updates.column(c).slice(used, count).combine_chunks())
                 for c, column in enumerate(batch.columns)], schema=batch.schema)
        if gone.any():
            keep = ~gone
            batch, is_new = batch.filter(pa.array(keep)), is_new[keep]
        return batch, is_new

    def columns(self, names: list[str]) -> Masks:
        """These masks for rows of the ``names`` columns only (the updates' other columns left out)."""
        out = object.__new__(Masks)
        out.replaced, out.deleted, out.used_before = self.replaced, self.deleted, self.used_before
        out.updates = self.updates.select(names)
        return out

    def table(self, old: pa.Table, offset: int, executor: Executor) -> tuple[list[pa.RecordBatch], list[np.ndarray]]:
        """:meth:`batch` over the record batches of ``old`` (the old rows from ``offset`` on), side by side in
        ``executor``."""
        old_batches = old.to_batches()
        offsets = offset + np.cumsum([0] + [b.num_rows for b in old_batches])
        merged = list(executor.map(lambda i: self.batch(old_batches[i], int(offsets[i])), range(len(old_batches))))
        return [b for b, _ in merged], [f for _, f in merged]


def merged_rows(old: pa.Table, new_rows: pa.Table, match: pa.Array, replaced: pa.Array, deleted: pa.Array,
                inserts: pa.Array, executor: Executor) -> tuple[pa.Table, pa.Array]:
    """The new file's rows and which of them are fresh (written by this commit): the old rows in place, a replaced
    one by its update (``match``: its row in ``new_rows``), deleted ones dropped, then the ``inserts`` (rows of
    ``new_rows``). Built record batch by record batch of the old file: a batch without updates or deletes is
    passed on as it is, one with some gets them by mask; no gather over the whole file (that take was a third
    of a merge's CPU). The batches are built in ``executor``, side by side."""
    appended = executor.submit(new_rows.take, inserts)
    masks = Masks(new_rows, match, replaced, deleted)
    batches, fresh = masks.table(old, 0, executor)
    batches += appended.result().to_batches()
    fresh.append(np.ones(len(inserts), dtype=bool))
    return pa.Table.from_batches(batches, schema=old.schema), pa.array(np.concatenate(fresh))


# A merged row group of the old file is encoded as it comes when it holds this share of the block size.
_MIN_FILL = 0.8


def _streams(ctx: MergeContext, existing: ExistingFile | None) -> bool:
    """Whether the merge streams the old file (:func:`_write_streamed`) rather than merging it whole. Whole: on
    tables with CDC (the change records need the old rows whole), with virtual keys (the keys are computed
    from the whole rows) and for a new file group (no old file)."""
    return ctx.stream and existing is not None and ctx.cdc is None and ctx.options.virtual_keys is None


@dataclass(frozen=True)
class RowStamp:
    """How a merge stamps the meta columns of the rows it writes, as :func:`finalize` stamps them: the new file's
    name (``file_name``) on every row, and on the fresh rows (updated and inserted by this write) sequence numbers
    of ``instant_time``. ``fresh=False``: no row is fresh (a compaction: every row keeps the commit time and
    sequence number it has, a merged row the log record's)."""

    instant_time: str
    file_name: str
    task_partition: int
    fresh: bool = True

    def stamped(self, rows: pa.Table, fresh: np.ndarray, first: int | None) -> pa.Table:
        """``rows`` stamped, the fresh ones numbered from ``first`` (row i of them gets ``first + i``; None: the
        task's next numbers, claimed)."""
        return finalize(rows, pa.array(fresh if self.fresh else np.zeros(rows.num_rows, dtype=bool)),
                        instant_time=self.instant_time, file_name=self.file_name,
                        task_partition=self.task_partition, first=first)


def _stamped_group(stamp: RowStamp, masks: Masks, group: pa.Table, offset: int, schema: pa.Schema,
                   executor: Executor, first: int) -> pa.Table | None:
    """Row group ``group`` (at row ``offset``) of the old file merged as :func:`merged_rows` merges it and its
    meta columns stamped as :func:`finalize` stamps the whole file's, its fresh rows numbered from ``first``;
    None when every row of it was deleted."""
    batches, fresh = masks.table(align(group, schema), offset, executor)
    rows = pa.Table.from_batches(batches, schema=schema)
    if not rows.num_rows:
        return None
    return stamp.stamped(rows, np.concatenate(fresh), first)


# Columns a merged row group's updated rows always change: their commit time and sequence number (the file name
# changes on every row; SplicedBaseFile stamps it on copied groups itself).
_FRESH_META = (COMMIT_TIME, COMMIT_SEQNO)
# A touched row group has its unchanged columns copied when at most this share of its columns must be encoded.
_MAX_ENCODED_SHARE = 0.5


def _same_values(old: pa.ChunkedArray, new: pa.ChunkedArray) -> bool:
    """Whether ``old`` and ``new`` hold the same values, nulls at the same rows; floating point values compared
    by their bits (-0.0 is not 0.0 to a copied chunk); False for nested values holding floating point ones."""
    if old.type != new.type or _has_floats(old.type) and pa.types.is_nested(old.type):
        return False
    old, new = old.combine_chunks(), new.combine_chunks()
    if pa.types.is_floating(old.type):
        bits = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}[old.type.bit_width]
        old, new = old.view(bits), new.view(bits)
    return old.equals(new)  # values of the valid rows, and the same rows null


def _has_floats(t: pa.DataType) -> bool:
    if pa.types.is_floating(t):
        return True
    return any(_has_floats(t.field(i).type) for i in range(t.num_fields)) if pa.types.is_nested(t) else False


def _changed_columns(masks: Masks, group: pa.Table, offset: int, schema: pa.Schema) -> list[str] | None:
    """The columns a merge must encode anew in row group ``group`` of the old file (its rows from ``offset``,
    aligned to ``schema``) when it copies the others' chunks: the fresh rows' meta columns and the data columns
    some update gives another value. None when the group's chunks cannot be copied: rows deleted (the group
    shrinks), a changed nested column (a replaced chunk is one top-level leaf), or most columns changed (the
    group is encoded whole)."""
    n = group.num_rows
    if not n or masks.deleted[offset:offset + n].any():
        return None
    updated = np.flatnonzero(masks.replaced[offset:offset + n])
    used = int(masks.used_before[offset])
    positions = pa.array(updated)
    changed = set(_FRESH_META)
    for name in schema.names:
        if name in META_COLUMNS:
            continue
        if not _same_values(group.column(name).take(positions),
                            masks.updates.column(name).slice(used, len(updated))):
            if pa.types.is_nested(schema.field(name).type):
                return None
            changed.add(name)
    if len(changed) + 1 > _MAX_ENCODED_SHARE * len(schema):  # + the file name
        return None
    return [f for f in schema.names if f in changed or f == FILE_NAME]


def _stamped_columns(stamp: RowStamp, masks: Masks, group: pa.Table, columns: list[str], offset: int,
                     executor: Executor, first: int) -> pa.Table:
    """:func:`_stamped_group` of the ``columns`` of a row group without deleted rows. The file name column is not
    merged by mask (the stamp names every row), nor is the sequence number when the stamp numbers the fresh rows."""
    kept = (COMMIT_SEQNO, FILE_NAME) if stamp.fresh else (FILE_NAME,)
    merged = [c for c in columns if c not in kept]
    batches, fresh = masks.columns(merged).table(group.select(merged), offset, executor)
    rows = pa.Table.from_batches(batches, schema=pa.schema([group.schema.field(c) for c in merged]))
    for c in kept:
        rows = rows.append_column(group.schema.field(c), group.column(c))
    return stamp.stamped(rows, np.concatenate(fresh), first)


def _stamped_inserts(stamp: RowStamp, inserts: pa.Table, first: int) -> pa.Table:
    """The inserted rows, the file's last, stamped (all fresh) and numbered from ``first``."""
    return stamp.stamped(inserts, np.ones(inserts.num_rows, dtype=bool), first)


def _write_streamed(ctx: MergeContext, storage: Storage, rel_path: str, name: str, task_partition: int,
                    split: SplitRead, schema: pa.Schema, new_rows: pa.Table, masks: Masks, inserted: pa.Array,
                    bloom: Future, executor: Executor) -> int:
    """Write the merged file as a pipeline over the old file's row groups: each group's merged rows (as
    :func:`merged_rows` builds them, meta columns stamped as :func:`finalize` stamps the whole file's) go to
    an encoder thread that writes them while the next group is read and merged; the inserts follow. The rows,
    their order and values, and the footer are those of the whole-file merge; row groups hold ``block_size``
    bytes of rows as there, but may start at other rows. Only a few row groups are in memory at a time (the
    whole-file merge held the old and new file in Arrow, ~2 GB at SF 1). Returns the file size; a failure
    leaves no file."""
    total = int(len(masks.replaced) - masks.deleted.sum()) + len(inserted)
    first = claim_sequence_numbers(total)  # row i of the file, when fresh, is numbered first + i
    appended = executor.submit(new_rows.take, inserted)
    # With deletes the old filter cannot be continued (_continued_bloom): the writer hashes the keys as it
    # writes them, on the encoder thread.
    hashed = bool(masks.deleted.any())
    stamp = RowStamp(ctx.instant_time, name, task_partition)
    writer = BaseFileWriter(storage, rel_path, ctx.options, hash_keys=hashed, min_fill=_MIN_FILL)
    encoder = EncodeThread(writer.write, depth=1, threaded=ctx.threads > 1)
    written, keys = 0, []
    try:
        for offset, group in split.row_groups():
            rows = _stamped_group(stamp, masks, group, offset, schema, executor, first + written)
            if rows is None:  # every row of the group deleted
                continue
            keys.append(rows.column(RECORD_KEY))
            encoder.put(rows)
            written += rows.num_rows
        inserts = appended.result()
        if inserts.num_rows:
            rows = _stamped_inserts(stamp, inserts, first + written)
            keys.append(rows.column(RECORD_KEY))
            encoder.put(rows)
        encoder.finish()
        footer_bloom = None
        if not hashed:
            footer_bloom = bloom.result()
            if footer_bloom is None:  # the old footer had no filter to continue: one over the written keys
                footer_bloom = new_bloom(ctx.options)
                footer_bloom.add_all(pa.chunked_array([c for k in keys for c in k.chunks], pa.string()))
        _log.debug("streamed merge of %s: encoder waited %.2f s for rows, merge waited %.2f s for the encoder",
                   rel_path, encoder.idle_s, encoder.blocked_s)
        return writer.close(footer_bloom)
    except BaseException:
        encoder.abort()
        writer.discard()
        raise


def untouched_groups(target: SplicedBaseFile, masks: Masks, inserts: int, block_size: int) -> set[int]:
    """The old file's row groups to copy: those without an updated or deleted row, but for a last group
    smaller than a row group is meant to be when rows are inserted: that one is encoded again together with
    the inserts (a small file taking inserts commit after commit would otherwise grow a small group each)."""
    group_rows = target.group_rows
    touched = masks.replaced | masks.deleted
    bounds = np.cumsum([0] + group_rows)
    untouched = {i for i in range(len(group_rows)) if not touched[bounds[i]:bounds[i + 1]].any()}
    if _last_group_joins_inserts(target, inserts, block_size):
        untouched.discard(len(group_rows) - 1)
    return untouched


def _last_group_joins_inserts(target: SplicedBaseFile, inserts: int, block_size: int) -> bool:
    """Whether the old file's last row group is encoded again together with ``inserts`` rows: it is smaller than
    a row group is meant to be (encoded bytes under ``_MIN_FILL`` of ``block_size``) and rows are inserted."""
    return bool(inserts) and bool(target.group_bytes) and target.group_bytes[-1] < _MIN_FILL * block_size


def _spliced_footer(options: BaseFileOptions, old_keys: pa.ChunkedArray, keep: pa.Array | None,
                    insert_keys: pa.ChunkedArray | pa.Array, bloom: Future,
                    old_range: tuple[str, str] | None = None) -> dict[bytes, bytes]:
    """Hudi's footer entries of a merged file: its keys are the old ones kept (``keep``: None for all; updates
    keep their key and place), then the inserted ones. The filter is ``bloom``'s (the old file's continued)
    or, when that gives None, one built over the keys. ``old_range``: the old file's footer key range, a hint
    (:func:`key_range`)."""
    kept = old_keys if keep is None else old_keys.filter(keep)
    inserted = insert_keys.chunks if isinstance(insert_keys, pa.ChunkedArray) else [insert_keys]
    keys = pa.chunked_array(list(kept.chunks) + list(inserted), pa.string())
    footer_bloom = bloom.result()
    if footer_bloom is None:
        footer_bloom = new_bloom(options)
        footer_bloom.add_all(keys)
    return footer_entries(footer_bloom, *(key_range(keys, old_range, insert_keys) or (None, None)))


def key_range(keys: pa.ChunkedArray, old_range: tuple[str, str] | None,
              inserted: pa.ChunkedArray | pa.Array) -> tuple[str, str] | None:
    """The smallest and largest of ``keys`` (those of a merged file: the old file's kept, then the ``inserted``),
    as ``pc.min_max`` finds them (byte order); None for no keys. The old file's range (its footer's) widened by
    the inserted keys is tried first, checked against every key by comparisons (no key outside it, both ends
    present), which cost half of min_max's string aggregation; a range the check refutes (rows deleted, a
    footer of another writer) falls back to min_max."""
    if not len(keys):
        return None
    if old_range is not None:
        low, high = old_range
        if len(inserted):
            bounds = pc.min_max(inserted)
            low, high = min(low, bounds["min"].as_py()), max(high, bounds["max"].as_py())
        low_s, high_s = pa.scalar(low, pa.string()), pa.scalar(high, pa.string())
        if not pc.any(pc.less(keys, low_s)).as_py() and not pc.any(pc.greater(keys, high_s)).as_py() \
                and pc.any(pc.equal(keys, low_s)).as_py() and pc.any(pc.equal(keys, high_s)).as_py():
            return low, high
    bounds = pc.min_max(keys)
    return bounds["min"].as_py(), bounds["max"].as_py()


def _footer_range(footer: Mapping[bytes, bytes]) -> tuple[str, str] | None:
    """The key range a file's footer states, if it states one."""
    try:
        low, high = footer_key_range(footer)
    except UnicodeDecodeError:
        return None
    return (low, high) if low is not None and high is not None else None


def write_spliced(stamp: RowStamp, options: BaseFileOptions, threads: int, target: SplicedBaseFile,
                  split: SplitRead, schema: pa.Schema, new_rows: pa.Table, masks: Masks, inserted: pa.Array,
                  bloom: Future, executor: Executor, untouched: set[int]) -> int:
    """The merged file written as :func:`_write_streamed` writes it, the ``untouched`` row groups of the old file
    (``split``, opened with ``whole=False``) copied into ``target`` rather than read, merged and encoded: their
    rows keep their values and meta fields but for the file name (no fresh row, so no sequence number changes).
    A touched group without deletes whose updates change few columns is copied but for those columns
    (:func:`_changed_columns`). The other touched groups are merged (``masks``: the old rows' fate, ``new_rows``:
    their updates and, at ``inserted``, the rows appended) and encoded on an encoder thread (``threads`` > 1) as
    there, the inserts follow; the rows, their order and the footer (``bloom``: a future of the filter to
    continue, or None) are those of the whole-file merge, each group of the old file one group of the new. The
    copy-on-write merge and compaction (:mod:`hoodpy.services.compaction.slice_compact`) write through this.
    Returns the file size; a failure leaves no file."""
    total = int(len(masks.replaced) - masks.deleted.sum()) + len(inserted)
    first = claim_sequence_numbers(total)  # row i of the file, when fresh, is numbered first + i
    appended = executor.submit(new_rows.take, inserted)
    keep = None if not masks.deleted.any() else pa.array(~masks.deleted)
    footer = executor.submit(_spliced_footer, options, split.head.column(RECORD_KEY), keep,
                             new_rows.column(RECORD_KEY).take(inserted), bloom,
                             _footer_range(split.head.schema.metadata or {}))
    encoder = EncodeThread(target.put, depth=1, threaded=threads > 1)
    written, last = 0, None
    last_copyable = not _last_group_joins_inserts(target, len(inserted), options.block_size)
    try:
        group_rows = target.group_rows
        for index, (offset, group) in enumerate(split.row_groups(skip=untouched)):
            if group is None:  # copied as it is
                encoder.put(index)
                written += group_rows[index]
                continue
            is_last = index == len(group_rows) - 1
            if not is_last or last_copyable:
                group = align(group, schema)
                changed = _changed_columns(masks, group, offset, schema)
                if changed is not None:
                    # Updates change a few columns of every group (a uniform batch): those are merged and
                    # encoded, the other chunks copied (decoded above only to compare the updated rows).
                    rows = _stamped_columns(stamp, masks, group, changed, offset, executor, first + written)
                    encoder.put((index, rows, group))
                    written += rows.num_rows
                    continue
            rows = _stamped_group(stamp, masks, group, offset, schema, executor, first + written)
            if rows is None:  # every row of the group deleted
                continue
            if is_last and len(inserted):  # the last group: encoded with the inserts
                last = rows
            else:
                encoder.put(rows)
            written += rows.num_rows
        inserts = appended.result()
        if inserts.num_rows:
            rows = _stamped_inserts(stamp, inserts, first + written)
            encoder.put(rows if last is None else pa.concat_tables([last, rows]))
        elif last is not None:
            encoder.put(last)
        encoder.finish()
        _log.debug("spliced merge into %s: %d row groups copied; encoder waited %.2f s, merge waited %.2f s",
                   stamp.file_name, target.copied_groups, encoder.idle_s, encoder.blocked_s)
        return target.close(footer.result())
    except BaseException:
        encoder.abort()
        target.discard()
        raise


def _close_unused(opening: Future | None) -> None:
    """Close the old file a spliced writer opened (``opening``: its future) that writes nothing; one that failed
    to open has nothing to close (the merge fails with its own error, or writes the file whole)."""
    spliced = opening.result() if opening is not None and opening.exception() is None else None
    if spliced is not None:
        spliced.discard()


def merge_file_group(ctx: MergeContext, incoming: pa.Table) -> pa.Table:
    """Merge one file group's incoming records; returns a one-row write-stats table."""
    with task_executor(ctx.threads) as executor:
        return _merge(ctx, incoming, executor)


def _merge(ctx: MergeContext, incoming: pa.Table, executor: Executor) -> pa.Table:
    started = time.monotonic()
    partition_path = incoming.column(PARTITION_PATH)[0].as_py()
    file_id = incoming.column(TARGET_FILE_ID)[0].as_py()
    storage = Storage(ctx.base_uri)
    existing = ctx.existing.get((partition_path, file_id))
    if ctx.combine_ordering is not None:
        incoming = combined_in_task(incoming, ctx.combine_ordering)
        if existing is None and not pc.any(pc.equal(incoming.column(OP), OP_UPSERT)).as_py():
            return write_stats([])  # only deletes for a file group that does not exist: nothing to write
    meta_schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS])
    full_schema = pa.schema(list(meta_schema) + list(ctx.data_schema))

    is_delete = pc.equal(incoming.column(OP), OP_DELETE)
    upserts = incoming.filter(pc.invert(is_delete)) if pc.any(is_delete).as_py() else incoming  # no copy
    deletes = incoming.filter(is_delete)
    delete_keys = deletes.column(RECORD_KEY).combine_chunks()
    new_keys = upserts.column(RECORD_KEY).combine_chunks()
    new_rows = add_meta_columns(align(upserts, ctx.data_schema), new_keys, partition_path, ctx.instant_time)

    task_partition, stage_id, attempt_id = task_ids()
    token = write_token(task_partition, stage_id, attempt_id)
    name = base_file_name(file_id, token, ctx.instant_time)
    rel_path = join_partition(partition_path, name)
    streamed = _streams(ctx, existing)
    # The spliced writer (the old footer parsed, ~0.1 s of Python) is set up while the keys are matched.
    opening = executor.submit(SplicedBaseFile.of, storage, rel_path, ctx.options, full_schema, existing.path,
                              executor if ctx.threads > 1 else None) if streamed and ctx.splice else None
    try:
        fields = ordering_fields(ctx.ordering_field) if ctx.match_keys else ()
        footer: dict[bytes, bytes] = {}
        split = None
        if existing is not None and ctx.options.virtual_keys is None:
            # The keys and ordering values first: they are matched while the other columns are read (whole, or
            # streamed: row group by row group after). The stored file names are not read: finalize stamps the new
            # one on every row.
            split = SplitRead(storage.full_path(existing.path), storage.fs, (RECORD_KEY, *fields), executor,
                              skip=(FILE_NAME,), whole=not streamed)
            footer = split.head.schema.metadata or {}  # the file's key-value metadata: Hudi's footer entries
            keyed = align(split.head, pa.schema([full_schema.field(f) for f in (RECORD_KEY, *fields)]))
        elif existing is not None:  # virtual keys: the file holds none; compute them, as Hudi's readers do
            stored = pq.read_table(storage.full_path(existing.path), filesystem=storage.fs)
            footer = stored.schema.metadata or {}
            old = align(stored, full_schema)
            keyed = old = old.set_column(old.schema.get_field_index(RECORD_KEY), RECORD_KEY,
                                         ctx.options.virtual_keys.record_keys_of(old))
        else:
            keyed = old = full_schema.empty_table()
        n_old = keyed.num_rows
        # Chunked as read: the kernels below take chunks; one array would copy every key of the file (~100 MB at SF 1).
        old_keys = keyed.column(RECORD_KEY)

        if ctx.match_keys and n_old:
            # Per old row: its incoming update, or null.
            match = matched_rows(old_keys, new_keys, _footer_range(footer))
            replaced = pc.is_valid(match)
            old_ord = [keyed.column(f).combine_chunks() for f in fields]
            if fields:
                # Event-time ordering: a stored record with a larger ordering value survives the update.
                new_ord = [new_rows.column(f).combine_chunks().take(match) for f in fields]
                stale = pc.fill_null(ordering_greater(old_ord, new_ord), False)
                replaced = pc.and_(replaced, pc.invert(stale))
            replaced = pc.fill_null(replaced, False)
            deleted = pc.is_in(old_keys, value_set=delete_keys) if len(delete_keys) else \
                pa.repeat(pa.scalar(False), n_old)
            if fields and len(delete_keys):
                # ... and survives a delete with a smaller ordering value (a late `_hoodie_is_deleted` event).
                # Deletes without an ordering value (the delete operation) always apply.
                del_match = pc.index_in(old_keys, value_set=delete_keys)
                aligned = align(deletes, ctx.data_schema)
                del_ord = [aligned.column(f).combine_chunks().take(del_match) for f in fields]
                stale_delete = pc.fill_null(ordering_greater(old_ord, del_ord), False)
                deleted = pc.and_(deleted, pc.invert(stale_delete))
            deleted = pc.and_(deleted, pc.invert(replaced))
            # A new key is in the file iff some old row matched it: look it up among the matched old keys (at most
            # the batch's size) instead of hashing every key of the file once more (~8% of a merge's CPU).
            matched_new = pc.is_in(new_keys, value_set=old_keys.filter(pc.is_valid(match)).combine_chunks())
        else:
            match = pa.nulls(n_old, pa.int32())
            replaced = pa.repeat(pa.scalar(False), n_old)
            deleted = pa.repeat(pa.scalar(False), n_old)
            matched_new = pa.repeat(pa.scalar(False), new_rows.num_rows)

        inserted = pc.indices_nonzero(pc.invert(matched_new))  # rows of new_rows appended to the file
        bloom = executor.submit(_continued_bloom, ctx, footer, new_keys, inserted, n_old, deleted)
        num_deletes = pc.sum(deleted).as_py() or 0
        num_writes = n_old - num_deletes + len(inserted)
    except BaseException:
        _close_unused(opening)
        raise
    if streamed and num_writes:
        new_rows = new_rows.cast(full_schema)
        masks = Masks(new_rows, match, replaced, deleted)
        spliced = opening.result() if opening is not None else None
        untouched = set() if spliced is None else \
            untouched_groups(spliced, masks, len(inserted), ctx.options.block_size)
        if spliced is not None:  # untouched groups copied; touched ones copied but for their changed columns
            size = write_spliced(RowStamp(ctx.instant_time, name, task_partition), ctx.options, ctx.threads,
                                 spliced, split, full_schema, new_rows, masks, inserted, bloom, executor, untouched)
        else:  # a file whose groups cannot be copied
            size = _write_streamed(ctx, storage, rel_path, name, task_partition, split, full_schema, new_rows, masks,
                                   inserted, bloom, executor)
    else:
        _close_unused(opening)  # every row deleted: no file
        if split is not None:
            old = align(split.whole(), full_schema)
        rows, fresh = merged_rows(old, new_rows.cast(full_schema), match, replaced, deleted, inserted, executor)
        rows = finalize(rows, fresh, instant_time=ctx.instant_time, file_name=name,
                        task_partition=task_partition)
        size = write_base_file(storage, rel_path, rows, ctx.options, bloom.result())
    cdc_stats = None
    if ctx.cdc is not None and existing is not None:  # a new file group's rows are inferred as inserts
        changes = MergeChanges(old, old_keys, replaced, deleted, match, new_rows, new_keys, inserted)
        records = change_records(ctx.cdc, changes, ctx.data_schema.names, ctx.instant_time)
        cdc_stats = write_cdc_log(storage, ctx.cdc, partition_path, file_id, token, ctx.instant_time, records)
    elapsed_ms = int((time.monotonic() - started) * 1000)
    num_updates = pc.sum(replaced).as_py() or 0
    return write_stats([write_stats_row(
        partition_path, file_id, rel_path, prev_commit=existing.instant_time if existing else None,
        num_writes=num_writes, num_deletes=num_deletes, num_update_writes=num_updates,
        num_inserts=len(inserted), file_size=size, elapsed_ms=elapsed_ms, cdc_stats=cdc_stats)])

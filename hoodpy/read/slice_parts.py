"""One file slice merged in several parts (Spark tasks), each part holding a share of its keys, so that a big
slice keeps every core busy.

The keys the logs name are dealt out in turn: part ``i`` of ``n`` owns the ``k``-th distinct log key (in
log order) when ``k % n == i``, with every base row of such a key; the base rows of keys no log names are
split by position, part ``i`` taking rows ``[i * rows // n, (i + 1) * rows // n)``. (Owning log keys by
base position instead would give one part all the work when updates are concentrated in part of the file.)
Every part reads every log block's keys (Avro blocks decode only the fields up to the key), so all parts
agree on the owners without talking; each then decodes only the log records of its keys and merges them with
its base rows (:mod:`hoodpy.read.slice_merge`). The parts' rows together are the slice's merged rows, each
once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import align
from hoodpy.config import ordering_fields
from hoodpy.file_group.log_file import DeletedRecord, data_rows, deleted_records, record_keys
from hoodpy.keygen import KeyGenerator
from hoodpy.keygen.stored import with_record_keys
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read.slice_merge import Decoded, decode_blocks, merge_decoded
from hoodpy.timeline import log_format
from hoodpy.timeline.log_format import LogBlock


def merge_slice_part(base: pa.Table | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                     ordering_field: str | None, part: int = 0, parts: int = 1, *, named_only: bool = False,
                     virtual: KeyGenerator | None = None, keys_of: list[pa.Array] | None = None) -> pa.Table:
    """Part ``part`` of ``parts`` of the merged slice (:func:`hoodpy.read.slice_merge.merge_slice`'s
    arguments): the rows of the keys it owns. ``named_only``: only the rows of keys the logs name (the base
    rows of other keys are read elsewhere, see :func:`named_keys`). ``virtual``: the key generator of a table
    with virtual keys (``base`` already holds the computed keys; the log records' are computed).
    ``keys_of``: :func:`block_keys` of ``blocks`` where the caller has them (stored keys only)."""
    data_blocks = sum(b.block_type != log_format.DELETE_BLOCK for b in blocks)
    late = virtual is None and (parts > 1 or keys_of is not None or data_blocks > 1)
    if parts == 1 and not late:
        return merge_decoded(base, decode_blocks(blocks, schema, virtual), schema, ordering_field,
                             untouched=not named_only)[0]
    deletes = {i: deleted_records(b) for i, b in enumerate(blocks) if b.block_type == log_format.DELETE_BLOCK}
    if keys_of is None or virtual is not None:
        keys_of = [pa.array([d.record_key for d in deletes[i]], pa.string()) if i in deletes
                   else record_keys(b) if virtual is None else virtual.record_keys_of(data_rows(b, schema))
                   for i, b in enumerate(blocks)]
    # The distinct log keys numbered in order of first appearance; part i owns those numbered i mod parts.
    encoded = pc.dictionary_encode(pa.chunked_array(keys_of, pa.string()).combine_chunks())
    number = encoded.indices.to_numpy(zero_copy_only=False)  # log keys are never null
    bounds = np.cumsum([0, *map(len, keys_of)])
    keep = [np.flatnonzero(number[lo:hi] % parts == part) for lo, hi in zip(bounds[:-1], bounds[1:])]
    if base is not None:
        rows = base.num_rows
        position = np.arange(rows)
        in_share = (position >= part * rows // parts) & (position < (part + 1) * rows // parts)
        named = pc.index_in(base.column(RECORD_KEY), value_set=encoded.dictionary)
        mine = np.where(np.asarray(named.is_valid(), dtype=bool),
                        named.fill_null(0).to_numpy(zero_copy_only=False) % parts == part,
                        False if named_only else in_share)
        base = base.filter(pa.array(mine))
    if late:
        return _merge_late(base, blocks, schema, ordering_field, keep, deletes, keys_of, named_only)
    return merge_decoded(base, _decode(blocks, schema, keep, deletes, virtual), schema, ordering_field)[0]


_BLOCK, _RECORD = "_hoodpy_block", "_hoodpy_record"  # a version's block (-1: the base) and row in it


def _merge_late(base: pa.Table | None, blocks: Sequence[LogBlock], schema: pa.Schema, ordering_field: str | None,
                keep: list[np.ndarray], deletes: dict[int, list[DeletedRecord]], keys_of: list[pa.Array],
                named_only: bool) -> pa.Table:
    """The merge of the kept records (``keep``, per block) with ``base``, on the columns it compares only (the
    key, and the ordering fields for event time; the keys are already decoded), then the winning versions
    decoded whole: a record a later version of its key supersedes (several logs, typically) is never
    decoded past its ordering fields. The same winners as :func:`merge_decoded` of whole records."""
    compared = [RECORD_KEY, *(f for f in ordering_fields(ordering_field) if f in schema.names and f != RECORD_KEY)]
    core = pa.schema([schema.field(n) for n in compared])
    narrow = core.append(pa.field(_BLOCK, pa.int32())).append(pa.field(_RECORD, pa.int64()))

    def tagged(rows: pa.Table, block: int, records: np.ndarray) -> pa.Table:
        return rows.append_column(_BLOCK, pa.array(np.full(len(records), block, np.int32))) \
            .append_column(_RECORD, pa.array(records, pa.int64()))

    logs: Decoded = []
    for i, block in enumerate(blocks):
        if i in deletes:
            logs.append([deletes[i][j] for j in keep[i].tolist()])
        elif len(compared) == 1:  # commit time, or no ordering field in the schema: the keys are all compared
            logs.append(tagged(align(pa.table({RECORD_KEY: keys_of[i].take(pa.array(keep[i], pa.int64()))}), core),
                               i, keep[i]))
        else:
            logs.append(tagged(align(data_rows(block, core, keep[i]), core), i, keep[i]))
    narrow_base = None if base is None else \
        tagged(align(base.select([n for n in compared if n in base.column_names]), core), -1,
               np.arange(base.num_rows, dtype=np.int64))
    won = merge_decoded(narrow_base, logs, narrow, ordering_field, untouched=not named_only)[0]
    block_of = won.column(_BLOCK).to_numpy()
    record_of = won.column(_RECORD).to_numpy()
    out = []
    if base is not None and (block_of == -1).any():
        out.append(align(base, schema).take(pa.array(record_of[block_of == -1], pa.int64())))
    for i, block in enumerate(blocks):
        records = np.sort(record_of[block_of == i])
        if len(records):
            out.append(align(data_rows(block, schema, records), schema))
    return pa.concat_tables(out) if out else schema.empty_table()


def block_keys(blocks: Sequence[LogBlock]) -> list[pa.Array]:
    """Each block's record keys (a delete block's: the keys it deletes), in block order (stored keys)."""
    return [pa.array([d.record_key for d in deleted_records(b)], pa.string())
            if b.block_type == log_format.DELETE_BLOCK else record_keys(b) for b in blocks]


def named_keys(blocks: Sequence[LogBlock], keys_of: list[pa.Array] | None = None) -> pa.Array:
    """The distinct record keys the blocks name (records and deletes); ``keys_of``: their :func:`block_keys`
    where the caller has them."""
    keys = block_keys(blocks) if keys_of is None else keys_of
    return pc.unique(pa.chunked_array(keys, pa.string()).combine_chunks())


def _decode(blocks: Sequence[LogBlock], schema: pa.Schema, keep: list[np.ndarray],
            deletes: dict[int, list[DeletedRecord]], virtual: KeyGenerator | None) -> Decoded:
    """The kept records of each block (``deletes``: the delete blocks' records, already decoded)."""
    return [[deletes[i][j] for j in keep[i].tolist()] if i in deletes
            else with_record_keys(align(data_rows(block, schema, keep[i]), schema), virtual)
            for i, block in enumerate(blocks)]

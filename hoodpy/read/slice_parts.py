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
    if parts == 1:
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
    return merge_decoded(base, _decode(blocks, schema, keep, deletes, virtual), schema, ordering_field)[0]


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

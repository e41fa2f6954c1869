"""A merge-on-read file slice's rows: its base file's rows merged with its log records by record key.

The merge mode is the writes' (``hoodie.write.record.merge.mode``, by default event time when the table has
an ordering (precombine) field):

* event-time ordering: among the versions of a key (base row first, then log records in log
  order) the one with the largest ordering value wins; a tie goes to the later write. Several ordering
  fields (``a,b``) compare as a tuple, the first field first;
* commit-time ordering: the latest write wins;
* a delete removes the key. A delete that carries no ordering value (null or 0, what Spark SQL DELETE
  writes) always wins over the writes before it, and a write after it brings the key back; one that carries
  a value competes by ordering like a record. With several ordering fields a delete competes only when it
  carries a tuple (Hudi 1.x's ArrayWrapper, table versions 8 and 9): table version 6's orderingVal union has
  no branch for one, so there every delete counts as one without a value.

The fold over each key's versions is column-wise (numpy over Arrow columns): only a merge whose delete
ordering values do not fit the ordering column's type (or an ordering type Arrow cannot rank) folds row by
row. Pure pyarrow and numpy, so it runs in Spark tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import align, ordering_rank
from hoodpy.config import ordering_fields
from hoodpy.file_group.log_file import DeletedRecord, data_rows, deleted_records
from hoodpy.keygen import KeyGenerator
from hoodpy.keygen.stored import with_record_keys
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.timeline import log_format
from hoodpy.timeline.log_format import LogBlock


class _Version(NamedTuple):
    row: int  # in the concatenated row tables; -1 for a delete
    ordering: Any
    plain_delete: bool  # a delete without an ordering value


def _wins(new: _Version, old: _Version, event_time: bool) -> bool:
    if not event_time or new.plain_delete or old.plain_delete:
        return True
    if new.ordering is None or old.ordering is None:
        return True  # nothing to compare: the later write wins
    try:
        return not new.ordering < old.ordering  # ties go to the later write
    except TypeError:  # ordering values of unrelated types: the later write wins
        return True


class MergeStats(NamedTuple):
    """What merging a slice did, as compaction's write stats report it."""

    log_records: int  # records and deletes read from the log blocks
    log_keys: int  # distinct keys the logs name (Hudi's merged records in log)
    updated: int  # base keys written with a log version merged in
    inserted: int  # keys written that the base file did not hold
    deleted: int  # base keys a delete removed


def merge_slice(base: pa.Table | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                ordering_field: str | None) -> pa.Table:
    """The slice's rows with ``schema``: the base rows (``base``, None for a slice of logs only) merged with
    the records of ``blocks`` (the slice's effective data and delete blocks, in log order).

    Base rows whose key no log block names pass through untouched, without per-row work."""
    return merge_slice_with_stats(base, blocks, schema, ordering_field)[0]


def merge_slice_with_stats(base: pa.Table | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                           ordering_field: str | None, virtual: KeyGenerator | None = None,
                           ) -> tuple[pa.Table, MergeStats]:
    """:func:`merge_slice`, and what the merge did. Rows come out as the base rows no log names (in file
    order), then the merged keys (in the order of their first version). ``virtual``: the key generator of a
    table with virtual keys (its base and log rows keep no keys: they are computed, see :func:`decode_blocks`)."""
    base = with_record_keys(base, virtual) if base is not None else None
    return merge_decoded(base, decode_blocks(blocks, schema, virtual), schema, ordering_field)


Decoded = list[pa.Table | list[DeletedRecord]]  # a slice's log records: a table per data block, deletes per delete block


def decode_blocks(blocks: Sequence[LogBlock], schema: pa.Schema, virtual: KeyGenerator | None = None) -> Decoded:
    """The records of data and delete blocks, in log order (data rows with ``schema``). With ``virtual`` (the
    key generator of a table with virtual keys) the data rows' keys are computed into ``_hoodie_record_key``,
    which ``schema`` must hold; delete blocks always name their keys."""
    return [deleted_records(b) if b.block_type == log_format.DELETE_BLOCK
            else with_record_keys(align(data_rows(b, schema), schema), virtual) for b in blocks]


def merge_decoded(base: pa.Table | None, logs: Decoded, schema: pa.Schema, ordering_field: str | None,
                  untouched: bool = True) -> tuple[pa.Table, MergeStats]:
    """:func:`merge_slice_with_stats` over log records already decoded; ``untouched`` False leaves out the
    base rows no log names."""
    key_chunks = [chunk for e in logs for chunk in ([pa.array([d.record_key for d in e], pa.string())]
                                                    if isinstance(e, list) else e.column(RECORD_KEY).chunks)]
    log_records = sum(len(e) if isinstance(e, list) else e.num_rows for e in logs)
    log_keys = pc.unique(pa.chunked_array(key_chunks, pa.string()).combine_chunks())
    passed: list[pa.Table] = []
    entries: list[pa.Table | list[DeletedRecord]] = list(logs)
    base_hits = 0
    if base is not None:  # the base file: rows no log names pass through
        base = align(base, schema)
        hit = pc.is_in(base.column(RECORD_KEY), value_set=log_keys)
        if untouched:
            passed.append(base.filter(pc.invert(hit)))
        touched = base.filter(hit)
        entries.insert(0, touched)
        base_hits = touched.num_rows
    if not base_hits and len(log_keys) == log_records and not any(isinstance(e, list) for e in logs):
        # Every key has one version, a record's (no base row, no delete, no key twice): it wins as it is, in
        # log order, with nothing to fold or take (a commit-time part of one log, typically).
        merged = pa.concat_tables(logs) if logs else schema.empty_table()
        return pa.concat_tables([*passed, merged]), MergeStats(log_records, len(log_keys), 0, merged.num_rows, 0)
    event_time = bool(ordering_field)
    fields = ordering_fields(ordering_field)
    types = [schema.field(f).type for f in fields] if all(f in schema.names for f in fields) else None
    try:
        versions = _versions(entries, event_time, fields, types, base_hits)
    except (pa.ArrowException, TypeError, ValueError):  # ordering values Arrow cannot line up: fold by row
        versions = None
    fold = _fold_by_columns(versions, event_time) if versions is not None \
        else _fold_by_rows(entries, event_time, fields, base_hits)
    tables = [e for e in entries if not isinstance(e, list)]
    picks, in_base = fold
    merged = (pa.concat_tables(tables).take(pa.array(picks[picks >= 0], pa.int64())) if tables
              else schema.empty_table())
    updated = int(np.count_nonzero(in_base & (picks >= 0)))
    stats = MergeStats(log_records, len(log_keys), updated, merged.num_rows - updated,
                       int(np.count_nonzero(in_base)) - updated)
    return pa.concat_tables([*passed, merged]), stats


class _Versions(NamedTuple):
    """Every version of every key, in write order: key, row in the concatenated row tables (-1: a delete),
    whether it resets the event-time comparison (a plain delete, or no ordering value), and its ordering
    value's dense rank."""

    keys: pa.Array
    rows: np.ndarray
    special: np.ndarray
    rank: np.ndarray
    base_hits: int  # the first versions are the base file's


def _versions(entries: list[pa.Table | list[DeletedRecord]], event_time: bool, fields: tuple[str, ...],
              types: list[pa.DataType] | None, base_hits: int) -> _Versions:
    keys, rows, special = [], [], []
    orderings: list[list[pa.Array]] = [[] for _ in fields]  # per ordering field, its values per entry
    offset = 0
    for entry in entries:
        if isinstance(entry, list):
            keys.append(pa.array([d.record_key for d in entry], pa.string()))
            rows.append(np.full(len(entry), -1, dtype=np.int64))
            plain = np.array([_plain_delete(d, fields) for d in entry], dtype=bool)
            if types is not None:
                for i, (values, kind) in enumerate(zip(orderings, types, strict=True)):
                    values.append(pa.array([None if p else _component(d.ordering_value, i)
                                            for d, p in zip(entry, plain)], kind))
                    plain |= np.asarray(values[-1].is_null(), dtype=bool)
            special.append(plain)
            continue
        keys.append(entry.column(RECORD_KEY).combine_chunks())
        rows.append(np.arange(offset, offset + entry.num_rows, dtype=np.int64))
        offset += entry.num_rows
        if types is not None and fields:
            missing = np.zeros(entry.num_rows, dtype=bool)
            for values, field in zip(orderings, fields, strict=True):
                values.append(entry.column(field).combine_chunks())
                missing |= np.asarray(values[-1].is_null(), dtype=bool)
            special.append(missing)
        else:
            special.append(np.full(entry.num_rows, event_time, dtype=bool))  # no values: the later write wins
    n = sum(len(k) for k in keys)
    rank = np.zeros(n, dtype=np.uint64)
    if types is not None and fields and n:
        rank = ordering_rank([pa.chunked_array(values, kind) for values, kind in zip(orderings, types, strict=True)])
    return _Versions(pa.chunked_array(keys, pa.string()).combine_chunks() if keys else pa.array([], pa.string()),
                     np.concatenate(rows) if rows else np.zeros(0, np.int64),
                     np.concatenate(special) if special else np.zeros(0, bool), rank, base_hits)


def _fold_by_columns(v: _Versions, event_time: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per key (in the order of its first version): the winning version's row (-1: a delete won), and
    whether the base file held the key.

    Event time, per key: after the key's last resetting version (a plain delete or a version without an
    ordering value, which wins over, and is won over by, whatever is next to it) the largest ordering value
    wins, a tie to the later one; with no version after it, the resetting one wins. Commit time: the last."""
    n = len(v.keys)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool)
    codes = pc.dictionary_encode(v.keys).indices.to_numpy(zero_copy_only=False)  # by first appearance
    order = np.argsort(codes, kind="stable")  # by key, then write order
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    ends = np.r_[starts[1:], n] - 1
    if not event_time:
        winners = ends
    else:
        position = np.arange(n)
        last_special = np.maximum.accumulate(np.where(v.special[order], position, -1))[ends]
        first_eligible = np.where(last_special >= starts, last_special + 1, starts)
        group = np.repeat(np.arange(len(starts)), ends - starts + 1)
        eligible = position >= first_eligible[group]
        # Sorted by group, then eligibility, ordering rank and position: each group's last is its winner.
        best = np.lexsort((position, v.rank[order], eligible, group))[ends]
        winners = np.where(eligible[best], best, last_special)
    return v.rows[order[winners]], order[starts] < v.base_hits


def _plain_delete(deleted: DeletedRecord, fields: tuple[str, ...]) -> bool:
    """Whether a delete carries no ordering value to compare: none (null or 0, Java's default), or not one
    value per ordering field (several fields need a tuple, one field a scalar; a tuple with a null cannot
    be compared either)."""
    value = deleted.ordering_value
    if isinstance(value, tuple):
        return len(value) != len(fields) or len(fields) < 2 or any(v is None for v in value)
    return len(fields) > 1 or value in (None, 0)


def _component(value: Any, i: int) -> Any:
    """Field ``i``'s part of a delete's ordering value (a tuple for several fields)."""
    return value[i] if isinstance(value, tuple) else value


def _row_orderings(entry: pa.Table, fields: tuple[str, ...]) -> list[Any]:
    """Each row's ordering value as a Python object: the field's value, a tuple of several fields' values
    (Python compares them as Hudi does, the first first), None where any is null or absent."""
    if not fields or not all(f in entry.column_names for f in fields):
        return [None] * entry.num_rows
    if len(fields) == 1:
        return entry.column(fields[0]).to_pylist()
    return [None if any(v is None for v in t) else t
            for t in zip(*(entry.column(f).to_pylist() for f in fields), strict=True)]


def _fold_by_rows(entries: list[pa.Table | list[DeletedRecord]], event_time: bool, fields: tuple[str, ...],
                  base_hits: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fold_by_columns` row by row, comparing ordering values as Python objects (values of
    unrelated types: the later write wins)."""
    latest: dict[str, _Version] = {}
    first_in_base: set[str] = set()
    offset = 0
    for entry in entries:
        if isinstance(entry, list):
            versions = [(d.record_key, _Version(-1, d.ordering_value, _plain_delete(d, fields))) for d in entry]
        else:
            keys = entry.column(RECORD_KEY).to_pylist()
            orderings = _row_orderings(entry, fields)
            versions = [(k, _Version(offset + row, o, False)) for row, (k, o) in enumerate(zip(keys, orderings))]
            if offset == 0 and base_hits:
                first_in_base.update(keys)
            offset += entry.num_rows
        for key, version in versions:
            old = latest.get(key)
            if old is None or _wins(version, old, event_time):
                latest[key] = version
    picks = np.array([v.row for v in latest.values()], dtype=np.int64)
    return picks, np.array([k in first_in_base for k in latest], dtype=bool)

"""A merge-on-read file slice's rows: its base file's rows merged with its log records by record key.

The merge mode is the writes' (``hoodie.write.record.merge.mode``, by default event time when the table has
an ordering (precombine) field):

* event-time ordering: among the versions of a key (base row first, then log records in log
  order) the one with the largest ordering value wins; a tie goes to the later write;
* commit-time ordering: the latest write wins;
* a delete removes the key. A delete that carries no ordering value (null or 0, what Spark SQL DELETE
  writes) always wins over the writes before it, and a write after it brings the key back; one that carries
  a value competes by ordering like a record.

Pure pyarrow, so it runs in Spark tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import align
from hoodpy.file_group.log_file import DeletedRecord, data_rows, deleted_records
from hoodpy.meta_fields import RECORD_KEY
from hoodpy.timeline import log_format
from hoodpy.timeline.log_format import LogBlock


class _Version(NamedTuple):
    table: int  # index of the row's table; -1 for a delete
    row: int
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
                           ordering_field: str | None) -> tuple[pa.Table, MergeStats]:
    """:func:`merge_slice`, and what the merge did. Rows come out as the base rows no log names (in file
    order), then the merged keys."""
    logs: list[pa.Table | list[DeletedRecord]] = []
    log_keys: set[str] = set()
    log_records = 0
    for block in blocks:
        if block.block_type == log_format.DELETE_BLOCK:
            deletes = deleted_records(block)
            logs.append(deletes)
            log_keys.update(d.record_key for d in deletes)
            log_records += len(deletes)
        else:
            rows = align(data_rows(block, schema), schema)
            logs.append(rows)
            log_keys.update(rows.column(RECORD_KEY).to_pylist())
            log_records += rows.num_rows
    untouched: list[pa.Table] = []
    tables: list[pa.Table] = []
    steps: list[int | list[DeletedRecord]] = []  # in write order: an index into tables, or deletes
    for entry in ([] if base is None else [align(base, schema)]) + logs:
        if isinstance(entry, list):
            steps.append(entry)
            continue
        if not tables and base is not None:  # the base file: rows no log names pass through
            hit = pc.is_in(entry.column(RECORD_KEY), value_set=pa.array(list(log_keys), pa.string()))
            untouched.append(entry.filter(pc.invert(hit)))
            entry = entry.filter(hit)
        steps.append(len(tables))
        tables.append(entry)

    latest: dict[str, _Version] = {}
    event_time = ordering_field is not None
    for step in steps:
        if isinstance(step, int):
            table = tables[step]
            keys = table.column(RECORD_KEY).to_pylist()
            orderings = (table.column(ordering_field).to_pylist() if ordering_field in table.column_names
                         else [None] * table.num_rows)
            versions = [(k, _Version(step, row, o, False)) for row, (k, o) in enumerate(zip(keys, orderings))]
        else:
            versions = [(d.record_key, _Version(-1, -1, d.ordering_value, d.ordering_value in (None, 0)))
                        for d in step]
        for key, version in versions:
            old = latest.get(key)
            if old is None or _wins(version, old, event_time):
                latest[key] = version
    offsets = [0]
    for t in tables:
        offsets.append(offsets[-1] + t.num_rows)
    picks = [offsets[v.table] + v.row for v in latest.values() if v.table >= 0]
    merged = pa.concat_tables(tables).take(pa.array(picks, pa.int64())) if tables else schema.empty_table()
    in_base = set(tables[0].column(RECORD_KEY).to_pylist()) if base is not None and tables else set()
    updated = sum(1 for k, v in latest.items() if v.table >= 0 and k in in_base)
    stats = MergeStats(log_records, len(log_keys), updated, len(picks) - updated, len(in_base) - updated)
    return pa.concat_tables([*untouched, merged]), stats

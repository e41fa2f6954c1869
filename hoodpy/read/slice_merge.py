"""A merge-on-read file slice's rows: its base file's rows merged with its log records by record key.

The merge mode follows the table's ordering (precombine) field:

* with one, event-time ordering: among the versions of a key (base row first, then log records in log
  order) the one with the largest ordering value wins; a tie goes to the later write;
* without one, commit-time ordering: the latest write wins;
* a delete removes the key. A delete that carries no ordering value (null or 0, what Spark SQL DELETE
  writes) always wins over the writes before it, and a write after it brings the key back; one that carries
  a value competes by ordering like a record.

Pure pyarrow, so it runs in Spark tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pyarrow as pa

from hoodpy.arrow_rows import align
from hoodpy.file_group.log_file import deleted_records, data_rows
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


def merge_slice(base: pa.Table | None, blocks: Sequence[LogBlock], schema: pa.Schema,
                ordering_field: str | None) -> pa.Table:
    """The slice's rows with ``schema``: the base rows (``base``, None for a slice of logs only) merged with
    the records of ``blocks`` (the slice's effective data and delete blocks, in log order)."""
    tables: list[pa.Table] = []
    latest: dict[str, _Version] = {}
    event_time = ordering_field is not None

    def offer(key: str, version: _Version) -> None:
        old = latest.get(key)
        if old is None or _wins(version, old, event_time):
            latest[key] = version

    def offer_rows(table: pa.Table) -> None:
        index = len(tables)
        tables.append(table)
        keys = table.column(RECORD_KEY).to_pylist()
        orderings = (table.column(ordering_field).to_pylist() if ordering_field in table.column_names
                     else [None] * table.num_rows)
        for row, (key, ordering) in enumerate(zip(keys, orderings, strict=True)):
            offer(key, _Version(index, row, ordering, False))

    if base is not None:
        offer_rows(align(base, schema))
    for block in blocks:
        if block.block_type == log_format.DELETE_BLOCK:
            for d in deleted_records(block):
                plain = d.ordering_value is None or d.ordering_value == 0
                offer(d.record_key, _Version(-1, -1, d.ordering_value, plain))
        else:
            offer_rows(align(data_rows(block, schema), schema))
    if not tables:
        return schema.empty_table()
    offsets = [0]
    for t in tables:
        offsets.append(offsets[-1] + t.num_rows)
    picks = [offsets[v.table] + v.row for v in latest.values() if v.table >= 0]
    return pa.concat_tables(tables).take(pa.array(picks, pa.int64()))

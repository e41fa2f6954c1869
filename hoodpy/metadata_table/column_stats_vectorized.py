"""Many column_stats records (HoodieMetadataRecord values of type 3) decoded at once, a field at a time for all
records (numpy), instead of fastavro's record-by-record loop: a table of thousands of files has thousands of
records per column, and planning a query decodes all of them.

The record is nested (the ColumnStatsMetadata union, min / max as a union of wrapper records, valueType a union
with a record), so :mod:`hoodpy.file_group.avro_columns` (flat schemas) does not apply. Here every node of the
writer's schema is walked once for all records: a union reads every record's branch index, then each branch
walks its own records. Fields after ColumnStatsMetadata are not read.

The result is exactly :func:`hoodpy.metadata_table.column_stats.decode_stats`'s, record for record: wrapper
records name their branch (``-type``, the full name), valueType is a dict or None. What this decoder does not
reproduce itself goes to that function, per record: a value under a logical type (fastavro converts decimals,
times, ...). A schema with a map or an array holding values before the stats (never in type 3 records) is
decoded record by record too (None from :func:`decode_stats_batch`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hoodpy.file_group.avro_columns import zigzag_varints

STATS_FIELD = "ColumnStatsMetadata"
_WRAPPED = ("minValue", "maxValue")
_PLAIN_RECORDS = (STATS_FIELD, "valueType")
_WIDTHS = {"boolean": 1, "float": 4, "double": 8}


class _PerRecord(Exception):
    """The batch cannot be walked column-wise (a map or array with values): decode it record by record."""


class _Walk:
    """One pass over the records ``buf[starts[i]:ends[i]]`` (``data``: the same bytes as a bytes object)."""

    def __init__(self, data: bytes, buf: np.ndarray, named: dict[str, Any], source: str):
        self.data, self.buf, self.named, self.source = data, buf, named, source
        self.slow: set[int] = set()  # records to decode with fastavro (a value under a logical type)

    def node(self, schema: Any, rows: np.ndarray, pos: np.ndarray, keep: bool, field: str = "",
             ) -> tuple[np.ndarray, list | None]:
        """Positions after ``schema``'s value for records ``rows`` (at ``pos``), and their values when ``keep``
        (``field``: the record field holding it, which decides how a union gives a record)."""
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        kind = schema if isinstance(schema, str) else schema["type"] if isinstance(schema, dict) else "union"
        if kind == "union":
            return self.union(schema, rows, pos, keep, field)
        if kind == "record":
            return self.record(schema, rows, pos, keep)
        if isinstance(schema, dict) and schema.get("logicalType") and keep and len(rows):
            self.slow.update(rows.tolist())
        n = len(rows)
        if kind == "null":
            return pos, [None] * n if keep else None
        if kind in ("int", "long", "enum"):
            values, pos = zigzag_varints(self.buf, pos, self.source)
            if not keep:
                return pos, None
            if kind == "enum":
                symbols = schema["symbols"]
                return pos, [symbols[v] for v in values.tolist()]
            return pos, values.tolist()
        if kind in ("string", "bytes", "fixed"):
            if kind == "fixed":
                lengths = np.full(n, int(schema["size"]), dtype=np.int64)
            else:
                lengths, pos = zigzag_varints(self.buf, pos, self.source)
                if np.any(lengths < 0):
                    raise ValueError("negative length")
            ends = pos + lengths
            values = None
            if keep:
                data = self.data
                values = [data[a:b] for a, b in zip(pos.tolist(), ends.tolist(), strict=True)]
                if kind == "string":
                    values = [v.decode("utf-8") for v in values]
            return ends, values
        if kind in _WIDTHS:
            width = _WIDTHS[kind]
            values = None
            if keep:
                if kind == "boolean":
                    values = (self.buf[pos] != 0).tolist()
                else:
                    raw = self.buf[pos[:, None] + np.arange(width)]
                    values = raw.view("<f4" if kind == "float" else "<f8")[:, 0].tolist()
            return pos + width, values
        if kind in ("map", "array"):
            # Per-record block counts: only an empty batch (or every record's union holding null) walks past.
            if len(rows):
                raise _PerRecord(kind)
            return pos, [] if keep else None
        raise ValueError(f"unknown Avro type {kind!r}")

    def union(self, branches: list, rows: np.ndarray, pos: np.ndarray, keep: bool, field: str,
              ) -> tuple[np.ndarray, list | None]:
        index, pos = zigzag_varints(self.buf, pos, self.source)
        if np.any((index < 0) | (index >= len(branches))):
            raise ValueError("bad union branch index")
        present = np.unique(index).tolist()
        out = [None] * len(rows) if keep else None
        after = pos.copy()
        for b in present:
            at = np.flatnonzero(index == b) if len(present) > 1 else np.arange(len(rows))
            schema = branches[b]
            if isinstance(schema, str) and schema in self.named:
                schema = self.named[schema]
            end, values = self.node(schema, rows[at], pos[at], keep)
            after[at] = end
            if keep:
                if isinstance(schema, dict) and schema.get("type") == "record":
                    values = _named_records(schema["name"], values, field)
                if len(present) == 1:
                    out = values  # the common case: every record in one branch
                else:
                    for i, v in zip(at.tolist(), values, strict=True):
                        out[i] = v
        return after, out

    def record(self, schema: dict, rows: np.ndarray, pos: np.ndarray, keep: bool) -> tuple[np.ndarray, list | None]:
        names, columns = [], []
        for f in schema["fields"]:
            pos, values = self.node(f["type"], rows, pos, keep, f["name"])
            names.append(f["name"])
            columns.append(values)
        if not keep:
            return pos, None
        return pos, [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)] if columns else \
            [{} for _ in range(len(rows))]


def _named_records(name: str, records: list[dict], field: str) -> list:
    """A union's records as ``decode_stats`` leaves them: min / max naming their wrapper (``-type``), the stats
    and valueType as they are, any other as fastavro's (full name, record)."""
    if field in _WRAPPED:
        return [{"-type": name, **r} for r in records]
    if field in _PLAIN_RECORDS:
        return records
    return [(name, r) for r in records]


def decode_stats_batch(values: Sequence[bytes], schema: dict[str, Any],
                       decode_stats: Callable[[bytes, dict[str, Any]], dict[str, Any] | None], source: str = "<bytes>",
                       ) -> list[dict[str, Any] | None] | None:
    """The HoodieMetadataColumnStats of each encoded HoodieMetadataRecord (``schema`` as fastavro parses it;
    None for a record of another type), as ``decode_stats`` (the record-by-record decoder) gives them, which
    decodes the records this one leaves to it; None when the batch must be decoded record by record (see the
    module docstring). ValueError on bytes that are not such records."""
    n = len(values)
    if not n:
        return []
    data = b"".join(values)
    lengths = np.array(list(map(len, values)), dtype=np.int64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    buf = np.frombuffer(data + bytes(16), dtype=np.uint8)  # padding: a corrupt varint may read a little past
    walk = _Walk(data, buf, schema.get("__named_schemas", {}), source)
    rows, pos, stats = np.arange(n), starts, None
    try:
        for f in schema["fields"]:
            keep = f["name"] == STATS_FIELD
            pos, got = walk.node(f["type"], rows, pos, keep, f["name"])
            if keep:
                stats = got
                break
    except _PerRecord:
        return None
    except IndexError as e:
        raise ValueError(f"an Avro record runs past its bytes ({e})") from e
    if stats is None:
        return None
    if np.any(pos > ends):
        raise ValueError("an Avro record runs past its bytes")
    for i in walk.slow:
        stats[i] = decode_stats(values[i], schema)
    return stats

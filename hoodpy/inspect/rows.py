"""A result: named, typed columns and rows of plain Python values (in column order).

Column types are Spark SQL's names (``string``, ``int``, ``long``, ``double``, ``boolean``), the output
types Hudi's procedures declare; the SQL layer maps them to Spark types, the command line prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

COLUMN_TYPES = ("string", "int", "long", "double", "boolean")
Column = tuple[str, str]  # (name, type)


def columns(*spec: Column) -> tuple[Column, ...]:
    """Declare columns, checking the type names (a typo would otherwise surface only in Spark)."""
    for name, kind in spec:
        if kind not in COLUMN_TYPES:
            raise ValueError(f"column {name!r}: unknown type {kind!r}; expected one of {', '.join(COLUMN_TYPES)}")
    return tuple(spec)


@dataclass(frozen=True)
class Rows:
    columns: tuple[Column, ...]
    rows: list[tuple] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.columns]

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts by column name (what ``--json`` prints)."""
        names = self.names
        return [dict(zip(names, r, strict=True)) for r in self.rows]

    def __len__(self) -> int:
        return len(self.rows)


def limited(rows: Iterable[tuple], limit: int | None) -> list[tuple]:
    """Hudi's ``rows.stream().limit(limit)``; None or a negative limit keeps everything."""
    rows = list(rows)
    return rows if limit is None or limit < 0 else rows[:limit]


def make_rows(spec: Sequence[Column], rows: Iterable[tuple], limit: int | None = None) -> Rows:
    return Rows(tuple(spec), limited(rows, limit))

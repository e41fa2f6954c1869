"""Printing results: readable tables (rich) or, with ``--json``, the rows as JSON objects.

JSON holds the values the SQL procedures return, unformatted; the tables format numbers with thousands
separators and may leave out columns that are constant on copy-on-write tables (log file counters).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from hoodpy.inspect.rows import Rows

_MAX_WIDTH = 400
_FREE_TEXT = {"data_file", "involved_partitions", "rollback_info", "file_path"}  # may wrap


def _json_value(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def print_json(value: Any, out=None) -> None:
    json.dump(value, out or sys.stdout, indent=2, default=_json_value)
    (out or sys.stdout).write("\n")


def _cell(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    if kind in ("int", "long") and isinstance(value, int):
        return f"{value:,}"
    if kind == "double" and isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def _print(table, out=None, *, title: str, caption: str | None) -> None:
    """Print a table at the width it needs: piped output gets its natural width (rich would otherwise fold it
    to 80 columns), a terminal at least the table's minimum (long lines wrap rather than lose columns). Title
    and caption are lines of their own, so they do not squeeze into the table's width."""
    from rich.console import Console
    from rich.measure import Measurement

    out = out or sys.stdout
    # Values are data: no rich markup ("[b]") or emoji codes (":x:") in partition paths or titles.
    console = Console(file=out, highlight=False, markup=False, emoji=False, width=_MAX_WIDTH)
    needed = Measurement.get(console, console.options, table)
    if out.isatty():
        console.width = max(shutil.get_terminal_size().columns, needed.minimum)
    else:
        console.width = int(os.environ.get("COLUMNS") or 0) or min(needed.maximum, _MAX_WIDTH)
    console.print(title, style="bold", soft_wrap=True)
    console.print(table, crop=False)
    if caption:
        console.print(caption, style="dim", soft_wrap=True)


@dataclass(frozen=True)
class Result:
    """One table a command prints: its rows and how to show them."""

    key: str  # its name in the JSON object, when a command prints several
    title: str
    rows: Rows
    hide: tuple[str, ...] = ()  # columns the readable table leaves out (JSON keeps them)
    caption: str | None = None
    formats: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)  # column -> cell text


def print_table(result: Result, out=None) -> None:
    from rich.table import Table

    rows = result.rows
    shown = [(i, name, kind) for i, (name, kind) in enumerate(rows.columns) if name not in result.hide]
    caption = result.caption if rows.rows else "; ".join(filter(None, (result.caption, "no rows")))
    table = Table()
    cells = [[result.formats[name](row[i]) if name in result.formats else _cell(row[i], kind)
              for i, name, kind in shown] for row in rows.rows]
    for j, (_, name, kind) in enumerate(shown):
        # Values keep their width (instant times, file ids, sizes); headers fold instead. Free text may wrap.
        widest = max((len(c[j]) for c in cells), default=0)
        table.add_column(name, justify="right" if kind in ("int", "long", "double") else "left",
                         min_width=None if name in _FREE_TEXT else widest, overflow="fold")
    for row_cells in cells:
        table.add_row(*row_cells)
    _print(table, out, title=result.title, caption=caption)


def emit(results: Sequence[Result], *, as_json: bool, out=None) -> None:
    """Print a command's results: JSON (a list of row objects, or an object of such lists by key when there
    are several) or readable tables. A command that printed its own output returns none."""
    if not results:
        return
    if as_json:
        if len(results) == 1:
            print_json(results[0].rows.records(), out)
        else:
            print_json({r.key: r.rows.records() for r in results}, out)
        return
    for i, r in enumerate(results):
        if i:
            (out or sys.stdout).write("\n")
        print_table(r, out)

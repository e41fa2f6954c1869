"""``hoodpy layout``: each base file's [min, max] of one column as horizontal bars, before and after the last
clustering (or as of ``--before`` and now), drawn with matplotlib into a PNG.

The ranges come from :func:`hoodpy.inspect.column_layout.clustering_layouts` (parquet footer statistics);
this module only draws them. matplotlib is imported here only, when the command runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from hoodpy.cli.commands import time_argument
from hoodpy.cli.output import Result, print_json
from hoodpy.cli.table import OpenTable
from hoodpy.errors import MissingDependencyError
from hoodpy.inspect.column_layout import Layout, clustering_layouts
from hoodpy.inspect.rows import columns, make_rows

SUMMARY = columns(("view", "string"), ("as_of", "string"), ("files", "int"), ("mean_overlap", "double"),
                  ("min", "string"), ("max", "string"))
_LABELLED_FILES = 30  # up to this many files, the y axis names them


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--column", required=True, help="the column whose ranges to draw (a dotted path for a nested one)")
    p.add_argument("--out", required=True, metavar="FILE.png", help="where to write the picture")
    p.add_argument("--before", metavar="T", type=time_argument(True),
                   help="compare the view as of this instant with the latest one (default: before and after the "
                        "last replacecommit)")


def run(table: OpenTable, a: argparse.Namespace) -> list[Result]:
    layouts = clustering_layouts(table.storage, a.column, before=a.before)
    draw_layouts(layouts, a.out, title=f"{table.name}: {a.column} per base file")
    if a.json:
        print_json({"column": a.column, "out": a.out,
                    "views": [{"view": lay.label, "as_of": lay.as_of, "mean_overlap": lay.mean_overlap,
                               "files": lay.records()} for lay in layouts]})
        return []
    rows = [(lay.label, lay.as_of, len(lay.files), lay.mean_overlap,
             *((str(lay.ranged[0].min), str(max(f.max for f in lay.ranged))) if lay.ranged else (None, None)))
            for lay in layouts]
    return [Result("layout", f"{a.column}: value ranges per base file (drawn into {a.out})",
                   make_rows(SUMMARY, rows),
                   caption="mean_overlap: how many other files of its partition the average file's range intersects")]


def _scale(layouts: Sequence[Layout]) -> tuple[Callable[[Any], float], str]:
    """A map from column values to x positions, and what the axis shows."""
    values = [v for lay in layouts for f in lay.ranged for v in (f.min, f.max)]
    if all(isinstance(v, (int, float, Decimal)) for v in values):
        return float, "value"
    if all(isinstance(v, (dt.date, dt.datetime)) for v in values):
        from matplotlib.dates import date2num

        def as_datetime(v):
            return v if isinstance(v, dt.datetime) else dt.datetime(v.year, v.month, v.day)

        return (lambda v: float(date2num(as_datetime(v)))), "date"
    # Strings and anything else: positions in sort order of the values seen (the axis names a few).
    ranks = {v: i for i, v in enumerate(sorted({str(v) for v in values}))}
    return (lambda v: float(ranks[str(v)])), "rank"


def _rank_ticks(layouts: Sequence[Layout]) -> tuple[list[float], list[str]]:
    names = sorted({str(v) for lay in layouts for f in lay.ranged for v in (f.min, f.max)})
    step = max(1, len(names) // 5)
    picked = list(range(0, len(names), step))
    return [float(i) for i in picked], [names[i][:12] for i in picked]


def draw_layouts(layouts: Sequence[Layout], path: str, *, title: str) -> None:
    """One panel per layout, side by side on a shared x axis: a bar per file from min to max, y = files by
    partition, then sorted by min."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("matplotlib", "hoodpy layout") from None

    to_x, axis = _scale(layouts)
    most = max((len(lay.ranged) for lay in layouts), default=0)
    fig = Figure(figsize=(5.2 * len(layouts), min(2.2 + 0.22 * most, 9)), layout="constrained")
    panels = fig.subplots(1, len(layouts), sharex=True, squeeze=False)[0]
    xs = [to_x(v) for lay in layouts for f in lay.ranged for v in (f.min, f.max)]
    # A file holding a single value would be a zero-width bar: give every bar a visible minimum width.
    thinnest = (max(xs) - min(xs)) * 0.01 if xs else 0.0
    colors = ["#9aa5b1"] * (len(layouts) - 1) + ["#2f6db5"]  # the earlier views grey, the last one blue
    for ax, lay, color in zip(panels, layouts, colors, strict=True):
        ranged = lay.ranged
        lows = [to_x(f.min) for f in ranged]
        widths = [max(to_x(f.max) - lo, thinnest) for f, lo in zip(ranged, lows, strict=True)]
        ys = range(len(ranged))
        ax.barh(ys, widths, left=lows, height=0.7, color=color)
        ax.margins(x=0.02)
        ax.set_title(f"{lay.label}\n{len(lay.files)} files, mean overlap {lay.mean_overlap:.1f}", fontsize=9)
        ax.set_ylim(-0.8, max(len(ranged), 1) - 0.2)
        ax.invert_yaxis()
        if len(ranged) <= _LABELLED_FILES:
            ax.set_yticks(list(ys), [f"{f.partition_path}/{f.file_id[:8]}".lstrip("/") for f in ranged], fontsize=7)
        else:
            ax.set_yticks([])
        ax.set_ylabel("base files (by partition, then min)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel(f"{lay.column} ({axis})" if axis != "value" else lay.column)
    if axis == "date":
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        locator = AutoDateLocator()
        panels[0].xaxis.set_major_locator(locator)
        panels[0].xaxis.set_major_formatter(ConciseDateFormatter(locator))
    elif axis == "rank":
        panels[0].set_xticks(*_rank_ticks(layouts), fontsize=7, rotation=30)
    fig.suptitle(title, fontsize=11)
    fig.savefig(path, dpi=100)

"""Table statistics: ``stats_file_sizes`` (base file size histogram per commit) and ``stats_wa``
(write amplification per commit).

Parameters and columns are Hudi's (``StatsFileSizeProcedure``, ``StatsWriteAmplificationProcedure``).
``stats_file_sizes`` counts every base file on storage (all versions, committed or not, as Hudi's listing
does), one row per instant time plus an ``ALL`` row; percentiles are those of Dropwizard's uniform
snapshot, which Hudi uses. ``partition_path`` is a glob over partition paths; Hudi's default ``''`` (files
directly under the base path) is taken to mean every partition, since on a partitioned table Hudi's listing
would count partition folders as files.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType

from hoodpy.file_group.fs_view import list_base_files
from sql_ext.procedures.base import (
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    limited,
)
from sql_ext.procedures.show_fsview import partition_matches

_STR, _LONG, _DOUBLE, _INT = StringType(), LongType(), DoubleType(), IntegerType()


def snapshot_value(values: Sequence[int], quantile: float) -> float:
    """Dropwizard ``UniformSnapshot.getValue``: linear interpolation at ``quantile * (n + 1)``."""
    if not values:
        return 0.0
    pos = quantile * (len(values) + 1)
    index = int(pos)
    if index < 1:
        return float(values[0])
    if index >= len(values):
        return float(values[-1])
    lower, upper = values[index - 1], values[index]
    return lower + (pos - math.floor(pos)) * (upper - lower)


def histogram_row(label: str, sizes: Sequence[int]) -> tuple:
    values = sorted(sizes)
    n = len(values)
    mean = sum(values) / n if n else 0.0
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return (label, values[0] if n else 0, snapshot_value(values, 0.1), snapshot_value(values, 0.5), float(mean),
            snapshot_value(values, 0.95), values[-1] if n else 0, n, float(std))


class StatsFileSizesProcedure(Procedure):
    """Base file size distribution (min, percentiles, max, std dev) per commit and over all files."""

    name = "stats_file_sizes"
    parameters = (
        TABLE,
        Parameter.optional("partition_path", STRING, "", doc="Glob over partition paths ('' = all)."),
        Parameter.optional("limit", INTEGER, 10),
        PATH,
    )
    output = (
        ("commit_time", _STR), ("min", _LONG), ("10th", _DOUBLE), ("50th", _DOUBLE), ("avg", _DOUBLE),
        ("95th", _DOUBLE), ("max", _LONG), ("num_files", _INT), ("std_dev", _DOUBLE),
    )

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        table = ctx.table(args)
        glob = (args["partition_path"] or "").strip()
        files = [bf for bf in list_base_files(table.storage) if not glob or partition_matches(bf.partition_path, glob)]
        by_commit: dict[str, list[int]] = {}
        for bf in files:
            by_commit.setdefault(bf.instant_time, []).append(bf.size)
        rows = [histogram_row(t, sizes) for t, sizes in sorted(by_commit.items())]
        rows.append(histogram_row("ALL", [bf.size for bf in files]))
        return limited(rows, args["limit"])


def decimal_format_2(value: float) -> str:
    """Java ``new DecimalFormat("#.00").format(value)`` (HALF_EVEN; no leading zero: ``.50``)."""
    text = str(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("0.") else ("-" + text[2:] if text.startswith("-0.") else text)


def write_amplification(written: int, upserted: int) -> str:
    if upserted <= 0:
        return "0"
    return decimal_format_2(float(np.float32(written) / np.float32(upserted)))


class StatsWaProcedure(Procedure):
    """Write amplification per commit: records written / records updated, plus a Total row."""

    name = "stats_wa"
    parameters = (TABLE, Parameter.optional("limit", INTEGER, 10), PATH)
    output = (("commit_time", _STR), ("total_upserted", _LONG), ("total_written", _LONG),
              ("write_amplification_factor", _STR))

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        timeline = ctx.table(args).timeline
        rows, total_upserted, total_written = [], 0, 0
        for instant in timeline.completed_commits():
            stats = timeline.commit_metadata(instant).write_stats
            upserted = sum(s.num_update_writes for s in stats)
            written = sum(s.num_writes for s in stats)
            rows.append((instant.timestamp, upserted, written, write_amplification(written, upserted)))
            total_upserted += upserted
            total_written += written
        rows.append(("Total", total_upserted, total_written, write_amplification(total_written, total_upserted)))
        return limited(rows, args["limit"])

"""Table statistics as rows: the base file size distribution per commit (``stats_file_sizes``) and the write
amplification per commit (``stats_wa``).

File sizes count every base file and log file on storage (all versions, committed or not, as Hudi's listing
does; a log file under its slice's base instant, as Java's FSUtils.getCommitTime reads its name), one row
per instant time plus an ``ALL`` row; the percentiles are those of Dropwizard's uniform snapshot, which
Hudi uses. Write amplification is records written / records updated, formatted as Java's
``DecimalFormat("#.00")`` of a float division, plus a ``Total`` row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np

from hoodpy.file_group.fs_view import list_group_files, slice_instant
from hoodpy.inspect.file_slices import partition_matches
from hoodpy.inspect.rows import Rows, columns, make_rows
from hoodpy.storage import Storage
from hoodpy.timeline.timeline import Timeline

FILE_SIZES = columns(
    ("commit_time", "string"), ("min", "long"), ("10th", "double"), ("50th", "double"), ("avg", "double"),
    ("95th", "double"), ("max", "long"), ("num_files", "int"), ("std_dev", "double"),
)
WRITE_AMPLIFICATION = columns(
    ("commit_time", "string"), ("total_upserted", "long"), ("total_written", "long"),
    ("write_amplification_factor", "string"),
)


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


def file_sizes(storage: Storage, *, partition_glob: str = "", limit: int | None = None) -> Rows:
    """Base file size distribution per commit and over all files (``partition_glob`` '' = every partition:
    on a partitioned table Hudi's literal '' would count partition folders as files)."""
    glob = (partition_glob or "").strip()
    files = [f for f in list_group_files(storage) if not glob or partition_matches(f.partition_path, glob)]
    by_commit: dict[str, list[int]] = {}
    for f in files:
        by_commit.setdefault(slice_instant(f), []).append(f.size)
    rows = [histogram_row(t, sizes) for t, sizes in sorted(by_commit.items())]
    rows.append(histogram_row("ALL", [f.size for f in files]))
    return make_rows(FILE_SIZES, rows, limit)


def decimal_format_2(value: float) -> str:
    """Java ``new DecimalFormat("#.00").format(value)`` (HALF_EVEN; no leading zero: ``.50``)."""
    text = str(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("0.") else ("-" + text[2:] if text.startswith("-0.") else text)


def write_amplification(written: int, upserted: int) -> str:
    if upserted <= 0:
        return "0"
    return decimal_format_2(float(np.float32(written) / np.float32(upserted)))


def write_amplification_rows(storage: Storage, *, limit: int | None = None) -> Rows:
    """Write amplification per completed commit, oldest first, and a ``Total`` row."""
    timeline = Timeline.load(storage)
    rows, total_upserted, total_written = [], 0, 0
    for instant in timeline.completed_commits():
        stats = timeline.commit_metadata(instant).write_stats
        upserted = sum(s.num_update_writes for s in stats)
        written = sum(s.num_writes for s in stats)
        rows.append((instant.timestamp, upserted, written, write_amplification(written, upserted)))
        total_upserted += upserted
        total_written += written
    rows.append(("Total", total_upserted, total_written, write_amplification(total_written, total_upserted)))
    return make_rows(WRITE_AMPLIFICATION, rows, limit)

"""Land one generated batch: copy its files into the landing directory the raw source tables read.

This is the extractor's last step in a real pipeline (files dropped into a bucket prefix per stream).
Each file is copied under a dot-name, then renamed, so Spark (which skips dot-files) never reads half a
file. Landing the same batch again replaces its files with identical ones: nothing is duplicated.

Usage: ``python land_batch.py BATCH_ID [--data DIR] [--landing DIR]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

try:
    from . import generate_batches as gen
except ImportError:  # pragma: no cover -- run as a script
    import generate_batches as gen  # type: ignore[no-redef]

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = PROJECT / "data" / "batches"
DEFAULT_LANDING = PROJECT / "landing"
# stream (the raw table's name) -> the file a batch directory holds for it
STREAM_FILES = {"ride_events": "ride_events.jsonl", "assignment_events": "assignment_events.csv"}


class BatchNotGeneratedError(FileNotFoundError):
    """The batch to land was never generated."""


def land(batch_id: int, data: Path = DEFAULT_DATA, landing: Path = DEFAULT_LANDING) -> list[Path]:
    """Copy batch ``batch_id``'s stream files into ``landing/<stream>/``; returns the landed files."""
    source = gen.batch_dir(data, batch_id)
    if not source.is_dir():
        raise BatchNotGeneratedError(f"batch {batch_id} is not in {data} (run generate_batches.py first)")
    landed = []
    for stream, file_name in STREAM_FILES.items():
        target_dir = Path(landing) / stream
        target_dir.mkdir(parents=True, exist_ok=True)
        suffix = Path(file_name).suffix
        target = target_dir / f"batch_{batch_id:03d}{suffix}"
        tmp = target_dir / f".{target.name}.landing"
        shutil.copyfile(source / file_name, tmp)
        os.replace(tmp, target)
        landed.append(target)
    return landed


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("batch_id", type=int)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--landing", type=Path, default=DEFAULT_LANDING)
    args = p.parse_args(argv)
    for path in land(args.batch_id, args.data, args.landing):
        print(f"landed {path}")


if __name__ == "__main__":
    main()

"""The row model the CDC query tests (test_cdc.py, test_cdc_merge_on_read.py) check changes against.

Imported by module name (tests/spark is on sys.path)."""

from __future__ import annotations

import json

COLUMNS = ("id", "p", "ts", "v")


def data(image: str | None) -> tuple | None:
    """A JSON image's table columns (images read from files also carry the meta columns)."""
    if image is None:
        return None
    d = json.loads(image)
    return tuple(d[c] for c in COLUMNS)


def changes(df) -> list[tuple]:
    """A CDC query's rows as sorted (commit, op, key, before, after)."""
    return sorted((r.ts_ms, r.op, (data(r.before) or data(r.after))[0], data(r.before), data(r.after))
                  for r in df.collect())


class Model:
    """The expected changes (commit, op, key, before, after) and rows, merged by event time on ``ts`` (a
    record older than the stored row changes nothing)."""

    def __init__(self):
        self.state: dict[int, tuple] = {}
        self.changes: list[tuple] = []

    def upsert(self, ts: str, batch: list[tuple]) -> None:
        for row in batch:
            before = self.state.get(row[0])
            if before is not None and row[2] < before[2]:
                continue
            self.changes.append((ts, "u" if before else "i", row[0], before, row))
            self.state[row[0]] = row

    def delete(self, ts: str, keys: list[int]) -> None:
        for k in keys:
            if k in self.state:
                self.changes.append((ts, "d", k, self.state.pop(k), None))

    def insert_overwrite(self, ts: str, batch: list[tuple]) -> None:
        parts = {r[1] for r in batch}
        for k, row in sorted(self.state.items()):
            if row[1] in parts:
                self.changes.append((ts, "d", k, self.state.pop(k), None))
        for row in batch:
            self.changes.append((ts, "i", row[0], None, row))
            self.state[row[0]] = row

    def window(self, start: str, end: str | None = None) -> list[tuple]:
        return sorted(c for c in self.changes if c[0] > start and (end is None or c[0] <= end))

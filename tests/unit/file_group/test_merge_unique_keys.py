"""Merging log records whose keys are each named once (no base row, no delete, no key twice): each record wins
as it is, without the fold; any repeated key, base row or delete still goes through the fold."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from hoodpy.meta_fields import RECORD_KEY
from hoodpy.read import slice_merge
from hoodpy.read.slice_merge import MergeStats, merge_decoded
from hoodpy.file_group.log_file import DeletedRecord

SCHEMA = pa.schema([(RECORD_KEY, pa.string()), ("ts", pa.int64()), ("v", pa.string())])


def _block(rows):
    return pa.Table.from_pylist([{RECORD_KEY: k, "ts": ts, "v": v} for k, ts, v in rows], schema=SCHEMA)


def _model(base, logs, event_time):
    """Rows of the merge, key by key: the base row first, then the log versions in log order; event time
    keeps the largest ts (a tie to the later), commit time the last; a delete (None) removes the key."""
    won = {}
    for k, ts, v in base:
        won[k] = (ts, v)
    for block in logs:
        for k, ts, v in block:
            if v is None:
                won.pop(k, None)
            elif not event_time or k not in won or ts >= won[k][0]:
                won[k] = (ts, v)
    return sorted((k, ts, v) for k, (ts, v) in won.items())


@pytest.mark.parametrize("ordering", ["ts", None])
def test_keys_named_once_skip_the_fold(ordering, monkeypatch):
    rng = random.Random(3)
    keys = [f"k{i:04d}" for i in rng.sample(range(5000), 600)]
    logs = [[(k, rng.randint(0, 9), f"v{k}") for k in keys[:250]], [(k, rng.randint(0, 9), f"w{k}") for k in keys[250:]]]

    def no_fold(*_):
        raise AssertionError("folded")

    monkeypatch.setattr(slice_merge, "_fold_by_columns", no_fold)
    merged, stats = merge_decoded(None, [_block(b) for b in logs], SCHEMA, ordering)
    assert merged.schema == SCHEMA
    assert [tuple(r.values()) for r in merged.to_pylist()] == [r for b in logs for r in b]  # log order
    assert stats == MergeStats(600, 600, 0, 600, 0)
    base = [("zzz", 1, "base")]  # a base row no log names passes through, first
    merged, _ = merge_decoded(_block(base), [_block(b) for b in logs], SCHEMA, ordering)
    assert [tuple(r.values()) for r in merged.to_pylist()] == [*base, *(r for b in logs for r in b)]


@pytest.mark.parametrize("ordering", ["ts", None])
def test_repeats_base_hits_and_deletes_still_fold(ordering):
    rng = random.Random(5)
    for _ in range(30):
        keys = [f"k{i}" for i in range(40)]
        base = [(k, rng.randint(0, 9), f"b{k}") for k in rng.sample(keys, rng.randint(0, 3))]
        logs = [[(k, rng.randint(0, 9), f"l{j}{k}") for k in rng.sample(keys, 12)] for j in range(2)]
        deletes = [(k, None, None) for k in rng.sample(keys, rng.randint(0, 2))]
        entries = [_block(logs[0]), [DeletedRecord(k, "", None) for k, _, _ in deletes], _block(logs[1])]
        merged, _ = merge_decoded(_block(base) if base else None, entries, SCHEMA, ordering)
        got = sorted(tuple(r.values()) for r in merged.to_pylist())
        assert got == _model(base, [logs[0], deletes, logs[1]], ordering is not None)

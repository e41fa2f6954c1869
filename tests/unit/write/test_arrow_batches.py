"""Spark's byte bound on Arrow batches is lifted only where it cannot bind (arrow_batches.bytes_bound_idle)."""

from __future__ import annotations

from hoodpy.write.arrow_batches import DEFAULT_MAX_BYTES, EXPANSION, bytes_bound_idle


def test_narrow_records_leave_the_default_bound_idle():
    assert bytes_bound_idle(10_000, 28)  # SF 1 lineitem on disk
    edge = DEFAULT_MAX_BYTES // (10_000 * EXPANSION)
    assert bytes_bound_idle(10_000, edge)
    assert not bytes_bound_idle(10_000, edge + 1)


def test_no_record_bound_or_wide_records_keep_it():
    assert not bytes_bound_idle(0, 28)
    assert not bytes_bound_idle(-1, 28)
    assert not bytes_bound_idle(10_000, 100_000)
    assert not bytes_bound_idle(10_000_000, 28)

"""Spark's byte bound on Arrow batches is lifted only where it cannot bind (arrow_batches.batch_records)."""

from __future__ import annotations

from hoodpy.write.arrow_batches import DEFAULT_MAX_BYTES, EXPANSION, MIN_BATCH_RECORDS, batch_records


def test_narrow_records_keep_the_record_bound():
    assert batch_records(10_000, 28) == 10_000  # SF 1 lineitem on disk
    edge = DEFAULT_MAX_BYTES // (10_000 * EXPANSION)
    assert batch_records(10_000, edge) == 10_000
    assert batch_records(500, 28) == 500  # a user's lower bound stays


def test_wider_records_take_fewer_a_batch():
    assert batch_records(10_000, 1024) == 4096  # a first load at Hudi's default estimate
    edge = DEFAULT_MAX_BYTES // (10_000 * EXPANSION)
    fewer = batch_records(10_000, edge + 1)
    assert MIN_BATCH_RECORDS <= fewer < 10_000 and fewer * (edge + 1) * EXPANSION <= DEFAULT_MAX_BYTES


def test_no_record_bound_or_too_wide_records_keep_the_byte_bound():
    assert batch_records(0, 28) is None
    assert batch_records(-1, 28) is None
    assert batch_records(10_000, 100_000) is None  # fewer than MIN_BATCH_RECORDS would fit
    assert batch_records(10_000_000, 28) == DEFAULT_MAX_BYTES // (28 * EXPANSION)

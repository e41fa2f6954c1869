"""The integration project's data: deterministic batches with the hard cases, and the expected-rows model."""

from __future__ import annotations

from decimal import Decimal

import pytest

from integration_project.scripts import expected_state as es
from integration_project.scripts import generate_batches as gen


def test_same_seed_same_batches_other_seed_other_batches():
    assert gen.generate(seed=3) == gen.generate(seed=3)
    assert gen.generate(seed=3) != gen.generate(seed=4)


def test_more_batches_extend_the_same_stream():
    """A pipeline that continues (generate 3, land batch 3) sees batches 1 and 2 unchanged."""
    assert gen.generate(batches=3)[:2] == gen.generate(batches=2)


def test_written_batches_read_back_unchanged(tmp_path):
    batches = gen.generate()
    gen.write(batches, tmp_path / "b")
    assert gen.read(tmp_path / "b") == batches
    assert gen.read(tmp_path / "b", upto=1) == batches[:1]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["batch_001", "batch_002"]


def test_default_batches_hold_every_hard_case():
    batches = gen.generate()
    counts = es.summary(batches)
    assert counts["duplicates"] > 0 and counts["deletes"] > 0 and counts["late_events"] > 0
    # Out of order within a batch: some key's events are not delivered in event-time order.
    def out_of_order(events, key):
        last = {}
        for e in events:
            if e[key] in last and e["event_ts"] < last[e[key]]:
                return True
            last[e[key]] = e["event_ts"]
        return False
    assert all(out_of_order(b.ride_events, "ride_id") for b in batches)
    # Batch 2 updates, deletes and re-sends rides first delivered in batch 1.
    first = {e["ride_id"] for e in batches[0].ride_events}
    second = [e for e in batches[1].ride_events if e["ride_id"] in first]
    assert {e["op"] for e in second} >= {"u", "d", "c"}


@pytest.mark.parametrize("seed", range(12))
def test_latest_event_wins_equals_batch_by_batch_upserts(seed):
    """The generator's invariant: folding like the tables do gives the 'latest event wins' truth."""
    batches = gen.generate(seed=seed, batches=4, rides_per_batch=30)
    for n in range(1, 5):
        assert es.expected_rides(batches[:n]) == es.expected_rides(batches[:n], fold=es.apply_batches)
        assert es.expected_assignments(batches[:n]) == \
            es.expected_assignments(batches[:n], fold=es.apply_batches)


@pytest.mark.parametrize("seed", range(12))
def test_every_live_assignment_references_a_live_ride(seed):
    batches = gen.generate(seed=seed, batches=4, rides_per_batch=30)
    for n in range(1, 5):
        rides = {r["ride_id"] for r in es.expected_rides(batches[:n])}
        assert {a["ride_id"] for a in es.expected_assignments(batches[:n])} <= rides
        assert len(es.expected_matches(batches[:n])) == len(es.expected_assignments(batches[:n]))


def test_late_events_do_not_win_in_the_expected_rows():
    batches = gen.generate()
    rides = es.expected_rides(batches)
    assignments = es.expected_assignments(batches)
    # Stale images carry marks no real event has: a 1.00 fare, a 'D-stale-' driver.
    assert all(r["fare"] != Decimal("1.00") for r in rides)
    assert all(not a["driver_id"].startswith("D-stale-") for a in assignments)
    assert {r["status"] for r in rides} == {"requested", "cancelled", "completed"}
    # ... while the batches do contain them.
    assert any(e["fare"] == "1.00" for b in batches for e in b.ride_events)
    assert any(e["driver_id"].startswith("D-stale-") for b in batches for e in b.assignment_events)


def test_a_ride_whose_latest_event_is_a_delete_is_absent():
    batches = gen.generate()
    deleted = {e["ride_id"] for b in batches for e in b.ride_events if e["op"] == "d"}
    assert deleted
    assert not deleted & {r["ride_id"] for r in es.expected_rides(batches)}
    # A ride deleted in batch 2 was present after batch 1.
    assert deleted & {r["ride_id"] for r in es.expected_rides(batches[:1])}


def test_late_ride_events_are_stale_images_that_lose():
    batches = gen.generate()
    late = es.late_ride_events(batches)
    assert late
    final = {r["ride_id"]: r for r in es.expected_rides(batches)}
    for e in late:
        # Older than what batch 1 delivered, so the final row (if the ride still exists) is not this event.
        assert e["ride_id"] not in final or final[e["ride_id"]]["event_ts"] > e["event_ts"]

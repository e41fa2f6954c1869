"""Generate the ride-hailing change streams, batch by batch, deterministically (seeded RNG, fixed clock).

Two CDC-style streams, as the app's extractor would deliver them:

- ``ride_events`` (JSON Lines): one row image per change of a ride, ``op`` = ``c`` (created), ``u``
  (updated: status requested -> completed/cancelled, fare set) or ``d`` (deleted, carrying the last image).
- ``assignment_events`` (CSV): a driver assigned to a ride, re-dispatched to another driver (update) or the
  assignment revoked (``deleted=true``).

Every batch also carries what makes change streams hard: events out of order within the file, exact
duplicates (redeliveries), late events (an event older than one already delivered for the same key, which
must not win), and deletes (a deleted ride cascades to its assignment in the same batch).

No event for a key is generated after the batch that deleted it (deleted rides stay deleted, as in the
app). The tables keep a deleted key as a flagged row, so even a late event older than the delete could not
bring it back; ``expected_state.py`` checks "latest event_ts per key wins, deletes remove" by folding the
batches two ways.

Usage: ``python generate_batches.py [--out DIR] [--seed N] [--batches N] [--rides-per-batch N]``.
Writes ``DIR/batch_NNN/ride_events.jsonl`` and ``DIR/batch_NNN/assignment_events.csv``.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import random
import shutil
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

CITIES = ("sf", "nyc", "la", "chi")
ZONES_PER_CITY = 6
DRIVERS_PER_CITY = 12
RIDERS = 80
# Batch 1's window starts here; each batch covers the next hour of app activity (late evening, so the
# assignments' day partitions change within the demo's two batches).
EPOCH = dt.datetime(2026, 1, 5, 23, 20, 0, tzinfo=dt.timezone.utc)
BATCH_WINDOW = dt.timedelta(hours=1)

RIDE_COLUMNS = ("batch_id", "op", "ride_id", "rider_id", "city", "requested_at", "pickup_zone",
                "dropoff_zone", "status", "fare", "event_ts")
ASSIGNMENT_COLUMNS = ("batch_id", "assignment_id", "ride_id", "driver_id", "assigned_at", "event_ts", "deleted")

DEFAULT_SEED = 7
DEFAULT_BATCHES = 2
DEFAULT_RIDES_PER_BATCH = 60


def iso(t: dt.datetime) -> str:
    """The wire format of every timestamp in the streams: ISO 8601 UTC with a ``Z``."""
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Batch:
    batch_id: int
    ride_events: list[dict[str, Any]] = field(default_factory=list)
    assignment_events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Ride:
    """The source system's current row of a ride (what the next change event carries)."""
    ride_id: str
    rider_id: str
    city: str
    requested_at: dt.datetime
    pickup_zone: str
    dropoff_zone: str
    status: str = "requested"
    fare: Decimal | None = None
    last_ts: dt.datetime | None = None
    deleted: bool = False
    assignment: _Assignment | None = None

    def image(self, op: str, ts: dt.datetime, batch_id: int) -> dict[str, Any]:
        return {"batch_id": batch_id, "op": op, "ride_id": self.ride_id, "rider_id": self.rider_id,
                "city": self.city, "requested_at": iso(self.requested_at), "pickup_zone": self.pickup_zone,
                "dropoff_zone": self.dropoff_zone, "status": self.status,
                "fare": None if self.fare is None else str(self.fare), "event_ts": iso(ts)}


@dataclass
class _Assignment:
    assignment_id: str
    ride_id: str
    driver_id: str
    assigned_at: dt.datetime
    last_ts: dt.datetime | None = None
    deleted: bool = False

    def image(self, ts: dt.datetime, batch_id: int, *, deleted: bool = False) -> dict[str, Any]:
        return {"batch_id": batch_id, "assignment_id": self.assignment_id, "ride_id": self.ride_id,
                "driver_id": self.driver_id, "assigned_at": iso(self.assigned_at), "event_ts": iso(ts),
                "deleted": "true" if deleted else "false"}


class _Simulation:
    """The app's source database, changed batch by batch; every change is emitted as an event."""

    def __init__(self, seed: int, rides_per_batch: int) -> None:
        self.rng = random.Random(seed)
        self.rides_per_batch = rides_per_batch
        self.rides: dict[str, _Ride] = {}
        self.next_ride = 1

    # -- helpers ---------------------------------------------------------------------------------------
    def _seconds(self, lo: int, hi: int) -> dt.timedelta:
        return dt.timedelta(seconds=self.rng.randint(lo, hi))

    def _driver(self, city: str) -> str:
        return f"D-{city}-{self.rng.randint(1, DRIVERS_PER_CITY):02d}"

    def _emit_ride(self, batch: Batch, ride: _Ride, op: str, ts: dt.datetime) -> None:
        # Event times of one key strictly increase, so the newest event is never tied with another.
        assert ride.last_ts is None or ts > ride.last_ts
        ride.last_ts = ts
        batch.ride_events.append(ride.image(op, ts, batch.batch_id))

    def _emit_assignment(self, batch: Batch, a: _Assignment, ts: dt.datetime, *, deleted: bool = False) -> None:
        assert a.last_ts is None or ts > a.last_ts
        a.last_ts = ts
        batch.assignment_events.append(a.image(ts, batch.batch_id, deleted=deleted))

    def _live(self) -> list[_Ride]:
        return [r for r in self.rides.values() if not r.deleted]

    # -- one batch -------------------------------------------------------------------------------------
    def batch(self, batch_id: int) -> Batch:
        rng = self.rng
        batch = Batch(batch_id)
        start = EPOCH + (batch_id - 1) * BATCH_WINDOW
        end = start + BATCH_WINDOW
        # Rides that already had an event in an earlier batch: the candidates for late events.
        previously_seen = [r for r in self._live() if r.last_ts is not None]

        # 1. New ride requests, some assigned, completed or cancelled within the same hour.
        for _ in range(self.rides_per_batch):
            city = rng.choice(CITIES)
            ride = _Ride(
                ride_id=f"R{self.next_ride:05d}", rider_id=f"U{rng.randint(1, RIDERS):03d}", city=city,
                requested_at=start + self._seconds(0, 2400),
                pickup_zone=f"{city}-z{rng.randint(1, ZONES_PER_CITY)}",
                dropoff_zone=f"{city}-z{rng.randint(1, ZONES_PER_CITY)}")
            self.next_ride += 1
            self.rides[ride.ride_id] = ride
            self._emit_ride(batch, ride, "c", ride.requested_at)
            self._progress(batch, ride, end)

        # 2. Rides from earlier batches still open move on (assigned, then completed or cancelled).
        for ride in previously_seen:
            if ride.status == "requested":
                self._progress(batch, ride, end, earliest=start)

        # 3. Re-dispatch: some assignments move to another driver.
        for ride in self._live():
            a = ride.assignment
            if a is not None and not a.deleted and ride.status == "requested" and rng.random() < 0.3:
                ts = max(a.last_ts, start) + self._seconds(60, 900)
                if ts < end:
                    a.driver_id = self._driver(ride.city)
                    self._emit_assignment(batch, a, ts)

        # 4. Deletes (test rides, erasure requests), cascading to the ride's assignment.
        live = self._live()
        for ride in rng.sample(live, k=max(1, len(live) // 15)):
            ts = max(ride.last_ts, start) + self._seconds(30, 600)
            if ride.assignment is not None and not ride.assignment.deleted:
                ts = max(ts, ride.assignment.last_ts + self._seconds(1, 60))
            self._emit_ride(batch, ride, "d", ts)
            ride.deleted = True
            if ride.assignment is not None and not ride.assignment.deleted:
                self._emit_assignment(batch, ride.assignment, ts, deleted=True)
                ride.assignment.deleted = True

        # 5. Late events: an older image of a ride or assignment delivered only now. Only for keys
        # never deleted (see the module docstring) and already delivered in an earlier batch.
        late_rides = [r for r in previously_seen if not r.deleted]
        for i, ride in enumerate(rng.sample(late_rides, k=min(len(late_rides), self.rides_per_batch // 8))):
            self._emit_late_ride(batch, ride, resend=i % 2 == 0)
        late_assignments = [r.assignment for r in late_rides
                            if r.assignment is not None and not r.assignment.deleted
                            and r.assignment.last_ts < start]
        # Half of them stale driver swaps (possible only for re-dispatched assignments), half redeliveries.
        k = self.rides_per_batch // 12
        swapped = [a for a in late_assignments if a.last_ts > a.assigned_at]
        unswapped = [a for a in late_assignments if a.last_ts == a.assigned_at]
        picks = rng.sample(swapped, k=min(len(swapped), (k + 1) // 2))
        picks += rng.sample(unswapped, k=min(len(unswapped), k - len(picks)))
        for a in picks:
            self._emit_late_assignment(batch, a)

        # 6. Redeliveries: exact duplicates within the batch.
        for events in (batch.ride_events, batch.assignment_events):
            events.extend([dict(e) for e in rng.sample(events, k=max(1, len(events) // 20))])
            # 7. Delivery order is not event order.
            rng.shuffle(events)
        return batch

    def _progress(self, batch: Batch, ride: _Ride, end: dt.datetime, *, earliest: dt.datetime | None = None) -> None:
        """Assign a driver and maybe finish the ride, as far as the batch's hour reaches."""
        rng = self.rng
        now = max(ride.last_ts, earliest or ride.last_ts)
        if ride.assignment is None and rng.random() < 0.75:
            assigned_at = now + self._seconds(20, 300)
            if assigned_at >= end:
                return
            ride.assignment = _Assignment(assignment_id=f"A{ride.ride_id[1:]}", ride_id=ride.ride_id,
                                          driver_id=self._driver(ride.city), assigned_at=assigned_at)
            self._emit_assignment(batch, ride.assignment, assigned_at)
            now = assigned_at
        roll = rng.random()
        if roll < 0.15:
            ts = now + self._seconds(10, 600)
            if ts < end:
                ride.status, ride.fare = "cancelled", (Decimal("5.00") if ride.assignment else None)
                self._emit_ride(batch, ride, "u", ts)
        elif roll < 0.65 and ride.assignment is not None:
            ts = now + self._seconds(300, 1800)
            if ts < end:
                ride.status = "completed"
                ride.fare = Decimal(rng.randint(700, 6500)) / 100
                self._emit_ride(batch, ride, "u", ts)

    def _emit_late_ride(self, batch: Batch, ride: _Ride, *, resend: bool) -> None:
        """A stale image: the original request re-sent, or an update stamped before the newest one."""
        if resend or ride.last_ts == ride.requested_at:
            # The 'requested' image exactly as first delivered (a redelivery across batches).
            stale = _Ride(**{**ride.__dict__, "status": "requested", "fare": None, "assignment": None})
            ts = ride.requested_at
        else:
            # A bogus status stamped between request and the newest event: must lose to the newest.
            span = int((ride.last_ts - ride.requested_at).total_seconds())
            ts = ride.requested_at + dt.timedelta(seconds=self.rng.randint(0, span - 1))
            stale = _Ride(**{**ride.__dict__, "assignment": None})
            stale.status = "cancelled" if ride.status != "cancelled" else "completed"
            stale.fare = Decimal("1.00")
        # Equal only for a ride whose request is its newest event: then the image is an exact redelivery.
        assert ts < ride.last_ts or stale.image("c", ts, 0) == ride.image("c", ride.last_ts, 0)
        batch.ride_events.append(stale.image("u" if stale.status != "requested" else "c", ts, batch.batch_id))

    def _emit_late_assignment(self, batch: Batch, a: _Assignment) -> None:
        """The assignment's first image (its original driver may differ) re-sent, or a stale driver swap."""
        span = int((a.last_ts - a.assigned_at).total_seconds())
        ts = a.assigned_at if span == 0 else a.assigned_at + dt.timedelta(seconds=self.rng.randint(0, span - 1))
        stale = _Assignment(**{**a.__dict__, "driver_id": f"D-stale-{self.rng.randint(1, 9)}"})
        assert ts < a.last_ts or (span == 0 and ts == a.last_ts)
        if ts == a.last_ts:
            stale.driver_id = a.driver_id  # an exact redelivery: nothing stale to lose, nothing to win
        batch.assignment_events.append(stale.image(ts, batch.batch_id))


def generate(seed: int = DEFAULT_SEED, batches: int = DEFAULT_BATCHES,
             rides_per_batch: int = DEFAULT_RIDES_PER_BATCH) -> list[Batch]:
    """The batches, in delivery order; the same arguments always give the same events."""
    sim = _Simulation(seed, rides_per_batch)
    return [sim.batch(b) for b in range(1, batches + 1)]


def batch_dir(out: Path, batch_id: int) -> Path:
    return Path(out) / f"batch_{batch_id:03d}"


def write(batches: list[Batch], out: Path) -> list[Path]:
    """Write each batch's two files under ``out`` (replacing whatever was there); returns the batch dirs."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    dirs = []
    for batch in batches:
        d = batch_dir(out, batch.batch_id)
        d.mkdir(parents=True)
        with open(d / "ride_events.jsonl", "w", encoding="utf-8") as f:
            for e in batch.ride_events:
                f.write(json.dumps({c: e[c] for c in RIDE_COLUMNS}) + "\n")
        with open(d / "assignment_events.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=ASSIGNMENT_COLUMNS)
            w.writeheader()
            w.writerows(batch.assignment_events)
        dirs.append(d)
    return dirs


def read(out: Path, upto: int | None = None) -> list[Batch]:
    """Read written batches back (all, or batches 1..upto), as the raw strings they hold."""
    batches = []
    for d in sorted(Path(out).glob("batch_*")):
        batch_id = int(d.name.split("_")[1])
        if upto is not None and batch_id > upto:
            continue
        with open(d / "ride_events.jsonl", encoding="utf-8") as f:
            rides = [json.loads(line) for line in f if line.strip()]
        with open(d / "assignment_events.csv", encoding="utf-8", newline="") as f:
            assignments = [{**row, "batch_id": int(row["batch_id"])} for row in csv.DictReader(f)]
        batches.append(Batch(batch_id, rides, assignments))
    return batches


def main(argv: list[str] | None = None) -> None:
    default_out = Path(__file__).resolve().parents[1] / "data" / "batches"
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=default_out)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--batches", type=int, default=DEFAULT_BATCHES)
    p.add_argument("--rides-per-batch", type=int, default=DEFAULT_RIDES_PER_BATCH)
    args = p.parse_args(argv)
    batches = generate(args.seed, args.batches, args.rides_per_batch)
    for d, b in zip(write(batches, args.out), batches):
        print(f"{d}: {len(b.ride_events)} ride events, {len(b.assignment_events)} assignment events")


if __name__ == "__main__":
    main()

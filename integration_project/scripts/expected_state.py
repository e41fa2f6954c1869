"""The rows the dbt models must hold after batches 1..N, computed in plain Python from the generated events.

Independent of the SQL: the rule of the scenario is "per key, the event with the latest event_ts wins; if
that event is a delete, the key is gone". ``apply_batches`` folds the batches the way the hoodpy tables do
(combine within a batch, then upsert with event-time ordering, deletes leaving no tombstone);
``latest_wins`` applies the rule to all events at once. They agree exactly when the generator kept its
invariant (no event for a key after the batch that deleted it), which the unit tests check.

Rows are dicts of typed Python values (``datetime`` in UTC, ``Decimal`` fares, ``date`` partitions).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

try:  # imported as integration_project.scripts.expected_state (tests) or run next to the generator
    from . import generate_batches as gen
except ImportError:  # pragma: no cover
    import generate_batches as gen  # type: ignore[no-redef]

Row = dict[str, Any]

RIDE_COLUMNS = ("ride_id", "rider_id", "city", "requested_at", "pickup_zone", "dropoff_zone", "status",
                "fare", "event_ts", "batch_id")
ASSIGNMENT_COLUMNS = ("assignment_id", "ride_id", "driver_id", "assigned_at", "assigned_date", "event_ts",
                      "batch_id")
MATCH_COLUMNS = ("ride_id", "city", "rider_id", "assignment_id", "driver_id", "status", "requested_at",
                 "assigned_at", "wait_seconds", "fare")


def parse_ts(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


def typed_ride(e: dict[str, Any]) -> Row:
    """A ride event as the staging model types it (plus ``is_deleted``)."""
    return {"ride_id": e["ride_id"], "rider_id": e["rider_id"], "city": e["city"],
            "requested_at": parse_ts(e["requested_at"]), "pickup_zone": e["pickup_zone"],
            "dropoff_zone": e["dropoff_zone"], "status": e["status"],
            "fare": None if e["fare"] is None else Decimal(e["fare"]).quantize(Decimal("0.01")),
            "event_ts": parse_ts(e["event_ts"]), "batch_id": int(e["batch_id"]), "is_deleted": e["op"] == "d"}


def typed_assignment(e: dict[str, Any]) -> Row:
    assigned_at = parse_ts(e["assigned_at"])
    return {"assignment_id": e["assignment_id"], "ride_id": e["ride_id"], "driver_id": e["driver_id"],
            "assigned_at": assigned_at, "assigned_date": assigned_at.date(), "event_ts": parse_ts(e["event_ts"]),
            "batch_id": int(e["batch_id"]), "is_deleted": str(e["deleted"]).lower() == "true"}


def latest_wins(events: Iterable[Row], key: str) -> dict[str, Row]:
    """Per key the event with the largest event_ts (on a tie, the later delivered: a redelivery); keys whose
    latest event is a delete are absent."""
    latest: dict[str, Row] = {}
    for e in events:
        cur = latest.get(e[key])
        if cur is None or e["event_ts"] >= cur["event_ts"]:
            latest[e[key]] = e
    return {k: e for k, e in latest.items() if not e["is_deleted"]}


def apply_batches(batches: Iterable[list[Row]], key: str) -> dict[str, Row]:
    """Fold batch after batch like an upsert with event-time ordering (a stored row with a larger event_ts
    survives; a delete removes the row and leaves nothing behind)."""
    table: dict[str, Row] = {}
    for events in batches:
        combined: dict[str, Row] = {}
        for e in events:  # within a batch the largest event_ts wins
            cur = combined.get(e[key])
            if cur is None or e["event_ts"] >= cur["event_ts"]:
                combined[e[key]] = e
        for k, e in combined.items():
            stored = table.get(k)
            if stored is not None and stored["event_ts"] > e["event_ts"]:
                continue
            if e["is_deleted"]:
                table.pop(k, None)
            else:
                table[k] = e
    return table


def _project(rows: Iterable[Row], columns: tuple[str, ...]) -> list[Row]:
    return [{c: r[c] for c in columns} for r in rows]


def _rides_events(batches: list[gen.Batch]) -> list[list[Row]]:
    return [[typed_ride(e) for e in b.ride_events] for b in batches]


def _assignment_events(batches: list[gen.Batch]) -> list[list[Row]]:
    return [[typed_assignment(e) for e in b.assignment_events] for b in batches]


def _fold(per_batch: list[list[Row]], key: str,
          fold: Callable[..., dict[str, Row]]) -> dict[str, Row]:
    return fold(per_batch, key) if fold is apply_batches else fold([e for b in per_batch for e in b], key)


def expected_rides(batches: list[gen.Batch], *, fold: Callable[..., dict[str, Row]] = latest_wins) -> list[Row]:
    """Rows of the ``rides`` model, sorted by ride_id."""
    rows = _fold(_rides_events(batches), "ride_id", fold)
    return _project((rows[k] for k in sorted(rows)), RIDE_COLUMNS)


def expected_assignments(batches: list[gen.Batch], *,
                         fold: Callable[..., dict[str, Row]] = latest_wins) -> list[Row]:
    """Rows of the ``driver_assignments`` model, sorted by assignment_id."""
    rows = _fold(_assignment_events(batches), "assignment_id", fold)
    return _project((rows[k] for k in sorted(rows)), ASSIGNMENT_COLUMNS)


def expected_matches(batches: list[gen.Batch]) -> list[Row]:
    """Rows of ``ride_matches``: each ride with its live driver assignment, sorted by ride_id."""
    rides = {r["ride_id"]: r for r in expected_rides(batches)}
    out = []
    for a in expected_assignments(batches):
        r = rides.get(a["ride_id"])
        if r is None:
            continue
        out.append({"ride_id": r["ride_id"], "city": r["city"], "rider_id": r["rider_id"],
                    "assignment_id": a["assignment_id"], "driver_id": a["driver_id"], "status": r["status"],
                    "requested_at": r["requested_at"], "assigned_at": a["assigned_at"],
                    "wait_seconds": int((a["assigned_at"] - r["requested_at"]).total_seconds()),
                    "fare": r["fare"]})
    return sorted(out, key=lambda m: m["ride_id"])


def summary(batches: list[gen.Batch]) -> dict[str, int]:
    """What the batches contain that makes them hard: late events, duplicates, deletes."""
    counts = {"ride_events": 0, "assignment_events": 0, "duplicates": 0, "late_events": 0, "deletes": 0}
    newest: dict[tuple[str, str], dt.datetime] = {}
    for b in batches:
        for kind, events, key, typer in (("ride_events", b.ride_events, "ride_id", typed_ride),
                                         ("assignment_events", b.assignment_events, "assignment_id",
                                          typed_assignment)):
            counts[kind] += len(events)
            seen = set()
            typed = [typer(e) for e in events]
            for raw, e in zip(events, typed):
                fingerprint = tuple(sorted((k, str(v)) for k, v in raw.items()))
                counts["duplicates"] += fingerprint in seen
                seen.add(fingerprint)
                counts["deletes"] += e["is_deleted"]
            for e in typed:  # late: older than an event of the same key delivered in an earlier batch
                prev = newest.get((kind, e[key]))
                counts["late_events"] += prev is not None and e["event_ts"] < prev
            for e in typed:
                k = (kind, e[key])
                newest[k] = max(newest.get(k, e["event_ts"]), e["event_ts"])
    return counts


def late_ride_events(batches: list[gen.Batch]) -> list[Row]:
    """Typed ride events of the last batch that are older than an event an earlier batch delivered for
    the same ride and differ from it (stale images, not redeliveries), sorted by ride_id."""
    newest: dict[str, Row] = {}
    for b in batches[:-1]:
        for e in map(typed_ride, b.ride_events):
            if e["ride_id"] not in newest or e["event_ts"] >= newest[e["ride_id"]]["event_ts"]:
                newest[e["ride_id"]] = e
    late = [e for e in map(typed_ride, batches[-1].ride_events)
            if e["ride_id"] in newest and e["event_ts"] < newest[e["ride_id"]]["event_ts"]
            and (e["status"], e["fare"]) != (newest[e["ride_id"]]["status"], newest[e["ride_id"]]["fare"])]
    return sorted(late, key=lambda e: e["ride_id"])

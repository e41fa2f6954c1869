"""The rows the dbt models must hold after batches 1..N, computed in plain Python from the generated events.

Independent of the SQL: the rule of the scenario is "per key, the event with the latest event_ts wins; if
that event is a delete, the key is gone". ``apply_batches`` folds the batches the way the hoodpy tables do
(combine within a batch, then upsert with event-time ordering; a delete is stored as a row flagged
is_deleted, so an older event cannot bring the key back); ``latest_wins`` applies the rule to all events
at once. The unit tests check that they agree. The tables' live rows (``not is_deleted``) are the expected
rows; ``ride_matches`` and ``daily_city_summary`` are computed from them (the full recompute their
change-fed builds must equal), and ``batch_changes`` tells which keys each batch's upsert rewrote: the
records a change read of that commit returns.

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
SUMMARY_COLUMNS = ("ride_date", "city", "matched_rides", "completed_rides", "cancelled_rides", "revenue",
                   "total_wait_seconds")


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


def _combined(events: Iterable[Row], key: str) -> dict[str, Row]:
    """Per key the batch's event that wins within the batch: the largest event_ts (a tie: the later one)."""
    combined: dict[str, Row] = {}
    for e in events:
        cur = combined.get(e[key])
        if cur is None or e["event_ts"] >= cur["event_ts"]:
            combined[e[key]] = e
    return combined


def _fold_batches(batches: Iterable[list[Row]], key: str) -> tuple[dict[str, Row], list[set[str]]]:
    """The stored rows (tombstones included) after upserting batch after batch with event-time ordering (a
    stored row with a larger event_ts survives, an equal one is replaced), and per batch the keys it wrote."""
    table: dict[str, Row] = {}
    written: list[set[str]] = []
    for events in batches:
        keys = set()
        for k, e in _combined(events, key).items():
            stored = table.get(k)
            if stored is None or e["event_ts"] >= stored["event_ts"]:
                table[k] = e
                keys.add(k)
        written.append(keys)
    return table, written


def apply_batches(batches: Iterable[list[Row]], key: str) -> dict[str, Row]:
    """Fold batch after batch like the tables' upserts; the live rows (deleted keys stay only as tombstones)."""
    table, _ = _fold_batches(batches, key)
    return {k: e for k, e in table.items() if not e["is_deleted"]}
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


def expected_summary(batches: list[gen.Batch]) -> list[Row]:
    """Rows of ``daily_city_summary``: the matches per request day and city, sorted by (day, city)."""
    groups: dict[tuple[dt.date, str], Row] = {}
    for m in expected_matches(batches):
        day = m["requested_at"].date()
        g = groups.setdefault((day, m["city"]), {
            "ride_date": day, "city": m["city"], "matched_rides": 0, "completed_rides": 0, "cancelled_rides": 0,
            "revenue": Decimal("0.00"), "total_wait_seconds": 0})
        g["matched_rides"] += 1
        g["completed_rides"] += m["status"] == "completed"
        g["cancelled_rides"] += m["status"] == "cancelled"
        g["revenue"] += m["fare"] if m["status"] == "completed" else 0
        g["total_wait_seconds"] += m["wait_seconds"]
    return [groups[k] for k in sorted(groups)]


def batch_changes(batches: list[gen.Batch]) -> list[dict[str, set[str]]]:
    """Per batch, the keys whose stored row its upserts rewrote: ``rides`` (ride ids), ``driver_assignments``
    (assignment ids) and ``ride_matches`` (the ride ids either touched; that model rewrites each)."""
    _, rides = _fold_batches(_rides_events(batches), "ride_id")
    _, assignments = _fold_batches(_assignment_events(batches), "assignment_id")
    ride_of = {e["assignment_id"]: e["ride_id"] for b in _assignment_events(batches) for e in b}
    return [{"rides": r, "driver_assignments": a, "ride_matches": r | {ride_of[k] for k in a}}
            for r, a in zip(rides, assignments, strict=True)]


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

"""requested -> inflight -> completed: the only code that writes instant files under .hoodie/.

The completed file is published whole and only once (put-if-absent where the storage has it, see
``Storage.publish``) so a reader either sees a whole, valid completed instant or none; requested and
inflight files are invisible to readers anyway. Before it is published, a metadata table hoodpy does not
maintain is removed (:mod:`hoodpy.timeline.metadata_table`).
"""

from __future__ import annotations

from hoodpy.errors import IllegalInstantTransitionError
from hoodpy.storage import Storage
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.metadata_table import remove_stale_metadata_table
from hoodpy.timeline.timeline import METAFOLDER


def _rel(instant: Instant) -> str:
    return f"{METAFOLDER}/{instant.file_name}"


def _require(storage: Storage, instant: Instant) -> None:
    if not storage.exists(_rel(instant)):
        raise IllegalInstantTransitionError(instant, f"{_rel(instant)} does not exist")


def create_requested(storage: Storage, instant_time: str, action: Action, data: bytes = b"") -> Instant:
    """Write ``<t>.<action>.requested`` (savepoints have no requested state: they start inflight)."""
    state = State.INFLIGHT if action == Action.SAVEPOINT else State.REQUESTED
    instant = Instant(instant_time, action, state)
    completed = instant.with_state(State.COMPLETED)
    if storage.exists(_rel(completed)):
        raise IllegalInstantTransitionError(instant, "the instant is already completed")
    storage.write_atomic(_rel(instant), data)
    return instant


def transition_to_inflight(storage: Storage, requested: Instant, data: bytes = b"") -> Instant:
    if requested.state != State.REQUESTED:
        raise IllegalInstantTransitionError(requested, "only a requested instant can become inflight")
    _require(storage, requested)
    inflight = requested.with_state(State.INFLIGHT)
    storage.write_atomic(_rel(inflight), data)
    return inflight


def complete(storage: Storage, inflight: Instant, data: bytes) -> Instant:
    """Publish the completed instant; from here on readers see the instant's files."""
    if inflight.state != State.INFLIGHT:
        raise IllegalInstantTransitionError(inflight, "only an inflight instant can complete")
    _require(storage, inflight)
    completed = inflight.with_state(State.COMPLETED)
    # A metadata table another writer left would be stale once this instant is visible (see metadata_table).
    remove_stale_metadata_table(storage)
    # Put-if-absent (local link, S3 If-None-Match): of two processes completing one instant, one wins.
    if not storage.publish(_rel(completed), data):
        raise IllegalInstantTransitionError(inflight, "the instant is already completed")
    return completed


def delete_pending(storage: Storage, instant: Instant) -> None:
    """Remove the requested and inflight files of an instant that never completed (rollback's last step)."""
    if storage.exists(_rel(instant.with_state(State.COMPLETED))):
        raise IllegalInstantTransitionError(instant, "a completed instant cannot be deleted as pending")
    # Inflight first: a crash in between leaves a requested instant, which is still recognisably pending.
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(_rel(instant.with_state(state)))


def delete_completed(storage: Storage, instant: Instant) -> None:
    """Remove a completed instant with its inflight and requested files (deleting a savepoint).

    Completed first, as Hudi reverts to inflight before deleting: a crash in between leaves a pending instant.
    """
    for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
        storage.delete(_rel(instant.with_state(state)))


def delete_archived(storage: Storage, instant: Instant) -> None:
    """Remove an instant that archival has copied into .hoodie/archived (requested and inflight first, so a
    crash leaves the completed instant, still valid, on the active timeline)."""
    if instant.state != State.COMPLETED:
        raise IllegalInstantTransitionError(instant, "only completed instants are archived")
    for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
        storage.delete(_rel(instant.with_state(state)))

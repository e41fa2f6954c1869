"""requested -> inflight -> completed: the only code that writes instant files under .hoodie/.

The completed file is published whole and only once (put-if-absent where the storage has it, see
``Storage.publish``) so a reader either sees a whole, valid completed instant or none; requested and
inflight files are invisible to readers anyway. Before it is published, a metadata table the caller did not
bring in step with the instant is removed (:mod:`hoodpy.timeline.metadata_table`; writers complete their
instants through :func:`hoodpy.metadata_table.writer.complete_instant`, which updates it).
"""

from __future__ import annotations

from dataclasses import replace

from hoodpy.errors import IllegalInstantTransitionError
from hoodpy.storage import Storage
from hoodpy.timeline.instant import LAYOUT_2, Action, Instant, State, new_instant_time, timeline_folder
from hoodpy.timeline.metadata_table import remove_stale_metadata_table
from hoodpy.timeline.timeline import read_layout


def _rel(instant: Instant) -> str:
    return instant.path


def _require(storage: Storage, instant: Instant) -> None:
    if not storage.exists(_rel(instant)):
        raise IllegalInstantTransitionError(instant, f"{_rel(instant)} does not exist")


def completed_file(storage: Storage, instant: Instant) -> Instant | None:
    """The completed form of ``instant`` if its file exists (in layout 2 the name holds a completion time
    that only a listing finds)."""
    if instant.layout != LAYOUT_2:
        completed = instant.with_state(State.COMPLETED)
        return completed if storage.exists(_rel(completed)) else None
    for candidate in (instant.with_state(State.COMPLETED, c) for c in _completion_times(storage, instant)):
        return candidate
    return None


def _completion_times(storage: Storage, instant: Instant) -> list[str]:
    prefix = f"{instant.timestamp}_"
    suffix = f".{instant.completed_action}"
    return sorted(name[len(prefix):-len(suffix)]
                  for name in (f.path.rsplit("/", 1)[-1] for f in storage.list_files(timeline_folder(LAYOUT_2)))
                  if name.startswith(prefix) and name.endswith(suffix))


def create_requested(storage: Storage, instant_time: str, action: Action, data: bytes = b"", *,
                     layout: int | None = None, clustering: bool = False) -> Instant:
    """Write ``<t>.<action>.requested`` (savepoints have no requested state: they start inflight) in the
    table's timeline layout (read from its properties unless given)."""
    state = State.INFLIGHT if action == Action.SAVEPOINT else State.REQUESTED
    layout = read_layout(storage) if layout is None else layout
    instant = Instant(instant_time, action, state, layout=layout, clustering=clustering)
    if completed_file(storage, instant) is not None:
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


def complete(storage: Storage, inflight: Instant, data: bytes, *, metadata_table_updated: bool = False) -> Instant:
    """Publish the completed instant; from here on readers see the instant's files. ``metadata_table_updated``:
    the caller brought the metadata table in step with the instant (else it is removed)."""
    if inflight.state != State.INFLIGHT:
        raise IllegalInstantTransitionError(inflight, "only an inflight instant can complete")
    _require(storage, inflight)
    if inflight.layout == LAYOUT_2:
        if completed_file(storage, inflight) is not None:
            raise IllegalInstantTransitionError(inflight, "the instant is already completed")
        # Layout 2 names the completed file after its completion time: a fresh time, later than any issued
        # in this process and than the instant's own.
        completed = inflight.with_state(State.COMPLETED, new_instant_time(after=inflight.timestamp))
    else:
        completed = inflight.with_state(State.COMPLETED)
    if not metadata_table_updated:
        # A metadata table not updated would be stale once this instant is visible (see metadata_table).
        remove_stale_metadata_table(storage)
    # Put-if-absent (local link, S3 If-None-Match): of two processes completing one instant, one wins.
    if not storage.publish(_rel(completed), data):
        raise IllegalInstantTransitionError(inflight, "the instant is already completed")
    return completed


def delete_pending(storage: Storage, instant: Instant) -> None:
    """Remove the requested and inflight files of an instant that never completed (rollback's last step)."""
    if completed_file(storage, instant) is not None:
        raise IllegalInstantTransitionError(instant, "a completed instant cannot be deleted as pending")
    # Inflight first: a crash in between leaves a requested instant, which is still recognisably pending.
    for state in (State.INFLIGHT, State.REQUESTED):
        for form in _pending_forms(instant):
            storage.delete(_rel(form.with_state(state)))


def _pending_forms(instant: Instant) -> list[Instant]:
    """The instant, and for a commit also the compaction it may have completed: a compaction's pending files
    are ``<t>.compaction.requested`` / ``.inflight`` (Hudi reverts a completed compaction to them)."""
    return [instant, replace(instant, action=Action.COMPACTION)] if instant.action == Action.COMMIT else [instant]


def revert_to_requested(storage: Storage, inflight: Instant) -> Instant:
    """Back from inflight to requested (a failed compaction attempt, whose plan runs again): the inflight file
    goes, as Java's revertInstantFromInflightToRequested does in timeline layout 1."""
    if inflight.state != State.INFLIGHT:
        raise IllegalInstantTransitionError(inflight, "only an inflight instant can revert to requested")
    requested = inflight.with_state(State.REQUESTED)
    _require(storage, requested)
    storage.delete(_rel(inflight))
    return requested


def delete_completed(storage: Storage, instant: Instant) -> None:
    """Remove a completed instant with its inflight and requested files (deleting a savepoint).

    Completed first, as Hudi reverts to inflight before deleting: a crash in between leaves a pending instant.
    """
    completed = completed_file(storage, instant)
    if completed is not None:
        storage.delete(_rel(completed))
    for state in (State.INFLIGHT, State.REQUESTED):
        storage.delete(_rel(instant.with_state(state)))


def delete_archived(storage: Storage, instant: Instant) -> None:
    """Remove an instant that archival has copied into .hoodie/archived (requested and inflight first, so a
    crash leaves the completed instant, still valid, on the active timeline)."""
    if instant.state != State.COMPLETED:
        raise IllegalInstantTransitionError(instant, "only completed instants are archived")
    for state in (State.REQUESTED, State.INFLIGHT):
        for form in _pending_forms(instant):
            storage.delete(_rel(form.with_state(state)))
    storage.delete(_rel(instant))

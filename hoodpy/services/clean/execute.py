"""Executing a saved clean plan: delete its files, then complete ``<t>.clean`` (Avro HoodieCleanMetadata).

The plan is re-read from ``<t>.clean.requested`` (or ``.clean.inflight``, which holds the same plan); nothing
is re-planned, so a clean that crashed half-way is finished by running the same plan again. A file already
gone counts as deleted (a re-run after a crash finds the files the first attempt removed); a file that still
exists after its delete failed is recorded in ``failedDeleteFiles``.

Example:
    >>> result = execute_clean(table.storage, "20240101000000000")
    >>> result.total_files_deleted
    4
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from hoodpy.config import HoodieConfig
from hoodpy.errors import IllegalInstantTransitionError, PlanNotFoundError
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.services.clean.plan import CleanerPlan
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.avro_models import AvroModel, deserialize, serialize
from hoodpy.timeline.clean_records import CleanResult, clean_metadata  # noqa: F401 (re-exported)
from hoodpy.timeline.instant import Action, Instant, State, validate_instant_time
from hoodpy.timeline.timeline import read_layout
from hoodpy.transaction.transaction import WriteTransaction

_DELETE_THREADS = 8


def _clean_instant(storage: Storage, instant_time: str, state: State = State.REQUESTED) -> Instant:
    """A clean instant in the table's timeline layout."""
    return Instant(instant_time, Action.CLEAN, state, layout=read_layout(storage))


def relative_path(storage: Storage, path: str) -> str:
    """A path as a plan records it (full, maybe with a scheme) relative to the base path."""
    for prefix in (storage.root + "/", storage.uri("") + "/", "file:" + storage.root + "/"):
        if path.startswith(prefix):
            return path[len(prefix):]
    return path


def load_clean_plan(storage: Storage, instant_time: str) -> CleanerPlan:
    """The plan saved at ``instant_time`` (requested or inflight); PlanNotFoundError when there is none."""
    validate_instant_time(instant_time)
    requested = _clean_instant(storage, instant_time)
    for state in (State.REQUESTED, State.INFLIGHT):
        rel = requested.with_state(state).path
        if storage.exists(rel):
            data = storage.read_bytes(rel)
            if data:
                body = deserialize(AvroModel.CLEANER_PLAN, data, source=storage.full_path(rel))
                return CleanerPlan.from_avro(body, lambda p: relative_path(storage, p), instant_time)
    raise PlanNotFoundError(f"No clean plan at {instant_time}: {requested.path} does not exist")


def save_clean_plan(storage: Storage, plan: CleanerPlan) -> Instant:
    data = serialize(AvroModel.CLEANER_PLAN, plan.to_avro(storage.full_path))
    return transitions.create_requested(storage, plan.instant_time, Action.CLEAN, data)


def _delete(storage: Storage, rel: str) -> bool:
    """True when the file is gone afterwards (deleted now, or already absent)."""
    try:
        storage.delete(rel)
    except OSError:
        pass
    return not storage.exists(rel)


def execute_clean(storage: Storage, instant_time: str, config: HoodieConfig | None = None) -> CleanResult:
    """Run the clean plan saved at ``instant_time`` and complete the clean instant (with its metadata-table
    update, under the table lock ``config`` asks for: that update must not race a writer's)."""
    started = time.monotonic()
    plan = load_clean_plan(storage, instant_time)
    requested = _clean_instant(storage, instant_time)
    if transitions.completed_file(storage, requested) is not None:
        raise PlanNotFoundError(f"Clean {instant_time} is already completed")
    inflight = requested.with_state(State.INFLIGHT)
    if not storage.exists(inflight.path):
        inflight = transitions.transition_to_inflight(storage, requested, storage.read_bytes(requested.path))
    jobs = [(p, rel) for p, paths in plan.files_per_partition.items() for rel in paths]
    with ThreadPoolExecutor(max_workers=_DELETE_THREADS) as pool:
        outcomes = list(pool.map(lambda job: _delete(storage, job[1]), jobs))
    result = CleanResult(instant_time=instant_time, policy=plan.policy,
                         earliest_retained_instant=plan.earliest_commit_to_retain,
                         last_completed_commit_timestamp=plan.last_completed_commit_timestamp)
    for (partition, rel), ok in zip(jobs, outcomes, strict=True):
        (result.deleted_files if ok else result.failed_files).setdefault(partition, []).append(rel)
    for partition in plan.partitions_to_delete:
        storage.delete_dir(partition)
        if not storage.exists(partition):
            result.deleted_partitions.append(partition)
    result.time_taken_ms = int((time.monotonic() - started) * 1000)
    try:
        with WriteTransaction(storage, config or HoodieConfig(), merge_on_read=True).locked():
            complete_instant(storage, inflight, serialize(AvroModel.CLEAN_METADATA, clean_metadata(plan, result)),
                             config)
    except IllegalInstantTransitionError:
        # Another process ran the same plan (e.g. two writers finishing a pending clean) and completed it
        # first: the deletes are idempotent, so the clean is done either way.
        if transitions.completed_file(storage, requested) is None:
            raise
    return result


def read_clean_metadata(storage: Storage, instant_time: str) -> dict:
    instant = _clean_instant(storage, instant_time)
    rel = (transitions.completed_file(storage, instant) or instant.with_state(State.COMPLETED)).path
    return deserialize(AvroModel.CLEAN_METADATA, storage.read_bytes(rel), source=storage.full_path(rel))

"""Finishing a write on the driver: reconcile files, write partition metadata, complete the instant;
or abort it, removing everything it wrote."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

from hoodpy.config import HoodieConfig
from hoodpy.file_group.fs_view import list_base_files
from hoodpy.file_group.markers import marked_files, marked_log_files
from hoodpy.file_group.naming import PARTITION_METAFILE, join_partition
from hoodpy.metadata_table.writer import complete_instant
from hoodpy.storage import Storage
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, Instant
from hoodpy.timeline.metadata import SCHEMA_KEY, CommitMetadata, WriteStat
from hoodpy.timeline.timeline import instant_temp_dir


def write_stats_from_rows(rows: Iterable[dict]) -> list[WriteStat]:
    return [
        WriteStat(
            file_id=r["file_id"], path=r["path"], partition_path=r["partition_path"],
            prev_commit=r["prev_commit"], num_writes=r["num_writes"], num_deletes=r["num_deletes"],
            num_update_writes=r["num_update_writes"], num_inserts=r["num_inserts"],
            total_write_bytes=r["file_size"], file_size_in_bytes=r["file_size"],
            total_create_time=r["create_time_ms"], total_upsert_time=r["upsert_time_ms"],
            log_version=r.get("log_version"), log_offset=r.get("log_offset") or 0,
            base_file=r.get("base_file") or "",
            log_files=list(r["log_files"]) if r.get("log_files") is not None else None,
            cdc_stats=dict(zip(r["cdc_paths"], r["cdc_sizes"], strict=True))
            if r.get("cdc_paths") is not None else None,
        )
        for r in rows
    ]


def partition_metadata_text(instant_time: str, partition_path: str) -> bytes:
    depth = len(partition_path.split("/")) if partition_path else 0
    stamp = datetime.now(timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    return f"#partition metadata\n#{stamp}\ncommitTime={instant_time}\npartitionDepth={depth}\n".encode()


def ensure_partition_metadata(storage: Storage, instant_time: str, partitions: Iterable[str]) -> None:
    for partition in sorted(set(partitions)):
        rel = join_partition(partition, PARTITION_METAFILE)
        if not storage.exists(rel):
            storage.write_atomic(rel, partition_metadata_text(instant_time, partition))


def remove_stray_files(storage: Storage, instant_time: str, keep: set[str], partitions: Iterable[str]) -> int:
    """Delete base files of this instant, and log files its markers name, that no write stat names (failed or
    duplicate task attempts)."""
    removed = 0
    for bf in list_base_files(storage, partitions):
        if bf.instant_time == instant_time and bf.path not in keep:
            storage.delete(bf.path)
            removed += 1
    for rel in marked_log_files(storage, instant_time):
        if rel not in keep and storage.delete(rel):
            removed += 1
    return removed


def commit(storage: Storage, inflight: Instant, metadata: CommitMetadata, config: HoodieConfig | None = None,
           ) -> Instant:
    """Complete the write (its metadata table first, as ``config`` and the table say)."""
    stats = metadata.write_stats
    partitions = {s.partition_path for s in stats}
    written = {s.path for s in stats if s.path} | {p for s in stats for p in (s.cdc_stats or {})}
    remove_stray_files(storage, inflight.timestamp, written, partitions)
    ensure_partition_metadata(storage, inflight.timestamp, partitions)
    if inflight.action == Action.DELTACOMMIT:
        # Log files' markers stay until the instant is complete (as Java removes them after the commit): until
        # then they are how a rollback finds the log files, whose names do not carry the instant.
        completed = complete_instant(storage, inflight, metadata.to_bytes(inflight.layout), config)
        storage.delete_dir(instant_temp_dir(inflight.timestamp))
        return completed
    storage.delete_dir(instant_temp_dir(inflight.timestamp))  # before completing: a crash leaves it to rollback
    return complete_instant(storage, inflight, metadata.to_bytes(inflight.layout), config)


def new_commit_metadata(operation_type: str, stats: list[WriteStat], schema_json: str,
                        replaced: dict[str, list[str]] | None = None,
                        extra: Mapping[str, str] | None = None) -> CommitMetadata:
    metadata = CommitMetadata(operation_type, extra_metadata={**(extra or {}), SCHEMA_KEY: schema_json},
                              partition_to_replace_file_ids=replaced)
    for stat in stats:
        metadata.add_write_stat(stat)
    return metadata


def commit_extra_metadata(options: Mapping[str, object] | None, prefix: str) -> dict[str, str]:
    """The write options a commit stores in its extraMetadata: those whose key starts with ``prefix``
    (hoodie.datasource.write.commitmeta.key.prefix). An empty prefix stores none (it would store every option)."""
    if not prefix:
        return {}
    return {str(k): str(v) for k, v in (options or {}).items() if str(k).startswith(prefix) and v is not None}


def abort(storage: Storage, instant: Instant) -> int:
    """Remove every base file and log file the instant wrote and its pending instant files; the table is as
    before.

    The markers go first: a task of the failed job may still be writing, and one that closes its file after
    that deletes it (:func:`~hoodpy.file_group.markers.confirm_marked`); one that closed it before is seen by
    the listing that follows. One that marks a file after this is found by the next write
    (:func:`~hoodpy.services.rollback.remove_abandoned_files`)."""
    marked = marked_files(storage, instant.timestamp)
    storage.delete_dir(instant_temp_dir(instant.timestamp))
    removed = 0
    for bf in list_base_files(storage):
        if bf.instant_time == instant.timestamp:
            removed += storage.delete(bf.path)
    removed += sum(storage.delete(rel) for rel in marked)
    transitions.delete_pending(storage, instant)
    return removed

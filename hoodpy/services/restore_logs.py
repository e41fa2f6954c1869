"""What a restore does to merge-on-read log files (table version 6), decided before it rolls anything back.

A log file is named after its slice's base instant, not after the deltacommits that appended to it; each block
names its instant in its header. For the instants a restore rolls back:

* a log file goes when its slice's base instant is rolled back (the slice goes with it), or when every data and
  delete block it holds belongs to rolled-back instants (the deltacommits wrote the whole file);
* a log file that also holds blocks of kept instants stays, and the slice gets, per rolled-back instant, a new
  log file (next version, write token ``1-0-1``) holding one rollback command block, as Java's rollback writes
  it: readers (hoodpy, hudi-rs, Java) then skip that instant's blocks even once it is older than the active
  timeline, where a missing instant would otherwise read as archived, hence committed.

A slice already holding a rollback block for an instant (a restore interrupted after writing it) gets none again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from hoodpy.file_group.file_group import LogFile
from hoodpy.file_group.naming import LogFileName, join_partition
from hoodpy.storage import Storage
from hoodpy.timeline import log_format

SliceId = tuple[str, str, str]  # (partition path, file id, base instant)


@dataclass
class LogRollback:
    """Per rolled-back instant: the log files to delete and the slices to write a rollback block into."""

    deletes: dict[str, list[LogFile]] = field(default_factory=dict)
    rollback_blocks: dict[str, list[SliceId]] = field(default_factory=dict)
    next_version: dict[SliceId, int] = field(default_factory=dict)  # the next free log version per slice


def _scan(storage: Storage, lf: LogFile) -> tuple[set[str], set[str]]:
    """(instants of the data and delete blocks, targets of the rollback blocks) of one log file."""
    instants: set[str] = set()
    targets: set[str] = set()
    for block in log_format.read_blocks(storage.read_bytes(lf.path), storage.full_path(lf.path)):
        if block.block_type == log_format.COMMAND_BLOCK:
            targets.add(block.header.get(log_format.TARGET_INSTANT_TIME) or "")
        elif block.instant_time:
            instants.add(block.instant_time)
    return instants, targets


def plan_log_rollback(storage: Storage, log_files: Iterable[LogFile], restored: set[str]) -> LogRollback:
    """How the log files of the table are rolled back for the instants ``restored``."""
    out = LogRollback()
    slices: dict[SliceId, list[tuple[LogFile, set[str], set[str]]]] = {}
    for lf in log_files:
        sid = (lf.partition_path, lf.file_id, lf.base_instant_time)
        slices.setdefault(sid, []).append((lf, *_scan(storage, lf)))
        out.next_version[sid] = max(out.next_version.get(sid, 1), lf.name.version + 1)
    for sid, files in sorted(slices.items()):
        kept_blocks: set[str] = set()
        rolled_back_already: set[str] = set()
        for lf, instants, targets in files:
            rolled_back_already |= targets
            mine = instants & restored
            if sid[2] in restored or (instants and instants <= restored):
                owner = max({sid[2]} & restored | mine)  # rolled back first (newest first)
                out.deletes.setdefault(owner, []).append(lf)
            else:
                kept_blocks |= mine
        for instant in sorted(kept_blocks - rolled_back_already):
            out.rollback_blocks.setdefault(instant, []).append(sid)
    return out


def write_rollback_block(storage: Storage, plan: LogRollback, sid: SliceId, restore_time: str, target: str,
                         ) -> tuple[str, int]:
    """Write a new log file of slice ``sid`` holding the rollback block of ``target``; (relative path, size)."""
    version = plan.next_version.get(sid, 1)
    plan.next_version[sid] = version + 1
    partition, file_id, base_instant = sid
    name = LogFileName(file_id, base_instant, version, log_format.ROLLBACK_WRITE_TOKEN).name
    data = log_format.rollback_command_block(restore_time, target)
    rel = join_partition(partition, name)
    storage.write_bytes(rel, data)
    return rel, len(data)

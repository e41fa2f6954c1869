"""Planning a clean: which file slices no retained query needs any more (Hudi 0.14's CleanPlanner), pure.

A version of a file group is a file slice: its base file and, on merge-on-read tables, the log files written
on top of it (named after its base instant). The policies count slices and delete a slice's files together.

Policies (``hoodie.cleaner.policy``):

* KEEP_LATEST_COMMITS: the earliest commit to retain ``E`` is the ``commits.retained``-th newest completed
  commit (never later than the oldest pending write). Per file group the latest version, the latest version
  before ``E`` and every version at or after ``E`` stay: a query as of any instant ``>= E`` finds its files.
* KEEP_LATEST_BY_HOURS: the same, with ``E`` the first commit at or after ``now - hours.retained``.
* KEEP_LATEST_FILE_VERSIONS: the newest ``fileversions.retained`` versions of each file group stay.

File groups replaced by clustering or insert_overwrite are deleted entirely once their replacecommit is
before ``E`` (any replaced group, for KEEP_LATEST_FILE_VERSIONS). Whatever the policy, no slice is deleted
that a savepoint lists, that a pending clustering plan reads, that a pending compaction merges (Java keeps
the slice before a pending compaction's instant), or that a pending write may read (the version of each file
group as of the write's instant); logs written on top of a pending compaction are not committed yet and stay.
A partition left with no file group at all (every group replaced before ``E``, nothing pending) is deleted
too, as Hudi does.

Example:
    >>> plan = plan_clean(timeline, files, HoodieConfig.of({"hoodie.cleaner.commits.retained": "2"}))
    >>> sorted(plan.files_per_partition)
    ['city=sf']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

from hoodpy.config import HoodieConfig
from hoodpy.config.clean import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanConfig,
)
from hoodpy.file_group.file_group import BaseFile, LogFile
from hoodpy.file_group.fs_view import slice_instant, slice_instants
from hoodpy.timeline.clean_records import CLEAN_PLAN_VERSION, CleanerPlan  # noqa: F401 (re-exported)
from hoodpy.timeline.instant import Action, Instant, instant_time_of
from hoodpy.timeline.timeline import Timeline

_WRITE_ACTIONS = (Action.COMMIT, Action.DELTACOMMIT, Action.REPLACECOMMIT, Action.COMPACTION)

FileGroupId = tuple[str, str]
GroupFile = BaseFile | LogFile


@dataclass
class Protected:
    """Files a clean must keep whatever the policy says."""

    savepointed_files: set[str] = field(default_factory=set)  # file names listed by savepoints
    pending_clustering_files: set[str] = field(default_factory=set)  # file names a pending plan reads
    pending_write_times: list[str] = field(default_factory=list)  # instants of requested / inflight writes
    # (partition, file id, base instant) of the slices pending compactions merge (Java keeps them whatever
    # the policy: the compaction reads their base and log files).
    pending_compaction_slices: set[tuple[str, str, str]] = field(default_factory=set)

    def names(self) -> set[str]:
        return self.savepointed_files | self.pending_clustering_files


# -- which commit is the earliest to retain ---------------------------------------------------------------
def earliest_commit_to_retain(timeline: Timeline, policy: str, config: HoodieConfig, *,
                              now: datetime | None = None) -> Instant | None:
    """Hudi's CleanerUtils.getEarliestCommitToRetain; None when nothing is old enough to clean by commits."""
    completed = timeline.completed_commits()
    pending = [i for i in timeline.filter(actions=_WRITE_ACTIONS) if not i.is_completed]
    if policy == KEEP_LATEST_COMMITS:
        retained = config.get(CleanConfig.COMMITS_RETAINED)
        if len(completed) <= retained:
            return None
        nth = completed[len(completed) - retained]
        if pending and nth.timestamp > pending[0].timestamp:
            # A pending write may read anything committed before it started.
            before = [i for i in completed if i.timestamp < pending[0].timestamp]
            return before[-1] if before else None
        return nth
    if policy == KEEP_LATEST_BY_HOURS:
        moment = (now or datetime.now(timezone.utc)) - timedelta(hours=config.get(CleanConfig.HOURS_RETAINED))
        cutoff = instant_time_of(moment)
        return next((i for i in timeline.filter(actions=_WRITE_ACTIONS) if i.timestamp >= cutoff), None)
    return None


def is_before_timeline_starts(timeline: Timeline, instant_time: str) -> bool:
    writes = timeline.filter(actions=_WRITE_ACTIONS)
    return not writes or instant_time < writes[0].timestamp


def partitions_written(timeline: Timeline, instants: Iterable[Instant]) -> set[str]:
    """Partitions a set of completed writes wrote or replaced file groups in."""
    out: set[str] = set()
    for instant in instants:
        meta = timeline.commit_metadata(instant)
        out |= set(meta.partition_to_write_stats)
        out |= set(meta.partition_to_replace_file_ids or {})
    return out


def partitions_to_clean(timeline: Timeline, policy: str, earliest: Instant | None, config: HoodieConfig, *,
                        last_clean_earliest: str | None) -> list[str] | None:
    """Partitions to scan: None means every partition (full mode), [] means none.

    Incremental mode (by-commits policies) scans only partitions written by commits in
    [last clean's earliest retained, new earliest retained): only those can hold newly unneeded versions.
    """
    if policy == KEEP_LATEST_FILE_VERSIONS:
        return None
    if earliest is None:
        return []
    if (config.get(CleanConfig.INCREMENTAL_MODE) and last_clean_earliest
            and not is_before_timeline_starts(timeline, last_clean_earliest)):
        window = [i for i in timeline.completed_commits()
                  if last_clean_earliest <= i.timestamp < earliest.timestamp]
        return sorted(partitions_written(timeline, window))
    return None


# -- which files -----------------------------------------------------------------------------------------
def _replace_times(timeline: Timeline) -> dict[FileGroupId, str]:
    """(partition, file id) -> instant of the first completed replacecommit that replaced the group."""
    out: dict[FileGroupId, str] = {}
    for instant in timeline.completed_replacecommits():
        for fg in timeline.commit_metadata(instant).replaced_file_ids():
            out.setdefault(fg, instant.timestamp)
    return out


def _is_committed(timeline: Timeline, instant_time: str, earliest_active: str | None) -> bool:
    # Files older than the active timeline belong to archived, hence committed, instants.
    return timeline.is_completed_write(instant_time) or (earliest_active is not None and instant_time < earliest_active)


@dataclass
class _Version:
    """One file slice of a file group: its base instant and its files (base file and log files)."""

    instant_time: str
    files: list[GroupFile] = field(default_factory=list)


def _slice_as_of(versions: Sequence[_Version], instant_time: str) -> _Version | None:
    candidates = [v for v in versions if v.instant_time <= instant_time]
    return candidates[-1] if candidates else None


def files_to_clean(timeline: Timeline, files: Iterable[GroupFile], policy: str, earliest: Instant | None,
                   config: HoodieConfig, protected: Protected | None = None,
                   ) -> tuple[dict[str, list[GroupFile]], list[str]]:
    """(partition -> files to delete, partitions to delete) for the listed files of some partitions.

    Files are grouped into file slices (a base file and the log files named after its instant, merge-on-read):
    the policies count slices, and a slice goes as a whole, its base file and its log files together, as Java's
    CleanPlanner deletes them. ``files`` may hold uncommitted files (of pending or failed writes, or logs written
    on top of a pending compaction): they are never deleted here, and a partition holding one is never deleted.
    """
    protected = protected or Protected()
    keep_names = protected.names()
    earliest_active = timeline.earliest_instant_time()
    replaced_at = _replace_times(timeline)
    groups: dict[FileGroupId, dict[str, _Version]] = {}
    partitions: set[str] = set()
    pending_in: set[str] = set()
    slice_of: dict[int, str] = {}  # id(file) -> its slice's base instant
    for instant, f in slice_instants(timeline, files):
        slice_of[id(f)] = instant
        partitions.add(f.partition_path)
        if not _is_committed(timeline, slice_instant(f), earliest_active):
            pending_in.add(f.partition_path)
            continue
        slices = groups.setdefault((f.partition_path, f.file_id), {})
        slices.setdefault(instant, _Version(instant)).files.append(f)
    ordered = {fg: sorted(slices.values(), key=lambda v: v.instant_time) for fg, slices in groups.items()}

    def kept_whatever_the_policy(fg: FileGroupId, versions: list[_Version], v: _Version) -> bool:
        if (*fg, v.instant_time) in protected.pending_compaction_slices:
            return True  # a pending compaction reads it
        if any(f.file_name in keep_names for f in v.files):
            return True  # savepointed, or read by a pending clustering
        r = replaced_at.get(fg)
        return any(_slice_as_of(versions, p) is v and (r is None or r > p) for p in protected.pending_write_times)

    e = earliest.timestamp if earliest is not None else None
    by_commits = policy in (KEEP_LATEST_COMMITS, KEEP_LATEST_BY_HOURS)
    if by_commits and e is None:
        return {}, []
    keep_versions = config.get(CleanConfig.FILE_VERSIONS_RETAINED)
    delete: dict[str, list[GroupFile]] = {}
    live_in: set[str] = set()
    late_replace_in: set[str] = set()
    for fg, versions in sorted(ordered.items()):
        partition = fg[0]
        r = replaced_at.get(fg)
        if r is not None:
            if by_commits and r >= e:
                late_replace_in.add(partition)
                continue  # still visible to a retained query
            candidates = list(versions)
        else:
            live_in.add(partition)
            newest_first = list(reversed(versions))
            if by_commits:
                before = [v for v in newest_first if v.instant_time < e]
                spare = {newest_first[0].instant_time} | ({before[0].instant_time} if before else set())
                candidates = [v for v in newest_first if v.instant_time < e and v.instant_time not in spare]
            else:
                candidates = newest_first[keep_versions:]
        for v in candidates:
            if not kept_whatever_the_policy(fg, versions, v):
                delete.setdefault(partition, []).extend(v.files)
    empty_partitions = []
    for partition in sorted(partitions):
        if partition == "" or partition in live_in or partition in pending_in or partition in late_replace_in:
            continue
        in_partition = [f for fg, vs in ordered.items() if fg[0] == partition for v in vs for f in v.files]
        if all(f in delete.get(partition, []) for f in in_partition):
            empty_partitions.append(partition)
    for doomed in delete.values():
        doomed.sort(key=lambda f: (f.file_id, slice_of[id(f)], isinstance(f, LogFile), f.file_name))
    return delete, empty_partitions


def plan_clean(timeline: Timeline, files: Iterable[GroupFile], config: HoodieConfig, *,
               protected: Protected | None = None, scanned_partitions: Iterable[str] | None = None,
               now: datetime | None = None) -> CleanerPlan | None:
    """The clean plan for ``files`` (a listing of the partitions to scan), or None if nothing to delete.

    Args:
        timeline: the active timeline.
        files: every base file and log file of the scanned partitions (committed or not).
        config: table options merged with the caller's.
        protected: savepointed, pending-clustering, pending-compaction and pending-write files to keep.
        scanned_partitions: the partitions the listing covers (recorded with empty lists, as Hudi does).
        now: the clock of KEEP_LATEST_BY_HOURS.
    """
    CleanConfig.validate(config)
    policy = CleanConfig.policy(config)
    earliest = earliest_commit_to_retain(timeline, policy, config, now=now)
    delete, empty = files_to_clean(timeline, files, policy, earliest, config, protected)
    last = timeline.last_completed_commit()
    paths = {p: () for p in (scanned_partitions or ())}
    paths.update({p: tuple(f.path for f in doomed) for p, doomed in delete.items()})
    plan = CleanerPlan(policy=policy, earliest_instant_to_retain=earliest,
                       last_completed_commit_timestamp=last.timestamp if last else "",
                       files_per_partition=dict(sorted(paths.items())), partitions_to_delete=tuple(empty))
    return None if plan.is_empty else plan


def with_instant(plan: CleanerPlan, instant_time: str) -> CleanerPlan:
    return replace(plan, instant_time=instant_time)

"""When a writer schedules a compaction on its own (``hoodie.compact.inline`` / ``hoodie.compact.schedule.inline``):
Hudi 0.14's ScheduleCompactionActionExecutor.needCompact.

The count is of deltacommits, in any state, after the last completed commit or replacecommit (a compaction
completes as a commit), and the clock starts at that commit, or at the first deltacommit when there is none
(CompactionUtils.getDeltaCommitsSinceLatestCompaction). With no deltacommit and no commit there is nothing
to compact. The strategies (``hoodie.compact.inline.trigger.strategy``):

* NUM_COMMITS: at least ``max.delta.commits`` deltacommits;
* TIME_ELAPSED: at least ``max.delta.seconds`` from that start to the new compaction instant;
* NUM_AND_TIME / NUM_OR_TIME: both / either.

Example:
    >>> should_compact(timeline, HoodieConfig.of({"hoodie.compact.inline.max.delta.commits": "2"}),
    ...                "20250101000000000")
    True
"""

from __future__ import annotations

from hoodpy.config import HoodieConfig
from hoodpy.config.compaction import NUM_AND_TIME, NUM_COMMITS, NUM_OR_TIME, TIME_ELAPSED, CompactionConfig
from hoodpy.timeline.instant import Action, State, parse_instant_time
from hoodpy.timeline.timeline import Timeline


def deltacommits_since_last_compaction(timeline: Timeline) -> tuple[int, str] | None:
    """(deltacommits since the last completed commit or replacecommit, the instant the clock starts at), or
    None when the timeline has neither."""
    done = timeline.filter(actions=[Action.COMMIT, Action.REPLACECOMMIT], states=[State.COMPLETED])
    deltas = timeline.filter(actions=[Action.DELTACOMMIT])
    if done:
        last = done[-1].timestamp
        return sum(1 for d in deltas if d.timestamp > last), last
    if deltas:
        return len(deltas), deltas[0].timestamp
    return None


def oldest_instant_to_retain_for_compaction(timeline: Timeline, max_delta_commits: int) -> str | None:
    """The oldest instant archival must keep on a merge-on-read table so that the NUM_COMMITS trigger still
    counts the deltacommits since the last compaction (Java's CompactionUtils.getOldestInstantToRetainForCompaction):
    with fewer than ``max_delta_commits`` of them, the instant the count starts at; otherwise the oldest of the
    newest ``max_delta_commits``. None when the timeline has no commit or deltacommit."""
    info = deltacommits_since_last_compaction(timeline)
    if info is None:
        return None
    count, start = info
    if count < max_delta_commits:
        return start
    since = [d.timestamp for d in timeline.filter(actions=[Action.DELTACOMMIT]) if d.timestamp >= start]
    return since[count - max_delta_commits]


def _seconds(instant_time: str) -> int:
    return int(parse_instant_time(instant_time).timestamp() * 1000) // 1000


def should_compact(timeline: Timeline, config: HoodieConfig, instant_time: str) -> bool:
    """Whether the trigger strategy schedules a compaction at ``instant_time`` (the new compaction's)."""
    info = deltacommits_since_last_compaction(timeline)
    if info is None:
        return False
    count, start = info
    enough = count >= config.get(CompactionConfig.INLINE_MAX_DELTA_COMMITS)
    late = _seconds(instant_time) - _seconds(start) >= config.get(CompactionConfig.INLINE_MAX_DELTA_SECONDS)
    strategy = config.get(CompactionConfig.INLINE_TRIGGER_STRATEGY)
    return {NUM_COMMITS: enough, TIME_ELAPSED: late, NUM_AND_TIME: enough and late,
            NUM_OR_TIME: enough or late}[strategy]

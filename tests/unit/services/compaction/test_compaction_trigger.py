"""When writers schedule a compaction on their own: Hudi's trigger strategies decided on timelines."""

from __future__ import annotations

import pytest

from hoodpy.config import HoodieConfig
from hoodpy.errors import InvalidConfigError
from hoodpy.services.compaction.trigger import deltacommits_since_last_compaction, should_compact
from hoodpy.timeline.instant import Action, Instant, State
from hoodpy.timeline.timeline import Timeline

DONE = State.COMPLETED


def _timeline(*instants: tuple[str, Action, State]) -> Timeline:
    return Timeline(None, [Instant(t, a, s) for t, a, s in instants])


def _config(strategy: str, commits: int = 3, seconds: int = 600) -> HoodieConfig:
    return HoodieConfig.of({"hoodie.compact.inline.trigger.strategy": strategy,
                            "hoodie.compact.inline.max.delta.commits": commits,
                            "hoodie.compact.inline.max.delta.seconds": seconds})


# Three deltacommits (one still inflight: Hudi counts every state) after a compaction that completed at 10:00.
AFTER_COMPACTION = _timeline(
    ("20250101090000000", Action.DELTACOMMIT, DONE),
    ("20250101100000000", Action.COMPACTION, State.INFLIGHT), ("20250101100000000", Action.COMMIT, DONE),
    ("20250101100100000", Action.DELTACOMMIT, DONE), ("20250101100200000", Action.DELTACOMMIT, DONE),
    ("20250101100300000", Action.DELTACOMMIT, State.INFLIGHT),
    ("20250101100400000", Action.COMPACTION, State.REQUESTED),  # a pending compaction does not reset the count
)
# Two deltacommits and no compaction yet: the clock starts at the first deltacommit.
NO_COMPACTION = _timeline(("20250101100000000", Action.DELTACOMMIT, DONE),
                          ("20250101100500000", Action.DELTACOMMIT, DONE),
                          ("20250101100600000", Action.CLEAN, DONE))


def test_count_and_clock_start():
    assert deltacommits_since_last_compaction(AFTER_COMPACTION) == (3, "20250101100000000")
    assert deltacommits_since_last_compaction(NO_COMPACTION) == (2, "20250101100000000")
    assert deltacommits_since_last_compaction(_timeline(("20250101100000000", Action.CLEAN, DONE))) is None
    # A replacecommit (insert overwrite, clustering) restarts the count as a compaction does (Hudi 0.14's
    # getCommitTimeline holds both).
    replaced = _timeline(("20250101100000000", Action.DELTACOMMIT, DONE),
                         ("20250101100100000", Action.REPLACECOMMIT, DONE),
                         ("20250101100200000", Action.DELTACOMMIT, DONE))
    assert deltacommits_since_last_compaction(replaced) == (1, "20250101100100000")


@pytest.mark.parametrize("strategy, commits, seconds, at, expected", [
    # NUM_COMMITS: 3 deltacommits since the compaction
    ("NUM_COMMITS", 3, 600, "20250101100500000", True),
    ("NUM_COMMITS", 4, 600, "20250101100500000", False),
    # TIME_ELAPSED: from 10:00:00 to the new instant
    ("TIME_ELAPSED", 9, 600, "20250101100959999", False),
    ("TIME_ELAPSED", 9, 600, "20250101101000000", True),
    # NUM_AND_TIME: both
    ("NUM_AND_TIME", 3, 600, "20250101100500000", False),
    ("NUM_AND_TIME", 3, 600, "20250101101000000", True),
    ("NUM_AND_TIME", 4, 600, "20250101110000000", False),
    # NUM_OR_TIME: either
    ("NUM_OR_TIME", 4, 600, "20250101100500000", False),
    ("NUM_OR_TIME", 3, 600, "20250101100500000", True),
    ("NUM_OR_TIME", 4, 600, "20250101101000000", True),
])
def test_strategies_after_a_compaction(strategy, commits, seconds, at, expected):
    assert should_compact(AFTER_COMPACTION, _config(strategy, commits, seconds), at) is expected


def test_defaults_and_first_compaction():
    # Defaults: NUM_COMMITS, 5 deltacommits.
    five = _timeline(*[(f"2025010110000{i}000", Action.DELTACOMMIT, DONE) for i in range(5)])
    assert should_compact(five, HoodieConfig.of({}), "20250101110000000")
    assert not should_compact(NO_COMPACTION, HoodieConfig.of({}), "20250101110000000")
    assert should_compact(NO_COMPACTION, _config("NUM_COMMITS", commits=2), "20250101110000000")
    assert should_compact(NO_COMPACTION, _config("TIME_ELAPSED", seconds=300), "20250101100500000")
    assert not should_compact(NO_COMPACTION, _config("TIME_ELAPSED", seconds=301), "20250101100500000")
    # Nothing written yet: never.
    assert not should_compact(_timeline(), _config("NUM_OR_TIME", 1, 1), "20250101110000000")


def test_bad_strategy_is_refused():
    with pytest.raises(InvalidConfigError, match="hoodie.compact.inline.trigger.strategy"):
        should_compact(NO_COMPACTION, _config("SOMETIMES"), "20250101110000000")

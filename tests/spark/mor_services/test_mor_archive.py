"""Archival of Java-written merge-on-read tables (v6) compacted by hoodpy: the deltacommits before the
compaction move to .hoodie/archived, the compaction commit (and its plan) stays while the NUM_COMMITS trigger
counts from it; hoodpy and hudi-rs read the same rows as before, snapshot and read-optimized."""

from __future__ import annotations

import pytest

from java_samples import file_digests
from mor_samples import NONPARTITIONED, PARTITIONED, compacted_sample
from hoodpy.errors import InvalidConfigError
from hoodpy.timeline.archived import archived_instants
from hoodpy.timeline.instant import Action

pytestmark = [pytest.mark.spark, pytest.mark.compat]

KEEP = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}


@pytest.mark.parametrize("name", [NONPARTITIONED, PARTITIONED])
def test_deltacommits_before_the_compaction_are_archived(spark, tmp_path, name):
    sample = compacted_sample(spark, name, tmp_path)
    table = sample.table
    deltas = [i.timestamp for i in table.timeline.filter(actions=[Action.DELTACOMMIT])]
    assert len(deltas) == 2
    result = table.archive(KEEP)
    assert [(i.timestamp, i.action) for i in result.archived] == [(d, Action.DELTACOMMIT) for d in deltas]
    assert [i.timestamp for i in archived_instants(table.storage)] == deltas
    hoodie = {p.name for p in (sample.path / ".hoodie").iterdir()}
    assert not {n for n in hoodie if n.startswith(tuple(deltas))}
    c = sample.compaction_time
    assert {f"{c}.compaction.requested", f"{c}.compaction.inflight", f"{c}.commit"} <= hoodie
    assert (sample.path / ".hoodie" / ".aux" / f"{c}.compaction.requested").exists()
    assert sample.reads_as_hudi_rs() == sample.rows
    # Nothing more: the compaction commit is where the trigger's count starts.
    assert table.archive(KEEP).archived == []


def test_bad_input_leaves_the_table_unchanged(spark, tmp_path):
    sample = compacted_sample(spark, NONPARTITIONED, tmp_path)
    before = file_digests(sample.path)
    with pytest.raises(InvalidConfigError, match="hoodie.keep.max.commits"):
        sample.table.archive({"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "2"})
    with pytest.raises(InvalidConfigError, match="hoodie.compact.inline.trigger.strategy"):
        sample.table.archive({**KEEP, "hoodie.compact.inline.trigger.strategy": "NEVER"})
    assert file_digests(sample.path) == before

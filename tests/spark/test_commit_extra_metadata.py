"""Write options under hoodie.datasource.write.commitmeta.key.prefix land in the commit's extraMetadata: how a
pipeline (a dbt model reading changes, a streaming sink) keeps its checkpoint in the same commit as its data."""

from __future__ import annotations

import json

import pytest

from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id int, ts long, v string"


def test_prefixed_options_are_stored_and_the_latest_is_found(spark, tmp_path):
    path = str(tmp_path / "t")
    t = HoodieTable.create(spark, path, table_name="extra_t", record_key_fields=["id"], precombine_field="ts")
    c1 = t.upsert(spark.createDataFrame([(1, 1, "a")], DDL), options={"_checkpoint": "b1", "other": "x"})
    c2 = t.upsert(spark.createDataFrame([(2, 1, "b")], DDL))
    # A different prefix: only keys under it are stored.
    c3 = t.upsert(spark.createDataFrame([(3, 1, "c")], DDL),
                  options={"hoodie.datasource.write.commitmeta.key.prefix": "pipe.", "pipe.offset": 7,
                           "_checkpoint": "not stored"})

    timeline = Timeline.load(t.storage)
    by_time = {i.timestamp: i for i in timeline.completed_commits()}
    stored = {ts: json.loads(t.storage.read_bytes(i.path))["extraMetadata"] for ts, i in by_time.items()}
    assert stored[c1.instant_time]["_checkpoint"] == "b1" and "other" not in stored[c1.instant_time]
    assert "schema" in stored[c1.instant_time]
    assert set(stored[c2.instant_time]) == {"schema"}
    assert stored[c3.instant_time]["pipe.offset"] == "7" and "_checkpoint" not in stored[c3.instant_time]

    instant, value = timeline.latest_extra_metadata("_checkpoint")
    assert (instant.timestamp, value) == (c1.instant_time, "b1")  # c2 and c3 stored none
    assert timeline.latest_extra_metadata("pipe.offset")[1] == "7"
    assert timeline.latest_extra_metadata("absent") is None

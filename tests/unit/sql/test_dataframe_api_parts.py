"""The Spark-free parts of format("hoodpy"): option spellings, save modes, time-travel values, what a builder's
recorded calls say, filters from a SQL condition, the commit window of an incremental read, and which batch a
streaming sink committed last."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa
import pytest
from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

from hoodpy.errors import InvalidConfigError
from hoodpy.read.query import CommitWindow
from sql_ext.datasource.batch_read import as_of_instant
from sql_ext.datasource.batch_write import WriteRequest, save_mode
from sql_ext.datasource.builders import Recorded
from sql_ext.datasource.options import hoodpy_options
from sql_ext.datasource.stream_sink import (
    QUERY_ID_KEY,
    SINK_CHECKPOINT_KEY,
    committed_batch,
)
from sql_ext.pushdown import condition_filters


def test_option_keys_are_spelled_as_declared_and_values_as_text():
    given = {"HOODIE.DATASOURCE.STREAMING.STARTOFFSET": "latest", "hoodie.table.name": "t",
             "Hoodie.Datasource.Write.RecordKey.Field": "id", "checkpointLocation": "/cp", "flag": True, "gone": None}
    assert hoodpy_options(given) == {"hoodie.datasource.streaming.startOffset": "latest", "hoodie.table.name": "t",
                                     "hoodie.datasource.write.recordkey.field": "id", "checkpointLocation": "/cp",
                                     "flag": "true"}


def test_save_modes_and_operations():
    assert [save_mode(m) for m in (None, "Append", "overwrite", "IGNORE", "error", "default", "errorifexists")] == [
        "errorifexists", "append", "overwrite", "ignore", "errorifexists", "errorifexists", "errorifexists"]
    with pytest.raises(InvalidConfigError, match="expected append"):
        save_mode("upsert")
    assert WriteRequest.of("/t", "append", {}).operation == "upsert"
    request = WriteRequest.of("/t", "append", {"hoodie.datasource.write.operation": "BULK_INSERT"}, ["city"])
    assert request.operation == "bulk_insert"
    assert request.options["hoodie.datasource.write.partitionpath.field"] == "city"
    assert WriteRequest.of("/t", "append", {"hoodie.datasource.write.operation": "delete_partition"}).operation \
        == "delete_partition"
    with pytest.raises(InvalidConfigError, match="hoodie.datasource.write.operation"):
        WriteRequest.of("/t", "append", {"hoodie.datasource.write.operation": "delete_partitions"})
    with pytest.raises(InvalidConfigError, match="partitionBy"):
        WriteRequest.of("/t", "append", {"hoodie.datasource.write.partitionpath.field": "a"}, ["b"])


def test_as_of_instant_values_as_hudi_reads_them():
    assert as_of_instant("20210728141108100") == "20210728141108100"
    assert as_of_instant("20210728141108") == "20210728141108000"
    assert as_of_instant("2021-07-28 14:11:08.200") == "20210728141108200"
    assert as_of_instant("2021-07-28 14:11:08") == "20210728141108000"
    assert as_of_instant("2021-07-28") == "20210728000000000"
    with pytest.raises(InvalidConfigError, match="as.of.instant"):
        as_of_instant("2021-02-30")


class FakeBuilder:
    pass


def test_recorded_calls_say_what_spark_would_use():
    builder = FakeBuilder()
    builder.__dict__["_hoodpy_calls"] = [
        ("option", ("hoodie.table.name", "a"), {}), ("format", ("parquet",), {}), ("mode", ("append",), {}),
        ("options", (), {"hoodie.table.name": "b", "x": 1}), ("format", (), {"source": "HoodPy"}),
        ("mode", (None,), {}), ("partitionBy", (["city", "day"],), {}), ("schema", ("id int",), {})]
    recorded = Recorded.of(builder)
    assert recorded.is_hoodpy and recorded.mode == "append" and recorded.schema == "id int"
    assert recorded.options == {"hoodie.table.name": "b", "x": 1}
    assert recorded.partition_by == ("city", "day")
    assert not Recorded.of(FakeBuilder()).is_hoodpy


def test_filters_from_a_dataframe_condition():
    schema = StructType([StructField("city", StringType()), StructField("fare", DoubleType()),
                         StructField("id", LongType())])
    assert condition_filters("city = 'sf' AND fare >= 3.5 AND id IN (1, 2)", schema) == [
        ("city", "=", "sf"), ("fare", ">=", 3.5), ("id", "in", [1, 2])]
    assert condition_filters("city = 'sf' OR id = 1", schema) == []  # nothing under OR
    assert condition_filters("id = '1'", schema) == []  # a literal of another kind is left to Spark
    assert condition_filters("city = 'sf'; DROP TABLE x", schema) == []
    assert condition_filters("((", schema) == []


def test_commit_window_mask_matches_its_rule():
    window = CommitWindow("00000000000000005", "00000000000000020", frozenset({"00000000000000015"}), True,
                          "00000000000000012")
    times = pa.array(["00000000000000004", "00000000000000006", "00000000000000013", "00000000000000015",
                      "00000000000000021", None])
    assert window.mask(times).to_pylist() == [False, True, False, True, False, False]
    active_only = CommitWindow("00000000000000005", "00000000000000020", frozenset({"00000000000000015"}), False, None)
    assert active_only.mask(times).to_pylist() == [False, False, False, True, False, False]


@dataclass
class _Instant:
    completed_at: str
    extra: dict


class _Timeline:
    def __init__(self, *instants):
        self.instants = list(instants)

    def completed_commits(self):
        return self.instants

    def commit_metadata(self, instant):
        return type("M", (), {"extra_metadata": instant.extra})()


def _commit(at, batches=None, query=None):
    extra = {} if batches is None else {SINK_CHECKPOINT_KEY: json.dumps(batches)}
    if query is not None:
        extra[QUERY_ID_KEY] = query
    return _Instant(at, extra)


def test_the_sink_finds_its_last_batch_newest_commit_first():
    timeline = _Timeline(_commit("1", {"w": "0"}, "q1"), _commit("2", {"w": "1"}, "q1"),
                         _commit("3", {"other": "7"}, "q9"), _commit("4"))  # a clustering, say: no checkpoint
    assert committed_batch(timeline, "w", "q1") == 1
    assert committed_batch(timeline, "w", None) == 1  # no query id known: by batch id alone, as Hudi
    assert committed_batch(timeline, "w", "q2") is None  # another query's batches: nothing of q2's committed
    assert committed_batch(timeline, "other", "q9") == 7
    assert committed_batch(timeline, "missing", "q1") is None

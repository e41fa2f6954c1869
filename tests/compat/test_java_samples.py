"""hoodpy reads the Java Hudi 0.14 sample tables (../shared/hudi-samples) as hudi-rs does, and writes into them.

For each sample: hoodpy's snapshot, time travel as of every completed instant and incremental ranges equal
hudi-rs's (all columns, nested ones included). Then an upsert into a copy (one existing key updated with a
higher ordering value, one new key) must read back as expected with hudi-rs, leave the file groups Java
replaced replaced, and agree with hoodpy's own read. The empty sample reads as an empty DataFrame with the
create schema's columns and takes a first upsert.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

import hudi_rs
from java_samples import unzip_sample
from hudi_rs import COMMIT_TIME, FILE_NAME, META, MODEL_META, PARTITION_PATH, RECORD_KEY
from hoodpy.table import HoodieTable

pytestmark = [pytest.mark.compat, pytest.mark.spark]


@dataclass(frozen=True)
class Sample:
    name: str
    update_key: str  # record key of the row the upsert updates
    new_key: str  # record key of the row the upsert inserts
    new_partition: str  # its partition path
    new_values: dict[str, Any]  # how the new row differs from the updated row (keys, partition fields)


SAMPLES = [
    Sample("v6_nonpartitioned", "2", "1000", "", {"id": 1000}),
    # A new partition for the new key; the composite key keeps its field order.
    Sample("v6_complexkeygen_hivestyle", "id:1,name:Alice", "id:1000,name:Zed", "byteField=40/shortField=300",
           {"id": 1000, "name": "Zed", "byteField": 40}),
    # Partition 10 holds only file groups the Java replacecommit replaced: the new key must land in a new one.
    Sample("v6_simplekeygen_nonhivestyle_overwritetable", "4", "1000", "10", {"id": 1000, "byteField": 10}),
]


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("java_samples")


@pytest.fixture(scope="module", params=SAMPLES, ids=lambda s: s.name)
def sample(request, samples_dir) -> tuple[Sample, str]:
    s: Sample = request.param
    return s, str(unzip_sample(s.name, samples_dir))


def _data_columns(rows: list[dict[str, Any]]) -> list[str]:
    return [c for c in rows[0] if c not in META]


def replaced_file_ids(path: str) -> set[tuple[str, str]]:
    """(partition, file id) pairs the table's completed replacecommits replaced, read from the raw JSON."""
    out = set()
    for f in sorted((Path(path) / ".hoodie").glob("*.replacecommit")):
        body = json.loads(f.read_text())
        for partition, ids in (body.get("partitionToReplaceFileIds") or {}).items():
            out |= {(partition, i) for i in ids}
    return out


def test_snapshot_matches_hudi_rs(spark, sample):
    s, path = sample
    theirs = hudi_rs.snapshot(path)
    assert theirs, "the sample has rows"
    ours = hudi_rs.df_rows(HoodieTable.for_path(spark, path).read())
    assert ours == theirs


def test_time_travel_and_incremental_match_hudi_rs(spark, sample):
    s, path = sample
    table = HoodieTable.for_path(spark, path)
    instants = [i.timestamp for i in table.timeline.completed_commits()]
    assert instants == hudi_rs.completed_instants(path)
    for instant in instants:
        assert hudi_rs.df_rows(table.read(as_of=instant)) == hudi_rs.snapshot(path, as_of=instant), instant
    for start, end in zip(instants, instants[1:]):
        ours = hudi_rs.df_rows(table.read_incremental(start, end))
        assert ours == hudi_rs.incremental(path, start, end), (start, end)


def test_upsert_into_copy(spark, sample, tmp_path):
    s, src = sample
    path = str(tmp_path / s.name)
    shutil.copytree(src, path)
    before = hudi_rs.snapshot(path)
    old_instants = hudi_rs.completed_instants(path)
    replaced = replaced_file_ids(path)
    table = HoodieTable.for_path(spark, path)
    ordering = table.properties["hoodie.table.precombine.field"]
    assert ordering == "longField"

    # The batch comes from the table's own rows, so every complex column type is exactly the table's.
    data = table.read().drop(*META)
    key_filter = F.col(RECORD_KEY) == F.lit(s.update_key)
    source = table.read().filter(key_filter).drop(*META)  # one row: the expectation below would catch more
    updated = source.withColumn("longField", F.col("longField") + F.lit(1000)).withColumn(
        "intField", F.col("intField") + F.lit(7))
    new = updated
    for column, value in s.new_values.items():
        new = new.withColumn(column, F.lit(value).cast(data.schema[column].dataType))
    result = table.upsert(updated.unionByName(new))
    instant = result.instant_time

    # Expected: the hudi-rs rows from before, with the update applied and the new row added.
    columns = list(MODEL_META) + _data_columns(before)
    expected = []
    old_row = None
    for r in before:
        r = {c: r[c] for c in columns}
        if r[RECORD_KEY] == s.update_key:
            old_row = dict(r)
            r.update({"longField": r["longField"] + 1000, "intField": r["intField"] + 7, COMMIT_TIME: instant})
        expected.append(r)
    assert old_row is not None
    new_row = {**old_row, "longField": old_row["longField"] + 1000, "intField": old_row["intField"] + 7,
               **s.new_values, RECORD_KEY: s.new_key, PARTITION_PATH: s.new_partition, COMMIT_TIME: instant}
    expected.append(new_row)

    after = hudi_rs.snapshot(path)
    assert hudi_rs.project(after, columns) == hudi_rs.project(expected, columns)
    # hoodpy agrees with hudi-rs on every column of the new snapshot.
    assert hudi_rs.df_rows(HoodieTable.for_path(spark, path).read()) == after
    assert hudi_rs.completed_instants(path) == [*old_instants, instant]

    # File groups the Java replacecommit replaced stay replaced, in hudi-rs and in hoodpy.
    live_rs = {(r[PARTITION_PATH], r[FILE_NAME].split("_", 1)[0]) for r in after}
    view = HoodieTable.for_path(spark, path).file_system_view()
    live_ours = {(bf.partition_path, bf.file_id) for bf in view.latest_base_files()}
    assert not live_rs & replaced
    assert not live_ours & replaced
    assert live_rs <= live_ours

    # History is untouched: the Java instants read as before, in both readers.
    hoodpy_table = HoodieTable.for_path(spark, path)
    for old in old_instants:
        theirs = hudi_rs.snapshot(path, as_of=old)
        assert theirs == hudi_rs.snapshot(src, as_of=old), old
        assert hudi_rs.df_rows(hoodpy_table.read(as_of=old)) == theirs, old


@pytest.fixture(scope="module")
def empty_sample(samples_dir) -> str:
    return str(unzip_sample("v6_empty", samples_dir))


def test_empty_sample_reads_empty(spark, empty_sample):
    df = HoodieTable.for_path(spark, empty_sample).read()
    assert df.columns == [*META, "id", "name", "isActive"]
    assert [f.dataType.simpleString() for f in df.schema.fields[len(META):]] == ["int", "string", "boolean"]
    assert df.count() == 0
    assert hudi_rs.snapshot(empty_sample) == []
    assert hudi_rs.completed_instants(empty_sample) == []


def test_empty_sample_first_upsert(spark, empty_sample, tmp_path):
    path = str(tmp_path / "v6_empty")
    shutil.copytree(empty_sample, path)
    table = HoodieTable.for_path(spark, path)
    batch = spark.createDataFrame([(1, "Alice", True), (2, "Bob", False)], "id int, name string, isActive boolean")
    instant = table.upsert(batch).instant_time
    expected = [
        {RECORD_KEY: "1", COMMIT_TIME: instant, PARTITION_PATH: "", "id": 1, "name": "Alice", "isActive": True},
        {RECORD_KEY: "2", COMMIT_TIME: instant, PARTITION_PATH: "", "id": 2, "name": "Bob", "isActive": False},
    ]
    columns = [*MODEL_META, "id", "name", "isActive"]
    after = hudi_rs.snapshot(path)
    assert hudi_rs.project(after, columns) == hudi_rs.project(expected, columns)
    assert hudi_rs.df_rows(HoodieTable.for_path(spark, path).read()) == after
    assert hudi_rs.completed_instants(path) == [instant]

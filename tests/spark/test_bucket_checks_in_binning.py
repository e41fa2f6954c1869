"""A BUCKET upsert into an unpartitioned table whose buckets all hold a file group runs no validation job and stores
no batch: the first stage of the merge job, which bins the batch by bucket, checks every record. A null or empty
record key or a null ordering value fails the write there, before any merge (copy-on-write) or log append
(merge-on-read) task starts, with the InvalidRecordError, the table as before (no completed instant, the same files,
hudi-rs reads the old rows); repeated keys are combined by the ordering field in the merge tasks; a table with a
bucket that has no file group yet takes the validating path and creates it."""

from __future__ import annotations

import pytest
from hoodpy_spark_helpers import hudi_rs_rows, rows, timeline_files, tree

from hoodpy.errors import InvalidRecordError
from hoodpy.index.bucket import BucketSpec, bucket_id
from hoodpy.table import HoodieTable
from hoodpy.write import records as rec

pytestmark = pytest.mark.spark

DDL = "id string, ts long, v string, _hoodie_is_deleted boolean"
BUCKETS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
SPEC = BucketSpec(2, ("id",))
TABLE_TYPES = ["COPY_ON_WRITE", "MERGE_ON_READ"]


@pytest.fixture
def validations(monkeypatch):
    """The validation jobs the writes run (rec.validate calls)."""
    calls = []
    original = rec.validate
    monkeypatch.setattr(rec, "validate", lambda *a, **k: calls.append(a) or original(*a, **k))
    return calls


def _keys(bucket: int, n: int, start: int = 0) -> list[str]:
    """``n`` keys of ``bucket``, the first from ``start`` on."""
    out, i = [], start
    while len(out) < n:
        if bucket_id(str(i), SPEC) == bucket:
            out.append(str(i))
        i += 1
    return out


def _table(spark, path, table_type, keys):
    t = HoodieTable.create(spark, path, table_name="bkt_tasks", record_key_fields=["id"], partition_fields=[],
                           precombine_field="ts", table_type=table_type, options=BUCKETS)
    t.upsert(spark.createDataFrame([(k, 1, f"v{k}", False) for k in keys], DDL))
    return t


def _data(t):
    return rows(t.read(), "id", "ts", "v")


@pytest.mark.parametrize("table_type", TABLE_TYPES)
@pytest.mark.parametrize("bad_row, message", [
    ((None, 2, "null-key", False), "a record has a null or empty record key (fields id)"),
    (("", 2, "empty-key", False), "a record has a null or empty record key (fields id)"),
    (("n1", None, "null-ts", False), "a record has a null ordering (precombine) field 'ts' (record key n1)"),
])
def test_a_bad_record_fails_in_the_tasks_and_leaves_the_table_as_it_was(spark, tmp_path, validations, table_type,
                                                                         bad_row, message):
    path = str(tmp_path / "t")
    keys = _keys(0, 3) + _keys(1, 3)
    t = _table(spark, path, table_type, keys)
    before, timeline_before, rows_before = tree(path), timeline_files(path), _data(t)
    instants_before = [i.timestamp for i in t.timeline.instants]
    del validations[:]
    # Updates of both buckets beside the bad record: no merge task of either bucket may start.
    batch = [(k, 2, f"u{k}", False) for k in keys] + [bad_row]
    with pytest.raises(InvalidRecordError) as info:
        t.upsert(spark.createDataFrame(batch, DDL))
    assert message in str(info.value)
    assert validations == []  # refused where the batch is binned, no validation job
    assert [i.timestamp for i in t.timeline.instants] == instants_before  # none completed, none pending
    assert timeline_files(path) == timeline_before
    assert tree(path) == before
    assert _data(t) == rows_before
    assert hudi_rs_rows(path, ["id", "ts", "v"]) == {k: (1, f"v{k}") for k in keys}


def test_a_null_ordering_value_of_a_delete_is_accepted(spark, tmp_path, validations):
    keys = _keys(0, 2) + _keys(1, 2)
    t = _table(spark, str(tmp_path / "t"), "COPY_ON_WRITE", keys)
    del validations[:]
    t.upsert(spark.createDataFrame([(keys[0], None, None, True), (keys[2], 5, "u", False)], DDL))
    assert validations == []
    assert _data(t) == sorted([(keys[1], 1, f"v{keys[1]}"), (keys[2], 5, "u"), (keys[3], 1, f"v{keys[3]}")])


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_repeated_keys_are_combined_by_the_ordering_field_in_the_tasks(spark, tmp_path, validations, table_type):
    path = str(tmp_path / "t")
    b0, b1 = _keys(0, 4), _keys(1, 4)
    t = _table(spark, path, table_type, b0 + b1)
    del validations[:]
    new0, new1 = _keys(0, 1, start=1000)[0], _keys(1, 1, start=1000)[0]
    batch = [(b0[0], 5, "late-wins", False), (b0[0], 3, "older", False),  # larger ts wins
             (b1[0], 4, "first", False), (b1[0], 4, "tie-last", False),  # tie: the later record
             (b0[1], 2, "upserted", False), (b0[1], 2, "deleted", True),  # deleted after its upsert
             (b1[1], 2, "deleted", True), (b1[1], 2, "back", False),  # upserted after its delete
             (new0, 2, "new", False), (new0, 3, "new-3", False),  # an insert, twice
             (new1, 2, "gone", False), (new1, 2, "gone", True)]
    t.upsert(spark.createDataFrame(batch, DDL))
    assert validations == []
    expected = {(k, 1, f"v{k}") for k in b0 + b1 if k not in (b0[0], b0[1], b1[0], b1[1])}
    expected |= {(b0[0], 5, "late-wins"), (b1[0], 4, "tie-last"), (b1[1], 2, "back"), (new0, 3, "new-3")}
    assert _data(t) == sorted(expected)
    assert hudi_rs_rows(path, ["id", "ts", "v"]) == {k: (ts, v) for k, ts, v in expected}
    groups = {fs.file_id for fs in t.file_system_view().latest_file_slices([""])}
    assert sorted(int(f[:8]) for f in groups) == [0, 1]  # still one file group per bucket


@pytest.mark.parametrize("table_type", TABLE_TYPES)
def test_a_bucket_without_a_file_group_is_created_by_the_validating_path(spark, tmp_path, validations,
                                                                        table_type):
    path = str(tmp_path / "t")
    b0, b1 = _keys(0, 3), _keys(1, 2)
    t = _table(spark, path, table_type, b0)  # bucket 1 has no file group yet
    assert validations, "the first write validates"
    del validations[:]
    t.upsert(spark.createDataFrame([(b0[0], 2, "u", False)] + [(k, 2, f"n{k}", False) for k in b1], DDL))
    assert len(validations) == 1  # validated and counted: bucket 1 needs a new file group
    expected = {(b0[0], 2, "u"), (b0[1], 1, f"v{b0[1]}"), (b0[2], 1, f"v{b0[2]}")} | {(k, 2, f"n{k}") for k in b1}
    assert _data(t) == sorted(expected)
    assert hudi_rs_rows(path, ["id", "ts", "v"]) == {k: (ts, v) for k, ts, v in expected}
    groups = {fs.file_id for fs in t.file_system_view().latest_file_slices([""])}
    assert sorted(int(f[:8]) for f in groups) == [0, 1]
    del validations[:]
    t.upsert(spark.createDataFrame([(b1[0], 3, "again", False)], DDL))  # now every bucket has one
    assert validations == []
    assert (b1[0], 3, "again") in _data(t)

"""The BUCKET index (SIMPLE engine) on Spark: every record lands in the file group of its (partition, bucket),
whose id starts with the 8-digit bucket id Java Hudi computes; one file group per bucket per partition; upserts,
deletes, inserts, overwrites and bulk_insert keep that layout; bad configs fail before anything is written."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from hoodpy_spark_helpers import (data_files, footer, key_range, latest_files, read_base_file, rows, timeline_files,
                                  tree)
from pyspark.sql import functions as F

from hoodpy.errors import InvalidConfigError
from hoodpy.index.bloom_filter import BloomFilter
from hoodpy.index.bucket import BucketSpec, bucket_id, bucket_id_column
from hoodpy.meta_fields import FOOTER_BLOOM_FILTER_KEY
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string, _hoodie_is_deleted boolean"
BUCKETS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
SPEC = BucketSpec(4, ("id",))


def _create(spark, path, options=BUCKETS, **kw):
    kw.setdefault("record_key_fields", ["id"])
    kw.setdefault("partition_fields", ["p"])
    return HoodieTable.create(spark, path, table_name="bkt", precombine_field="ts", options=options, **kw)


def _layout(table, spec=SPEC) -> dict[tuple[str, int], str]:
    """(partition, bucket) -> file id of the latest file groups, after checking that every row of each file
    belongs to the bucket its file id names and that no bucket has two file groups."""
    out = {}
    for (partition, file_id), rel in latest_files(table).items():
        bucket = int(file_id[:8])
        keys = read_base_file(table, rel).column("_hoodie_record_key").to_pylist()
        assert {bucket_id(k, spec) for k in keys} <= {bucket}, (file_id, keys)
        assert (partition, bucket) not in out, f"two file groups for bucket {bucket} in {partition!r}"
        assert file_id.endswith("-0") and len(file_id) == 38
        out[(partition, bucket)] = file_id
    return out


def _data(table):
    return rows(table.read(), "_hoodie_record_key", "p", "ts", "v")


def test_spark_column_matches_the_reference_arithmetic(spark):
    rng = random.Random(11)
    alphabet = "abcXYZ019-_:, éß日本😀𝄞"
    keys = ["1", "", "key-42", "9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "id:1,name:Alice", "name:Alice,id:1",
            "id:__null__,name:Alice", "id:__empty__,name:x", "id:a:b,name:x", "id:a,b,name:x", "id:1,name:x,,",
            ",id:1", "10:30", "😀", "日本", "é" * 50]
    keys += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(300)]
    specs = [BucketSpec(4, ("id",)), BucketSpec(256, ("id", "name")), BucketSpec(7, ("name",))]
    df = spark.createDataFrame([(k,) for k in keys], "k string")
    got = df.select("k", *[bucket_id_column(F.col("k"), s).alias(f"b{i}") for i, s in enumerate(specs)]).collect()
    for r in got:
        assert [r[f"b{i}"] for i in range(len(specs))] == [bucket_id(r["k"], s) for s in specs], r["k"]


def test_upserts_and_deletes_land_in_their_buckets(spark, table_path):
    t = _create(spark, table_path)
    batch1 = [(str(i), "a" if i < 10 else "b", 1, f"v{i}", False) for i in range(20)]
    r1 = t.upsert(spark.createDataFrame(batch1, DDL))
    layout1 = _layout(t)
    expected = {(p, bucket_id(k, SPEC)) for k, p, *_ in batch1}
    assert set(layout1) == expected  # one file group per (partition, bucket) the batch hit, none other
    assert r1.files_added == len(expected)

    batch2 = [("1", "a", 2, "u1", False), ("12", "b", 2, "u12", False), ("3", "a", 2, "d3", True),
              ("30", "a", 2, "n30", False), ("31", "b", 2, "n31", False), ("99", "a", 2, "gone", True)]
    t.upsert(spark.createDataFrame(batch2, DDL))
    layout2 = _layout(t)
    for slot, file_id in layout1.items():
        assert layout2[slot] == file_id  # existing buckets keep their file group
    expected = {(k, p, 1, f"v{k}") for k, p, *_ in batch1 if k not in ("1", "12", "3")}
    expected |= {("1", "a", 2, "u1"), ("12", "b", 2, "u12"), ("30", "a", 2, "n30"), ("31", "b", 2, "n31")}
    assert _data(t) == sorted(expected)

    t.delete(spark.createDataFrame([("5", "a", 3, None, None), ("31", "b", 3, None, None)], DDL))
    assert _layout(t) == layout2
    assert _data(t) == sorted(e for e in expected if e[0] not in ("5", "31"))
    # A delete naming only the key (no partition column) is located across partitions.
    t.delete(spark.createDataFrame([("12",)], "id string"))
    assert "12" not in {r[0] for r in _data(t)}
    assert _layout(t) == layout2


@pytest.mark.parametrize("partition_fields", [["p"], []])
def test_upsert_combines_repeated_keys_in_the_merge_tasks(spark, table_path, partition_fields):
    """A batch naming a key several times is combined where the key's bucket is merged (no shuffle of the batch):
    the largest ordering value wins, a tie goes to the later record, a later delete removes the key, and a key
    upserted after its delete stays, in existing and in new buckets alike. Unpartitioned, the batch is shuffled
    by bucket before it is stored: the batch order of ties is the one before that shuffle."""
    t = _create(spark, table_path, partition_fields=partition_fields)
    t.upsert(spark.createDataFrame([(str(i), "a", 1, f"v{i}", False) for i in range(8)], DDL))
    batch = [("1", "a", 5, "late-wins", False), ("1", "a", 3, "older", False),  # larger ts wins
             ("2", "a", 4, "first", False), ("2", "a", 4, "tie-last", False),  # tie: the later record
             ("3", "a", 2, "upserted", False), ("3", "a", 2, "deleted", True),  # deleted after its upsert
             ("4", "a", 2, "deleted", True), ("4", "a", 2, "back", False),  # upserted after its delete
             ("50", "b", 2, "new", False), ("50", "b", 2, "gone", True),  # a new bucket: deleted again
             ("51", "b", 1, "n51", False), ("51", "b", 2, "n51-2", False)]
    t.upsert(spark.createDataFrame(batch, DDL))
    expected = {(str(i), "a", 1, f"v{i}") for i in range(8) if i not in (1, 2, 3, 4)}
    expected |= {("1", "a", 5, "late-wins"), ("2", "a", 4, "tie-last"), ("4", "a", 2, "back"), ("51", "b", 2, "n51-2")}
    assert _data(t) == sorted(expected)
    _layout(t)


@pytest.mark.parametrize("operation", ["insert", "bulk_insert"])
def test_first_load_writes_one_file_per_bucket_with_its_footer(spark, tmp_path, operation):
    # A first load only creates file groups: its rows stream into their files (no merge task gathers a group).
    # Deletes of keys no bucket holds write nothing.
    t = _create(spark, str(tmp_path / "t"))
    batch = [(f"k{i:03}", "a" if i % 3 else "b", 1, f"v{i}", False) for i in range(60)]
    deletes = [("gone1", "a", 1, None, True), ("gone2", "b", 1, None, True)]
    r = getattr(t, operation)(spark.createDataFrame(batch + deletes, DDL))
    layout = _layout(t)
    assert set(layout) == {(p, bucket_id(k, SPEC)) for k, p, *_ in batch}
    assert r.files_added == len(layout) and r.num_inserts == 60
    assert _data(t) == sorted((k, p, 1, v) for k, p, _, v, _ in batch)
    for (partition, file_id), rel in latest_files(t).items():
        keys = read_base_file(t, rel).column("_hoodie_record_key").to_pylist()
        assert sorted(keys) == sorted(k for k, p, *_ in batch if p == partition and layout[(p, bucket_id(k, SPEC))]
                                      == file_id)
        assert key_range(t, rel) == (min(keys), max(keys))
        bloom = BloomFilter.deserialize(footer(t, rel)[FOOTER_BLOOM_FILTER_KEY])
        assert all(bloom.might_contain(k) for k in keys) and bloom.num_records == len(keys)


def test_insert_overwrite_and_bulk_insert(spark, tmp_path):
    t = _create(spark, str(tmp_path / "t"))
    batch = [(str(i), "a" if i % 2 else "b", 1, f"v{i}", False) for i in range(24)]
    r = t.bulk_insert(spark.createDataFrame(batch, DDL))
    layout = _layout(t)
    assert set(layout) == {(p, bucket_id(k, SPEC)) for k, p, *_ in batch}
    assert r.files_added == len(layout) and r.num_inserts == 24
    assert _data(t) == sorted((k, p, 1, v) for k, p, _, v, _ in batch)

    # insert appends into the bucket's file group (no small-file packing across buckets).
    t.insert(spark.createDataFrame([("100", "a", 1, "i100", False)], DDL))
    after_insert = _layout(t)
    slot = ("a", bucket_id("100", SPEC))
    assert after_insert[slot] == layout.get(slot, after_insert[slot])  # its bucket's group, if it had one
    assert {s: f for s, f in after_insert.items() if s != slot} == {s: f for s, f in layout.items() if s != slot}

    # insert_overwrite of partition a: new file groups (new ids, same bucket prefixes), b untouched.
    over = [("200", "a", 5, "o200", False), ("201", "a", 5, "o201", False)]
    r = t.insert_overwrite(spark.createDataFrame(over, DDL))
    final = _layout(t)
    assert {s for s in final if s[0] == "a"} == {("a", bucket_id(k, SPEC)) for k, *_ in over}
    assert all(final[s] != after_insert.get(s) for s in final if s[0] == "a")
    assert {s: f for s, f in final.items() if s[0] == "b"} == {s: f for s, f in after_insert.items() if s[0] == "b"}
    assert r.files_replaced == len([s for s in after_insert if s[0] == "a"])
    assert [row for row in _data(t) if row[1] == "a"] == [("200", "a", 5, "o200"), ("201", "a", 5, "o201")]

    # bulk_insert into a partition that holds file groups would give a bucket a second group: refused.
    before = tree(t.base_path)
    with pytest.raises(InvalidConfigError, match="bulk_insert with the BUCKET index .* 'b' already hold"):
        t.bulk_insert(spark.createDataFrame([("300", "b", 1, "x", False)], DDL))
    assert tree(t.base_path) == before


def test_composite_key_and_hash_field_subset(spark, table_path):
    options = {**BUCKETS, "hoodie.bucket.index.hash.field": "name"}
    t = _create(spark, table_path, options, record_key_fields=["id", "name"], partition_fields=[])
    spec = BucketSpec(4, ("name",))
    names = ["Alice", "Bob", "Carol", "Dave", "Eve", "日本"]
    batch = [(i, names[i % len(names)], 1) for i in range(18)]
    t.upsert(spark.createDataFrame(batch, "id int, name string, ts long"))
    layout = _layout(t, spec)
    assert set(layout) == {("", bucket_id(f"id:{i},name:{n}", spec)) for i, n, _ in batch}
    # Same name -> same bucket, whatever the id: all of Alice's records are in one file group.
    groups = defaultdict(set)
    for key, file_name in rows(t.read(), "_hoodie_record_key", "_hoodie_file_name"):
        groups[key.split("name:")[1]].add(file_name[:8])
    assert all(len(v) == 1 for v in groups.values())
    t.upsert(spark.createDataFrame([(0, "Alice", 2), (40, "Alice", 2)], "id int, name string, ts long"))
    assert _layout(t, spec) == layout
    assert len(t.read().collect()) == 19


def test_unpartitioned_writes_that_combine_by_a_shuffle_keep_one_group_per_bucket(spark, table_path):
    """Unpartitioned, the batch is shuffled by bucket before it is stored, so each bucket's merge task reads its
    stored partition; a delete and an insert with combine.before.insert combine by a shuffle of their own first,
    and their buckets must still each reach one task: one file group per bucket, every row where it belongs."""
    t = _create(spark, table_path, partition_fields=[])
    first = [(f"k{i:02}", "a", 1, f"v{i}", False) for i in range(40)]
    t.upsert(spark.createDataFrame(first, DDL).repartition(3))
    layout = _layout(t)
    assert len(layout) == 4
    dups = [(f"k{i:02}", "a", 2, f"d{i}", False) for i in range(40, 60)] * 2
    coalesce = "spark.sql.adaptive.coalescePartitions.enabled"
    spark.conf.set(coalesce, "false")  # the combine's output in several partitions, as a large batch's is
    try:
        t.insert(spark.createDataFrame(dups, DDL).repartition(3), options={"hoodie.combine.before.insert": "true"})
        assert _layout(t) == layout
        deletes = [(f"k{i:02}", "a", 3, "", True) for i in range(0, 40, 4)]
        t.delete(spark.createDataFrame(deletes, DDL).repartition(3))
        assert _layout(t) == layout
    finally:
        spark.conf.unset(coalesce)
    expected = {(f"k{i:02}", "a", 1, f"v{i}") for i in range(40) if i % 4}
    expected |= {(f"k{i:02}", "a", 2, f"d{i}") for i in range(40, 60)}
    assert _data(t) == sorted(expected)


@pytest.mark.parametrize("options, message", [
    ({"hoodie.bucket.index.hash.field": "v"}, "v are not record key fields"),
    ({"hoodie.bucket.index.num.buckets": "0"}, "at least one bucket"),
    ({"hoodie.index.bucket.engine": "CONSISTENT_HASHING"}, "CONSISTENT_HASHING"),
])
def test_bad_config_fails_and_leaves_the_table_unchanged(spark, tmp_path, options, message):
    t = _create(spark, str(tmp_path / "t"))
    t.upsert(spark.createDataFrame([("1", "a", 1, "v1", False)], DDL))
    before = tree(t.base_path)
    with pytest.raises(InvalidConfigError, match=message):
        t.upsert(spark.createDataFrame([("2", "a", 1, "v2", False)], DDL), options=options)
    assert tree(t.base_path) == before
    assert len(data_files(t.base_path)) == 1 and timeline_files(t.base_path)


def test_switching_a_table_to_the_bucket_index_is_refused(spark, table_path):
    t = _create(spark, table_path, options={})
    t.upsert(spark.createDataFrame([("1", "a", 1, "v1", False)], DDL))
    before = tree(t.base_path)
    with pytest.raises(InvalidConfigError, match="belongs to none of the table's buckets 0..3"):
        t.upsert(spark.createDataFrame([("2", "a", 1, "v2", False)], DDL), options=BUCKETS)
    assert tree(t.base_path) == before


def test_clustering_a_bucket_table_is_refused_before_anything_is_written(spark, table_path):
    t = _create(spark, table_path)
    t.upsert(spark.createDataFrame([("1", "a", 1, "v1", False)], DDL))
    before = tree(t.base_path)
    with pytest.raises(InvalidConfigError, match="does not cluster tables written with the BUCKET index"):
        t.clustering.schedule({"hoodie.clustering.plan.strategy.sort.columns": "v"})
    with pytest.raises(InvalidConfigError, match="does not cluster tables written with the BUCKET index"):
        t.upsert(spark.createDataFrame([("2", "a", 1, "v2", False)], DDL),
                 options={"hoodie.clustering.inline": "true", "hoodie.clustering.plan.strategy.sort.columns": "v"})
    assert tree(t.base_path) == before


@pytest.mark.parametrize("partitions", [2, 17])
def test_bucket_targets_literal_or_joined(spark, tmp_path, partitions):
    """A record's file group and merge bin come from literal arrays of the slots when the batch names at most 16
    partitions (no table of slots broadcast: one Spark job fewer), from a join beyond: the same layout either way,
    and a merge-on-read upsert's updates and new buckets land where they belong."""
    t = _create(spark, str(tmp_path / "t"), table_type="MERGE_ON_READ")
    first = [(str(i), f"p{i % partitions}", 1, f"v{i}", False) for i in range(4 * partitions)]
    t.upsert(spark.createDataFrame(first, DDL))
    batch = [(str(i), f"p{i % partitions}", 2, f"u{i}", False) for i in range(0, 4 * partitions, 3)]
    batch += [(str(100 + i), f"p{i % partitions}", 2, f"n{i}", False) for i in range(partitions)]
    sc = spark.sparkContext
    sc.setJobGroup("bucket-targets", "bucket-targets")
    try:
        t.upsert(spark.createDataFrame(batch, DDL))
    finally:
        sc.setJobGroup("", "")
    tracker = sc.statusTracker()
    jobs = [[info.name for stage in tracker.getJobInfo(job).stageIds if (info := tracker.getStageInfo(stage))]
            for job in sorted(tracker.getJobIdsForGroup("bucket-targets"))]
    if partitions <= 16:  # validation (its aggregate's two stages run as two jobs), the shuffle by bin, the write
        assert len(jobs) == 4, jobs
    else:  # the slots table broadcast and joined, with more stages
        assert len(jobs) > 4, jobs
    expected = {k: (p, 1, v) for k, p, _, v, _ in first} | {k: (p, 2, v) for k, p, _, v, _ in batch}
    assert {r[0]: tuple(r[1:]) for r in _data(t)} == expected
    # Every record (in a base file or a log: MOR's updates and new buckets start as logs) is in its bucket's group.
    placed = t.read().select("_hoodie_record_key", "_hoodie_file_name").collect()
    assert len(placed) == len(expected)
    assert all(int(name[:8]) == bucket_id(key, SPEC) for key, name in placed), placed

"""Merge-on-read writes under their options and indexes: log files rolled over at ``hoodie.logfile.max.size``
(several blocks per file, several files per write), the BUCKET index (inserts of an existing bucket go to its
log; a new bucket starts as a file group of one log file), rollback of a completed deltacommit, and bad input
(unknown block format, table versions and virtual keys hoodpy does not write as merge-on-read): a clear error
and the table exactly as it was. hudi-rs reads every table as hoodpy does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, tree

from tests.compat import hudi_rs
from hoodpy.errors import InvalidConfigError
from hoodpy.file_group.naming import parse_log_file_name
from hoodpy.table import HoodieTable
from hoodpy.timeline import log_format as lf

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string"


def _create(spark, path, **options):
    return HoodieTable.create(spark, path, table_name="mor", record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", table_type="MERGE_ON_READ", options={**SMALL_BLOOM, **options})


def _values(table) -> dict[str, tuple]:
    return {r["_hoodie_record_key"]: (r["ts"], r["v"]) for r in hudi_rs.df_rows(table.read())}


def test_logs_roll_over_at_the_max_size(spark, table_path):
    """One record per data block (block max size 1 byte) and room for two blocks per log file: five updates
    and a delete of one file group take three log versions, each reported by its own write stat."""
    table = _create(spark, table_path)
    # one Spark partition: one file group (bulk_insert's default sort mode NONE writes a file per task)
    table.bulk_insert(spark.createDataFrame([(f"k{i}", "a", 1, "x") for i in range(8)], DDL).coalesce(1))
    probe = Path(table_path)
    options = {"hoodie.logfile.data.block.max.size": "1", "hoodie.parquet.small.file.limit": "0"}
    # Size a one-record block first, to set the file size two such blocks fill.
    table.upsert(spark.createDataFrame([("k0", "a", 2, "y")], DDL), options=options)
    [first] = list(probe.rglob(".*.log.*"))
    block_size = first.stat().st_size
    options["hoodie.logfile.max.size"] = str(int(block_size * 2.5))
    batch = [(f"k{i}", "a", 3, f"z{i}") for i in range(1, 6)]
    result = table.upsert(spark.createDataFrame(batch, DDL), options=options)
    deleted = table.delete(spark.createDataFrame([("k7", "a", 0, None)], DDL), options=options)

    stats = sorted(result.metadata.write_stats, key=lambda s: s.log_version)
    assert [s.log_version for s in stats] == [2, 3, 4] and [s.num_update_writes for s in stats] == [2, 2, 1]
    names = [s.path.rsplit("/", 1)[-1] for s in stats]
    assert len({parse_log_file_name(n).write_token for n in names}) == 1  # one task rolled over
    assert [s.log_files for s in stats] == [[first.name, *names[:i + 1]] for i in range(3)]
    for s in stats:
        blocks = list(lf.scan_blocks((probe / s.path).read_bytes()))
        assert len(blocks) == s.num_writes and s.file_size_in_bytes == (probe / s.path).stat().st_size
    [delete_stat] = deleted.metadata.write_stats
    assert delete_stat.log_version == 5 and delete_stat.num_deletes == 1
    expected = {f"k{i}": (1, "x") for i in range(8)} | {"k0": (2, "y")} | {f"k{i}": (3, f"z{i}") for i in range(1, 6)}
    del expected["k7"]
    assert _values(table) == expected
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


BUCKETS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}


def test_bucket_index_appends_inserts_and_starts_new_buckets_as_logs(spark, table_path):
    from hoodpy.index.bucket import BucketSpec, bucket_id

    spec = BucketSpec(2, ("id",))
    keys = [f"k{i}" for i in range(40)]
    b0 = [k for k in keys if bucket_id(k, spec) == 0][:3]
    b1 = [k for k in keys if bucket_id(k, spec) == 1][:2]
    table = _create(spark, table_path, **BUCKETS)
    # bulk_insert writes base files (bucket 0 of partition a); an upsert would start the bucket as a log.
    table.bulk_insert(spark.createDataFrame([(k, "a", 1, "x") for k in b0[:2]], DDL))
    # An update and an insert into bucket 0, and a first record of bucket 1: all three go to log files.
    result = table.upsert(spark.createDataFrame([(b0[0], "a", 2, "y"), (b0[2], "a", 2, "y"), (b1[0], "a", 2, "y")],
                                                DDL))
    stats = {int(s.file_id[:8]): s for s in result.metadata.write_stats}
    assert all(s.is_log_write for s in stats.values())
    assert (stats[0].num_update_writes, stats[0].num_inserts, stats[0].base_file.endswith(".parquet")) == (2, 0, True)
    new = stats[1]
    assert (new.num_inserts, new.prev_commit, new.base_file, new.log_version) == (1, result.instant_time, "", 1)
    assert new.path == f"a/.{new.file_id}_{result.instant_time}.log.1_" + new.path.rsplit("_", 1)[-1]
    # The log-only group takes the next write's update as its log version 2.
    again = table.upsert(spark.createDataFrame([(b1[0], "a", 3, "w"), (b1[1], "a", 3, "w")], DDL))
    [stat] = again.metadata.write_stats
    assert (stat.file_id, stat.log_version, stat.prev_commit) == (new.file_id, 2, result.instant_time)
    assert _values(table) == {b0[0]: (2, "y"), b0[1]: (1, "x"), b0[2]: (2, "y"), b1[0]: (3, "w"), b1[1]: (3, "w")}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)
    # Read-optimized: the one base file (the first write's); the log-only bucket is not there.
    ro = hudi_rs.df_rows(table.read(query_type="read_optimized"))
    assert sorted(r["_hoodie_record_key"] for r in ro) == sorted(b0[:2]) and ro == hudi_rs.read_optimized(table_path)


def test_bucket_index_combines_the_batch_in_the_append_tasks(spark, table_path):
    """Under the BUCKET index every record of a key reaches one append task, which combines the batch there (no
    shuffle of it before): per key the largest ordering value wins, a tie the later record, a
    ``_hoodie_is_deleted`` record competes like any other. A bucket that has no file group and receives only
    deletes writes nothing; one that has writes its winning deletes to a delete block."""
    from hoodpy.index.bucket import BucketSpec, bucket_id

    spec = BucketSpec(2, ("id",))
    keys = [f"k{i}" for i in range(40)]
    b0 = [k for k in keys if bucket_id(k, spec) == 0][:4]
    b1 = [k for k in keys if bucket_id(k, spec) == 1][:1]
    ddl = DDL + ", _hoodie_is_deleted boolean"
    table = _create(spark, table_path, **BUCKETS)
    table.bulk_insert(spark.createDataFrame([(k, "a", 1, "x", False) for k in b0[:3]], ddl))
    batch = [(b0[0], "a", 3, "late-larger", False), (b0[0], "a", 2, "y", False),  # the larger ts wins
             (b0[1], "a", 5, "first", False), (b0[1], "a", 5, "second", False),  # a tie: the later wins
             (b0[2], "a", 6, None, True), (b0[2], "a", 4, "z", False),  # the delete wins: gone
             (b0[3], "a", 2, "new", False), (b0[3], "a", 1, None, True),  # an insert beats an older delete
             (b1[0], "a", 7, None, True)]  # bucket 1 has no file group: nothing to delete there
    # Several Spark partitions, so that records of a key come from different input tasks.
    result = table.upsert(spark.createDataFrame(batch, ddl).repartition(3))
    [stat] = result.metadata.write_stats
    assert stat.is_log_write and int(stat.file_id[:8]) == 0
    assert (stat.num_writes, stat.num_deletes) == (3, 1)
    blocks = list(lf.scan_blocks((Path(table_path) / stat.path).read_bytes()))
    assert [b.block_type for b in blocks] == [lf.AVRO_DATA_BLOCK, lf.DELETE_BLOCK]
    assert _values(table) == {b0[0]: (3, "late-larger"), b0[1]: (5, "second"), b0[3]: (2, "new")}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_rollback_of_a_completed_deltacommit(spark, table_path):
    table = _create(spark, table_path)
    table.insert(spark.createDataFrame([("k1", "a", 1, "x"), ("k2", "a", 1, "x")], DDL))
    before = tree(table_path)
    upsert = table.upsert(spark.createDataFrame([("k1", "a", 2, "y"), ("k3", "a", 2, "y")], DDL),
                          options={"hoodie.parquet.small.file.limit": "0"})
    written = {s.path for s in upsert.metadata.write_stats}
    assert any(parse_log_file_name(p.rsplit("/", 1)[-1]) for p in written)
    table.rollback_to_instant(upsert.instant_time)
    assert not any((Path(table_path) / p).exists() for p in written)
    assert _values(table) == {"k1": (1, "x"), "k2": (1, "x")}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)
    left = {k for k in tree(table_path) if not k.startswith(".hoodie/")}
    assert left == {k for k in before if not k.startswith(".hoodie/")}


@pytest.mark.parametrize("options,key", [
    ({"hoodie.logfile.data.block.format": "orc"}, "hoodie.logfile.data.block.format"),
    ({"hoodie.logfile.data.block.format": "hfile"}, "hoodie.logfile.data.block.format"),
    ({"hoodie.logfile.max.size": "1GB"}, "hoodie.logfile.max.size"),
    ({"hoodie.table.type": "COPY_ON_WRITE"}, "hoodie.table.type"),
])
def test_bad_options_leave_the_table_unchanged(spark, table_path, options, key):
    table = _create(spark, table_path)
    table.insert(spark.createDataFrame([("k1", "a", 1, "x")], DDL))
    before = tree(table_path)
    with pytest.raises(InvalidConfigError) as info:
        table.upsert(spark.createDataFrame([("k1", "a", 2, "y")], DDL), options=options)
    assert info.value.key == key
    assert tree(table_path) == before


def test_table_type_from_the_option(spark, table_path):
    table = HoodieTable.create(spark, table_path, table_name="t", record_key_fields=["id"],
                               options={"hoodie.table.type": "merge_on_read"})
    assert table.properties["hoodie.table.type"] == "MERGE_ON_READ"
    props = (Path(table_path) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.compaction.payload.class=org.apache.hudi.common.model.OverwriteWithLatestAvroPayload" in props
    result = table.insert(spark.createDataFrame([("k1", "a", 1, "x")], DDL))
    meta = json.loads((Path(table_path) / ".hoodie" / f"{result.instant_time}.deltacommit").read_text())
    assert meta["operationType"] == "INSERT"


@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_BLOOM"])
def test_indexes_located_in_spark(spark, table_path, index):
    """The indexes that locate keys in Spark tasks: updates and deletes go to the logs of the groups the keys
    are in; under a global index a key whose partition changed is deleted from its old group's log and
    inserted into its new partition."""
    table = _create(spark, table_path, **{"hoodie.index.type": index})
    table.bulk_insert(spark.createDataFrame([("k1", "a", 1, "x"), ("k2", "a", 1, "x"), ("k3", "b", 1, "x")], DDL))
    moved = "b" if index.startswith("GLOBAL") else "a"  # a non-global index keeps k2 in partition a as a new key
    result = table.upsert(spark.createDataFrame([("k1", "a", 2, "y"), ("k2", moved, 2, "y")], DDL),
                          options={"hoodie.parquet.small.file.limit": "0"})
    logs = [s for s in result.metadata.write_stats if s.is_log_write]
    assert logs and all(s.partition_path == "a" for s in logs)
    table.delete(spark.createDataFrame([("k3", "b", 0, None)], DDL))
    rows = {(r["_hoodie_partition_path"], r["_hoodie_record_key"]): (r["ts"], r["v"])
            for r in hudi_rs.df_rows(table.read())}
    assert rows == {("a", "k1"): (2, "y"), ("a", "k2") if moved == "a" else ("b", "k2"): (2, "y")}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_writes_during_a_pending_compaction_go_to_the_slice_it_starts(spark, table_path):
    """While a compaction is requested, updates of the file groups it holds go to log files named after the
    compaction instant (the slice it starts), as Hudi writes them: the compaction folds in the logs before it and
    leaves these for the next slice. Snapshot reads see every update before, during and after the compaction, and
    hudi-rs reads the compacted table as hoodpy does."""
    table = _create(spark, table_path)
    table.bulk_insert(spark.createDataFrame([(f"k{i}", "a", 1, "base") for i in range(4)], DDL).coalesce(1))  # one group
    table.upsert(spark.createDataFrame([("k0", "a", 2, "before")], DDL))
    plan = table.compaction.schedule()
    assert plan is not None and len(plan.operations) == 1
    compaction = plan.instant_time
    [group] = plan.file_group_ids

    during = table.upsert(spark.createDataFrame([("k0", "a", 3, "during"), ("k1", "a", 3, "during")], DDL))
    [stat] = during.metadata.write_stats
    name = parse_log_file_name(stat.path.rsplit("/", 1)[-1])
    assert (stat.partition_path, stat.file_id) == group
    assert (name.base_instant_time, name.version, stat.base_file) == (compaction, 1, "")
    expected = {"k0": (3, "during"), "k1": (3, "during"), "k2": (1, "base"), "k3": (1, "base")}
    assert _values(table) == expected

    table.compaction.execute(compaction)
    assert _values(table) == expected
    # The compacted base file holds what was committed before the compaction was planned.
    read_optimized = {r["_hoodie_record_key"]: (r["ts"], r["v"])
                      for r in hudi_rs.df_rows(table.read(query_type="read_optimized"))}
    assert read_optimized == {**expected, "k0": (2, "before"), "k1": (1, "base")}
    # The next write appends to the compaction's slice, after the log written during it.
    after = table.upsert(spark.createDataFrame([("k2", "a", 4, "after")], DDL))
    [stat] = after.metadata.write_stats
    name = parse_log_file_name(stat.path.rsplit("/", 1)[-1])
    assert (name.base_instant_time, name.version) == (compaction, 2)
    assert _values(table) == {**expected, "k2": (4, "after")}
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


def test_inline_compaction_after_max_delta_commits(spark, table_path):
    """hoodie.compact.inline with max.delta.commits 3: the third deltacommit (the load counts, as in Java) is
    followed by a compaction in the same write call; read-optimized then equals the snapshot, and hudi-rs agrees."""
    table = _create(spark, table_path)
    options = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    table.bulk_insert(spark.createDataFrame([(f"k{i}", "ab"[i % 2], 1, "base") for i in range(6)], DDL))
    table.upsert(spark.createDataFrame([("k0", "a", 2, "u1")], DDL), options=options)
    timeline = sorted(p.name for p in (Path(table_path) / ".hoodie").iterdir() if p.is_file())
    assert not any(n.endswith(".commit") for n in timeline)  # two deltacommits: not yet
    table.upsert(spark.createDataFrame([("k1", "b", 2, "u2")], DDL), options=options)
    commits = [n for n in (p.name for p in (Path(table_path) / ".hoodie").iterdir()) if n.endswith(".commit")]
    assert len(commits) == 1
    assert json.loads((Path(table_path) / ".hoodie" / commits[0]).read_text())["operationType"] == "COMPACT"
    snapshot = _values(table)
    assert snapshot["k0"] == (2, "u1") and snapshot["k1"] == (2, "u2")
    read_optimized = {r["_hoodie_record_key"]: (r["ts"], r["v"])
                      for r in hudi_rs.df_rows(table.read(query_type="read_optimized"))}
    assert read_optimized == snapshot
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)


@pytest.mark.parametrize("limit", [None, "2"])
def test_inserts_fill_only_the_candidates_limit_smallest_small_files(spark, table_path, limit):
    """SparkUpsertDeltaCommitPartitioner: a deltacommit's inserts go to at most
    hoodie.merge.small.file.group.candidates.limit (default 1) small base-file-only slices of a partition, the
    smallest first, each rewritten with them; the rest start new file groups. Updates to the other groups go to
    their logs. hudi-rs reads the table as hoodpy does."""
    table = _create(spark, table_path)
    for n in range(3):  # three small file groups of one partition, 10, 11 and 12 records (sizes in that order)
        table.insert(spark.createDataFrame([(f"g{n}-{i}", "a", 1, "x") for i in range(10 + n)], DDL).coalesce(1),
                     options={"hoodie.parquet.small.file.limit": "0"})
    sizes = sorted((bf.size, bf.file_id) for bf in table.file_system_view().latest_base_files())
    assert sizes[0][0] < sizes[1][0] < sizes[2][0]
    # 1 KB a record (no commit is representative under a huge threshold): the smallest file has room for 10.
    options = {"hoodie.copyonwrite.record.size.estimate": "1024", "hoodie.record.size.estimation.threshold": "1000",
               "hoodie.parquet.max.file.size": str(sizes[0][0] + 10 * 1024 + 10),
               "hoodie.parquet.small.file.limit": str(sizes[2][0] + 1)}
    if limit is not None:
        options["hoodie.merge.small.file.group.candidates.limit"] = limit
    inserts = [(f"new-{i:02d}", "a", 2, "n") for i in range(40)]
    updates = [("g2-0", "a", 2, "u")]  # the largest group: a log append
    result = table.upsert(spark.createDataFrame(inserts + updates, DDL).coalesce(1), options=options)

    smallest, middle, largest = (fid for _, fid in sizes)
    stats = result.metadata.write_stats
    base_writes = {s.file_id: s for s in stats if not s.is_log_write}
    assert {s.file_id for s in stats if s.is_log_write} == {largest}
    rewritten = {fid for fid in base_writes if fid in {smallest, middle, largest}}
    assert rewritten == ({smallest} if limit is None else {smallest, middle})
    assert all(base_writes[fid].num_inserts > 0 for fid in rewritten)
    created = set(base_writes) - rewritten
    assert created and all(base_writes[fid].num_inserts > 0 for fid in created)  # the rest: a new file group
    assert sum(s.num_inserts for s in base_writes.values()) == len(inserts)
    expected = {f"g{n}-{i}": (1, "x") for n in range(3) for i in range(10 + n)} | {k: (2, v) for k, _, _, v in
                                                                                    inserts + updates}
    assert _values(table) == expected
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(table_path)

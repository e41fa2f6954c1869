"""The record_index partition of the metadata table and the RECORD_INDEX index type: after upserts, deletes,
an insert overwrite, a clustering and a rollback, the rows equal a model, the record index holds exactly the
keys of the table's live file slices, each at the file group that holds it, and hudi-rs reads the table (also
through the metadata table). A table written without a record index gets one built when a write asks for it;
RECORD_INDEX with the metadata table off is refused before anything is written."""

from __future__ import annotations

import pytest
from tests.compat import hudi_rs
from hoodpy_spark_helpers import rows

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import InvalidConfigError
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.record_index import FILE_ID_PREFIX, RecordIndex, shard_of
from hoodpy.metadata_table.record_index_writer import table_keys
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

DDL = "id string, p string, ts long, v string"
RLI = {"hoodie.index.type": "RECORD_INDEX", "hoodie.clean.automatic": "false",
       "hoodie.metadata.compact.max.delta.commits": "3"}


def make_table(spark, path: str, options, version: str = "6") -> HoodieTable:
    return HoodieTable.create(spark, path, table_name="rli", record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", options={**options, "hoodie.write.table.version": version})


def index_of(path: str) -> dict[str, tuple[str, str]]:
    storage = Storage(path)
    found = RecordIndex(storage).read_all(Timeline.load(storage))
    return {k: (loc.partition_path, loc.file_id) for k, loc in found.items()}


def assert_index_matches_files(path: str) -> None:
    """The record index holds every key of the live file slices, at its file group, and nothing else; each
    entry sits in the shard its key hashes to."""
    storage = Storage(path)
    live = {k: (loc.partition_path, loc.file_id) for k, loc in table_keys(storage, Timeline.load(storage)).items()}
    assert index_of(path) == live
    index = RecordIndex(storage)
    for shard, group in enumerate(index.groups):
        assert group.file_id == f"{FILE_ID_PREFIX}{shard:04d}-0"
    for key in live:
        shard = shard_of(key, index.file_group_count)
        assert key in index._read_group(index.groups[shard], {key}, _valid(storage, index))


def _valid(storage, index):
    from hoodpy.metadata_table.reader import ValidInstants
    return ValidInstants.of(index.table.timeline, Timeline.load(storage))


def model_rows(model: dict[str, tuple]) -> list[tuple]:
    return sorted((k, *v) for k, v in model.items())


@pytest.mark.parametrize("version", ["6", "9"])
def test_record_index_follows_upserts_deletes_overwrite_and_rollback(spark, tmp_path, version):
    path = str(tmp_path / "t")
    table = make_table(spark, path, RLI, version)
    model: dict[str, tuple] = {}  # key -> (p, ts, v) as read
    partition_of: dict[str, str] = {}  # key -> the partition (folder) holding it

    def upsert(batch):
        table.upsert(spark.createDataFrame(batch, DDL))
        for k, p, ts, v in batch:
            # A global index updates a key in the partition holding it (update.partition.path off).
            partition_of.setdefault(k, p)
            model[k] = (p, ts, v)

    upsert([(f"k{i:02d}", "a" if i % 2 else "b", 1, "x") for i in range(20)])
    props = load_table_properties(table.storage)
    assert props["hoodie.table.metadata.partitions"] == "files,record_index"
    assert index_of(path).keys() == set(model)
    upsert([("k01", "a", 2, "y"), ("k02", "b", 2, "y"), ("k30", "a", 2, "new"), ("k31", "c", 2, "new"),
            ("k03", "b", 2, "moved?")])  # k03 lives in "a": the global lookup updates it there
    assert_index_matches_files(path)

    table.delete(spark.createDataFrame([("k04", "b", 3, None), ("k30", "a", 3, None)], DDL))
    del model["k04"], model["k30"]
    assert_index_matches_files(path)

    table.insert_overwrite(spark.createDataFrame([("k50", "b", 4, "ow"), ("k51", "b", 4, "ow")], DDL))
    model = {k: v for k, v in model.items() if partition_of[k] != "b"}
    model.update({"k50": ("b", 4, "ow"), "k51": ("b", 4, "ow")})
    assert index_of(path)["k03"][0] == "a" and model["k03"][0] == "b"
    assert_index_matches_files(path)
    assert "k02" not in index_of(path) and index_of(path)["k50"][0] == "b"

    before = dict(model)
    extra = table.upsert(spark.createDataFrame([("k60", "a", 5, "late"), ("k01", "a", 5, "z")], DDL)).instant_time
    assert "k60" in index_of(path)
    table.rollback_to_instant(extra)
    assert "k60" not in index_of(path)
    assert_index_matches_files(path)
    model = before

    assert rows(table.read(), "id", "p", "ts", "v") == model_rows(model)
    theirs = hudi_rs.snapshot_tuples(path, ["id", "p", "ts", "v"])
    assert theirs == model_rows(model)
    if version == "9":  # hudi-rs lists through the metadata table of versions 8 and 9
        batches = hudi_rs.table(path, {"hoodie.metadata.enable": "true"}).read(hudi_rs.HudiReadOptions())
        assert sorted(r["id"] for b in batches for r in b.to_pylist()) == sorted(model)
    # The partition's own instant: Hudi 1.x builds record_index at ...002; version 6 after files' 010.
    instants = {i.timestamp for i in MetadataTable(table.storage).timeline.instants}
    assert ("00000000000000002" if version == "9" else "00000000000000011") in instants


def test_record_index_built_for_an_existing_table_and_dropped_when_off(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path, {"hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false"})
    table.upsert(spark.createDataFrame([(f"k{i}", "a", 1, "x") for i in range(12)], DDL))
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    # The first RECORD_INDEX write looks keys up in the base files, then builds the index.
    table.upsert(spark.createDataFrame([("k1", "a", 2, "y"), ("k99", "a", 2, "y")], DDL), options=RLI)
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files,record_index"
    assert_index_matches_files(path)
    assert len(index_of(path)) == 13
    assert len(RecordIndex(table.storage).groups) == 10  # hoodie.metadata.record.index.min.filegroup.count
    # Later writes without the key keep it (the table has it) ...
    table.upsert(spark.createDataFrame([("k100", "a", 3, "y")], DDL))
    assert_index_matches_files(path)
    # ... and turning it off drops it.
    table.upsert(spark.createDataFrame([("k101", "a", 3, "y")], DDL),
                 options={"hoodie.metadata.record.index.enable": "false"})
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    assert not (Storage(path).exists(".hoodie/metadata/record_index"))
    assert len(rows(table.read(), "id")) == 15


def test_record_index_refused_without_metadata_table(spark, tmp_path):
    from tests.java_samples import file_digests

    path = str(tmp_path / "t")
    table = make_table(spark, path, {"hoodie.metadata.enable": "false"})
    table.upsert(spark.createDataFrame([("k1", "a", 1, "x")], DDL))
    before = file_digests(path)
    with pytest.raises(InvalidConfigError, match="metadata"):
        table.upsert(spark.createDataFrame([("k1", "a", 2, "y")], DDL),
                     options={"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.enable": "false"})
    assert file_digests(path) == before


def test_record_index_follows_merge_on_read_logs_compaction_and_clustering(spark, tmp_path):
    path = str(tmp_path / "mor")
    table = HoodieTable.create(spark, path, table_name="rli_mor", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", table_type="MERGE_ON_READ", options=RLI)
    table.bulk_insert(spark.createDataFrame([(f"k{i}", "ab"[i % 2], 1, "x") for i in range(10)], DDL))
    assert_index_matches_files(path)
    table.upsert(spark.createDataFrame([("k0", "a", 2, "u"), ("k1", "b", 2, "u"), ("k20", "a", 2, "n")], DDL))
    table.delete(spark.createDataFrame([("k2", "a", 0, None), ("k3", "b", 0, None)], DDL))
    assert {"k2", "k3"}.isdisjoint(index_of(path)) and "k20" in index_of(path)
    assert_index_matches_files(path)
    table.compaction.run()
    assert_index_matches_files(path)
    # Clustering rewrites every small file group: every key moves to a new file group.
    before = index_of(path)
    plan = table.clustering.schedule({"hoodie.clustering.plan.strategy.small.file.limit": "100000000"})
    assert plan is not None
    table.clustering.execute(plan)
    after = index_of(path)
    assert after.keys() == before.keys() and all(after[k][1] != before[k][1] for k in after)
    assert_index_matches_files(path)
    expected = sorted([f"k{i}" for i in range(10) if i not in (2, 3)] + ["k20"])
    assert [r[0] for r in rows(table.read(), "id")] == expected
    assert sorted(t[0] for t in hudi_rs.snapshot_tuples(path, ["id"])) == expected


def test_restore_past_the_build_rebuilds_the_record_index(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path, {"hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false"})
    c0 = table.upsert(spark.createDataFrame([("k1", "a", 1, "x"), ("k2", "b", 1, "x")], DDL)).instant_time
    table.savepoints.create(c0)
    table.upsert(spark.createDataFrame([("k3", "a", 2, "x")], DDL))
    # Built at the next write: its base files hold k3, an instant the restore below takes away.
    table.upsert(spark.createDataFrame([("k4", "b", 3, "x")], DDL), options=RLI)
    assert set(index_of(path)) == {"k1", "k2", "k3", "k4"}
    table.savepoints.rollback_to(c0)
    assert set(index_of(path)) == {"k1", "k2"}
    assert_index_matches_files(path)
    table.upsert(spark.createDataFrame([("k3", "a", 5, "again")], DDL), options=RLI)
    assert_index_matches_files(path)
    assert rows(table.read(), "id", "v") == [("k1", "x"), ("k2", "x"), ("k3", "again")]

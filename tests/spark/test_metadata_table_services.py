"""The metadata table's own table services: its compaction merges every file group of files, column_stats and
record_index into new base HFiles (laid out as the compaction of the Java v9 fixture v9_txns_simple_meta), its
cleaner deletes the slices no retained instant reads (hoodie.metadata.cleaner.commits.retained), and a rollback
of a data instant already compacted into the base files leaves column_stats and record_index equal to a rebuild.
Through all of it record_index lookups and column stats equal what the data files hold, and hudi-rs reads the
data table with and without hoodie.metadata.enable to the rows of a model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, rows
from java_samples import unzip_sample
from test_metadata_column_stats_writes import DDL, index_of as column_stats_of
from test_metadata_column_stats_writes import assert_index_matches as assert_column_stats_match
from test_metadata_table_sync import assert_in_step
from test_record_index_writes import assert_index_matches_files as assert_record_index_matches
from test_record_index_writes import index_of as record_index_of
from tests.compat import hudi_rs

from hoodpy.config import HoodieConfig
from hoodpy.hfile import HFileReader, decode_record, parsed_schema
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.column_stats import read_column_stats
from hoodpy.metadata_table.layout import parse_base_file, parse_log_file
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.writer import create_metadata_table, delete_metadata_table
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.avro_models import AvroModel, deserialize
from hoodpy.timeline.instant import LAYOUT_2, Action, State
from hoodpy.timeline.timeline import Timeline

pytestmark = pytest.mark.spark

PARTITIONS = ("files", "column_stats", "record_index")
# Three deltacommits between compactions: Java's metadata-table cleaner waits for three instants after one.
ALL = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
       "hoodie.metadata.cleaner.commits.retained": "2", "hoodie.clean.automatic": "false",
       "hoodie.metadata.index.column.stats.enable": "true", "hoodie.metadata.record.index.enable": "true",
       "hoodie.metadata.record.index.min.filegroup.count": "2"}


def make_table(spark, path: str, options: dict) -> HoodieTable:
    return HoodieTable.create(spark, path, table_name="mdt_services", record_key_fields=["id"],
                              partition_fields=["p"], precombine_field="ts", options=options)


class Model:
    def __init__(self, spark, table: HoodieTable):
        self.spark, self.table, self.rows = spark, table, {}

    def upsert(self, batch):
        result = self.table.upsert(self.spark.createDataFrame(batch, DDL))
        self.rows.update({i: (p, ts, v) for i, p, ts, v in batch})
        return result

    def delete(self, ids):
        self.table.delete(self.spark.createDataFrame([(i, *self.rows[i][:2], None) for i in ids], DDL))
        for i in ids:
            del self.rows[i]

    def expected(self):
        return sorted((i, *v) for i, v in self.rows.items())

    def check(self):
        """Indexes equal to the data files, the listing to storage's, rows to the model (hoodpy and hudi-rs, with
        and without the metadata table)."""
        path = self.table.base_path
        assert_column_stats_match(path)
        assert_record_index_matches(path)
        assert set(record_index_of(path)) == {str(i) for i in self.rows}
        assert_in_step(self.table)
        assert rows(self.table.read(), "id", "p", "ts", "v") == self.expected()
        for enable in ("true", "false"):
            theirs = hudi_rs.rows_of(hudi_rs._to_table(hudi_rs.table(path, {"hoodie.metadata.enable": enable}).read(
                hudi_rs.HudiReadOptions())))
            assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in theirs) == self.expected()


def metadata_files(path: str) -> dict[str, list[str]]:
    meta = Path(path, ".hoodie", "metadata")
    return {part: sorted(f.name for f in (meta / part).iterdir()) for part in PARTITIONS}


def assert_compacted_and_cleaned(path: str) -> str:
    """The latest compaction wrote a base file for every file group of every partition (named and filled as
    Java's), listed in its plan and commit; no slice older than the last clean's retained instants need is left.
    Returns the compaction's instant."""
    storage = Storage(path)
    mdt = MetadataTable(storage)
    compactions = sorted(i.timestamp for i in mdt.timeline.filter(actions=[Action.COMMIT], states=[State.COMPLETED]))
    assert len(compactions) >= 2
    latest = compactions[-1]
    files = metadata_files(path)
    groups = {part: sorted({(parse_base_file(n) or parse_log_file(n)).file_id for n in names
                            if parse_base_file(n) or parse_log_file(n)}) for part, names in files.items()}
    assert groups["files"] == ["files-0000-0"] and groups["column_stats"] == ["col-stats-0000-0", "col-stats-0001-0"]
    assert groups["record_index"] == ["record-index-0000-0", "record-index-0001-0"]

    plan = deserialize(AvroModel.COMPACTION_PLAN, storage.read_bytes(
        f".hoodie/metadata/.hoodie/{latest}.compaction.requested" if mdt.layout != LAYOUT_2
        else f".hoodie/metadata/.hoodie/timeline/{latest}.compaction.requested"))
    assert sorted((op["partitionPath"], op["fileId"]) for op in plan["operations"]) == sorted(
        (part, fid) for part in PARTITIONS for fid in groups[part])
    commit = mdt.timeline.commit_metadata(mdt.timeline.find(latest, Action.COMMIT))
    assert commit.operation_type == "COMPACT" and commit.compacted
    written = {(part, s.file_id): s.path for part, stats in commit.partition_to_write_stats.items() for s in stats}
    # prevCommit: the base instant of the slice merged, as Java's compaction commit says (its groups had one).
    done = {i.timestamp: i.completed_at for i in mdt.timeline.instants if i.is_completed}
    assert all(s.prev_commit in done and s.prev_commit < latest for s in commit.write_stats)
    for part in PARTITIONS:
        for fid in groups[part]:
            name = f"{fid}_0-1-0_{latest}.hfile"  # <file id>_<write token>_<compaction instant>.hfile, as Java's
            assert name in files[part] and written[(part, fid)] == f"{part}/{name}"
            reader = HFileReader(Path(path, ".hoodie", "metadata", part, name).read_bytes(), name)
            schema = parsed_schema(reader.schema or "")
            # Every record names the base file it is in (the fixture's compacted base files do too).
            assert {decode_record(k, v, schema, name)["_hoodie_file_name"] for k, v in reader} <= {name}

    # Cleaning (a clean instant of the metadata table): per group, no committed slice older than the one holding
    # the last clean's earliest retained instant.
    cleans = mdt.timeline.filter(actions=[Action.CLEAN], states=[State.COMPLETED])
    assert cleans
    earliest = deserialize(AvroModel.CLEAN_METADATA, mdt.storage.read_bytes(cleans[-1].path))["earliestCommitToRetain"]
    assert earliest
    for part, names in files.items():
        for fid in groups[part]:
            bases = sorted(b.instant_time for b in map(parse_base_file, names)
                           if b is not None and b.file_id == fid and b.instant_time in done)
            oldest = max(t for t in bases if t <= earliest)
            assert bases[0] == oldest, (part, fid, bases, earliest)
            for lf in filter(None, map(parse_log_file, names)):
                if lf.file_id == fid:
                    assert (done.get(lf.instant_time, "9") if mdt.layout == LAYOUT_2 else lf.instant_time) >= oldest
    return latest


@pytest.mark.parametrize("version", ["6", "9"])
def test_compaction_of_every_partition_and_cleaning_of_old_slices(spark, tmp_path, version):
    path = str(tmp_path / "t")
    options = {**ALL, "hoodie.write.table.version": version}
    model = Model(spark, make_table(spark, path, options))
    model.upsert([(i, "ab"[i % 2], 1, f"x{i}") for i in range(8)])
    init = {n for names in metadata_files(path).values() for n in names if n.endswith(".hfile")}
    model.check()
    model.upsert([(1, "b", 2, "y"), (2, "a", 2, "y"), (20, "b", 2, "new")])
    model.delete([3, 20])
    model.check()
    for round_ in range(4):
        model.upsert([(30 + round_, "a", 3 + round_, "z"), (4, "a", 3 + round_, f"z{round_}")])
    model.delete([30])
    model.check()
    assert_compacted_and_cleaned(path)
    # The partitions' build (their first base files) is long cleaned.
    left = {n for names in metadata_files(path).values() for n in names}
    assert not init & left
    # Lookups through the compacted record index: every key at its file group.
    index = record_index_of(path)
    live = {str(r["_hoodie_record_key"]): r["_hoodie_file_name"].split("_")[0]
            for r in hudi_rs.snapshot(path)}
    assert {k: fid for k, (_, fid) in index.items()} == live
    # One more write goes to a log file of a compacted slice (version 6 names it after the slice's base).
    model.upsert([(50, "b", 9, "late")])
    latest = MetadataTable(Storage(path)).latest_compaction_time()
    names = metadata_files(path)["record_index"]
    if version == "6":
        assert any(n.startswith(".record-index-") and f"_{latest}.log." in n for n in names)
    model.check()
    assert_compacted_and_cleaned(path)


def test_rollback_of_a_compacted_instant_leaves_the_indexes_equal_to_a_rebuild(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**ALL, "hoodie.metadata.compact.max.delta.commits": "1"}
    model = Model(spark, make_table(spark, path, options))
    model.upsert([(i, "ab"[i % 2], 1, f"x{i}") for i in range(6)])
    model.upsert([(1, "b", 2, "y"), (2, "a", 2, "y")])
    before = dict(model.rows)
    # A new partition only: the clean below deletes nothing of what the rolled-back instant needs.
    target = model.upsert([(100, "c", 5, "gone"), (101, "c", 5, "gone")]).instant_time
    table = model.table
    clean = table.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert clean is not None
    # The clean's metadata deltacommit compacted first: the target's stats and keys are in base files now.
    mdt = MetadataTable(table.storage)
    assert mdt.latest_compaction_time() > target
    new_files = {f.name for f in Path(path, "c").iterdir() if f.name.endswith(".parquet")}
    assert new_files and new_files <= {name for name, _ in column_stats_of(path)}
    assert {"100", "101"} <= set(record_index_of(path))

    table.rollback_to_instant(target)
    model.rows = before
    model.check()
    # A rebuild of the metadata table from the files gives the same column stats.
    copy = str(tmp_path / "copy")
    shutil.copytree(path, copy)
    copy_storage = Storage(copy)
    assert delete_metadata_table(copy_storage)
    create_metadata_table(copy_storage, HoodieConfig.of(options))
    rebuilt = column_stats_of(copy)
    assert rebuilt and column_stats_of(path) == rebuilt
    assert new_files.isdisjoint(name for name, _ in column_stats_of(path))
    assert {"100", "101"}.isdisjoint(record_index_of(path))


def test_merge_on_read_log_files_get_column_stats_and_skipping_prunes_only_whole_slices(spark, tmp_path,
                                                                                         monkeypatch):
    from hoodpy.read import query

    path = str(tmp_path / "mor")
    options = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.clean.automatic": "false",
               "hoodie.metadata.index.column.stats.enable": "true", "hoodie.compact.inline": "false"}
    table = HoodieTable.create(spark, path, table_name="mdt_mor_stats", record_key_fields=["id"],
                               partition_fields=["p"], precombine_field="ts", table_type="MERGE_ON_READ",
                               options=options)
    model = Model(spark, table)
    model.rows = {i: ("abc"[i % 3], 1, "x") for i in range(12)}
    table.bulk_insert(spark.createDataFrame([(i, *v) for i, v in model.rows.items()], DDL))
    model.upsert([(0, "a", 100, "u"), (1, "b", 100, "u")])
    model.upsert([(0, "a", 200, "w")])
    model.delete([5])  # a delete block: no column stats for it
    logs = sorted(Path(path).rglob(".*.log.*"))
    assert logs
    stats = column_stats_of(path)
    # Every log file with records has stats over them (sizes 0, as the Java fixture's log-file records).
    log_ts = {name: stats[(name, "ts")] for name, column in stats if column == "ts" and name.startswith(".")}
    assert {lo for lo, _, _, n in log_ts.values() if n} <= {100, 200} and {
        hi for _, hi, _, n in log_ts.values() if n} >= {100, 200}
    # The delete block's log file: no values, no range (as Java's record of such a file).
    assert (None, None, 0, 0) in log_ts.values()
    raw = {k: v for k, v in read_column_stats(Storage(path), Timeline.load(Storage(path))).items()
           if v["fileName"].startswith(".")}
    assert raw and all(v["totalSize"] == 0 and v["totalUncompressedSize"] == 0 for v in raw.values())
    # Written one deltacommit at a time, they equal a rebuild from the files.
    copy = str(tmp_path / "copy")
    shutil.copytree(path, copy)
    assert delete_metadata_table(Storage(copy))
    create_metadata_table(Storage(copy), HoodieConfig.of(options))
    assert column_stats_of(copy) == stats

    read_slices = []
    original = query._read_slices
    monkeypatch.setattr(query, "_read_slices",
                        lambda t, tl, slices, *a: read_slices.append(len(slices)) or original(t, tl, slices, *a))
    all_rows = rows(table.read(), "id", "p", "ts", "v")
    with_logs = read_slices[-1]
    for filters in ([("ts", ">=", 150)], [("v", "=", "u")], [("ts", "<", 0)], [("v", "=", "x")],
                    [("id", "=", 5)], [("ts", "between", (50, 150))]):
        name, op, value = filters[0]
        if op == "between":
            filters = [(name, ">=", value[0]), (name, "<=", value[1])]
        ours = rows(table.read(filters=filters), "id", "p", "ts", "v")
        col = {"id": 0, "p": 1, "ts": 2, "v": 3}[name]
        ops = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b,
               "=": lambda a, b: a == b}
        expected = [r for r in all_rows if all(ops[o](r[col], v) for _, o, v in filters)]
        assert ours == expected, filters
    assert rows(table.read(filters=[("ts", ">=", 150)]), "id", "ts") == [(0, 200)]
    # ts >= 150: only the slice holding key 0 has a log file that may match (base files hold ts 1).
    read_slices.clear()
    table.read(filters=[("ts", ">=", 150)]).collect()
    assert read_slices and read_slices[-1] < with_logs
    assert_in_step(table)
    theirs = hudi_rs.rows_of(hudi_rs._to_table(hudi_rs.table(path, {"hoodie.metadata.enable": "true"}).read(
        hudi_rs.HudiReadOptions())))
    assert sorted((r["id"], r["p"], r["ts"], r["v"]) for r in theirs) == all_rows == model.expected()


def test_java_log_file_column_stats_are_what_hoodpy_computes_and_prune_java_slices(spark, tmp_path, monkeypatch):
    """The Java v9 merge-on-read fixture's column_stats records of its log files (data blocks, and one of a
    delete block only) equal what hoodpy computes from those files, field for field (wrapper types included);
    filtered reads of the fixture prune its slices from them and return the rows of the unfiltered read,
    filtered."""
    from hoodpy.read import query

    path = str(unzip_sample("hudi-rs/sample_table/mor/avro/v9_txns_simple_meta", tmp_path))
    storage = Storage(path)
    timeline = Timeline.load(storage)
    java = read_column_stats(storage, timeline)
    by_log: dict[str, dict[str, dict]] = {}
    for s in java.values():
        if s["fileName"].startswith("."):
            by_log.setdefault(s["fileName"], {})[s["columnName"]] = s
    assert len(by_log) == 5
    schema = cs.table_arrow_schema(timeline.latest_schema())
    for name, java_stats in by_log.items():
        partition = next(p.parent.name for p in Path(path).rglob(name))
        ours = cs.log_file_stats(storage, partition, [name], (), True, schema, timeline.committed())
        assert {s["columnName"]: s for s in ours} == java_stats, name
    assert any(s["valueCount"] == 0 for stats in by_log.values() for s in stats.values())  # the delete block

    # Its latest slices were compacted and clustered; as of 20260307162612542 five slices had log files.
    table = HoodieTable.for_path(spark, path)
    as_of = "20260307162612542"
    read_slices = []
    original = query._read_slices
    monkeypatch.setattr(query, "_read_slices",
                        lambda t, tl, slices, *a: read_slices.append(len(slices)) or original(t, tl, slices, *a))
    columns = ["txn_id", "region", "txn_ts", "currency", "amount"]
    everything = rows(table.read(as_of=as_of), *columns)
    with_logs = read_slices[-1]
    assert with_logs >= 3 and everything
    for column, op, value in (("currency", "=", "JPY"), ("txn_ts", ">=", 1700000000010), ("txn_id", "=", "TXN-002"),
                              ("currency", "=", "USD"), ("currency", "=", "NONE")):
        read_slices.clear()
        got = rows(table.read(as_of=as_of, filters=[(column, op, value)]), *columns)
        at = columns.index(column)
        assert got == [r for r in everything if (r[at] == value if op == "=" else r[at] >= value)]
    # No file holds that currency: every slice is pruned.
    assert not read_slices

"""upgrade_table / downgrade_table on a table with an archived timeline: version 6's ``.hoodie/archived``
log files become version 8's LSM history and back (Hudi's SixToEightUpgradeHandler / EightToSixDowngradeHandler),
and readers see the same instants, rows and windows at every step; hudi-rs reads the table after each."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hoodpy.config.properties import parse_properties
from hoodpy.errors import ChangesNotReadableError, InstantNotRetainedError, TableVersionChangeError
from hoodpy.inspect.metadata_table import validate_files
from hoodpy.meta_fields import FOOTER_BLOOM_FILTER_KEY
from hoodpy.metadata_table import bloom_filters as bf
from hoodpy.metadata_table import column_stats as cs
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.metadata_table.record_index import RecordIndex
from hoodpy.metadata_table.record_index_writer import table_keys
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline.archived import read_archived_entries
from hoodpy.timeline.history import read_history
from hoodpy.timeline.timeline import Timeline
from sql_ext import disable, enable
from tests.compat import hudi_rs
from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM

pytestmark = [pytest.mark.compat, pytest.mark.spark]

DDL = "id int, part string, ts int, val string"
OPTIONS = {**SMALL_BLOOM, "hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3",
           "hoodie.keep.max.commits": "4"}
ALL_TIME = "start_ts => '0', end_ts => '99999999999999999', limit => 100"


@pytest.fixture(scope="module")
def hoodpy_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


def _archived(path: str, spark) -> dict[tuple[str, str], str | None]:
    """(instant time, action) -> completion (state transition) time of every completed archived instant."""
    table = HoodieTable.for_path(spark, path)
    return {(e["commitTime"], e["actionType"]): e.get("stateTransitionTime")
            for e in read_archived_entries(table.storage) if e.get("actionState") == "COMPLETED"}


def _rows(df) -> list[tuple]:
    return sorted((r.id, r.part, r.ts, r.val) for r in df.collect())


def _windows(table: HoodieTable) -> list[list[tuple]]:
    """Rows of each incremental window between consecutive active commits (instant times in version 6,
    completion times in version 8: the same commits either way)."""
    commits = table.timeline.completed_commits()
    bounds = [i.completed_at for i in commits]
    return [_rows(table.read_incremental(a, b)) for a, b in zip(bounds, bounds[1:])]


def _archive_files(path: str) -> list[str]:
    folder = Path(path, ".hoodie", "archived")
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_upgrade_and_downgrade_carry_the_archived_timeline(hoodpy_spark, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["part"],
                               precombine_field="ts", options=OPTIONS)
    for i in range(8):
        table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (10 + i, "b", i, f"n{i}")], DDL))
    archived_v6 = _archived(path, spark)
    assert sum(a == "commit" for _, a in archived_v6) >= 3 and any(a == "clean" for _, a in archived_v6)
    assert _archive_files(path)
    snapshot = hudi_rs.snapshot(path)
    windows = _windows(table)
    assert windows and all(windows)
    shown = spark.sql(f"CALL show_archived_commits_metadata(path => '{path}', {ALL_TIME})").collect()
    assert shown
    oldest_archived = min(t for t, a in archived_v6 if a == "commit")
    with pytest.raises(ChangesNotReadableError):
        table.read_incremental(oldest_archived)

    # -- upgrade: the archive moves into the LSM history -------------------------------------------------------
    assert spark.sql(f"CALL upgrade_table(path => '{path}', to_version => 'EIGHT')").collect() == [(True,)]
    props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
    assert props["hoodie.table.version"] == "8"
    assert _archive_files(path) == []  # the old form is gone once the properties name version 8
    history_dir = Path(path, ".hoodie", "timeline", "history")
    names = {p.name for p in history_dir.iterdir()}
    assert "_version_" in names and any(n.endswith("_0.parquet") for n in names)
    table8 = HoodieTable.for_path(spark, path)
    history = read_history(table8.storage)
    assert {(h.instant_time, h.action): h.completion_time for h in history} == archived_v6
    assert all(h.metadata and h.metadata.startswith(b"Obj\x01") for h in history)  # Avro, as 1.x writes it
    assert any(h.plan for h in history if h.action == "clean")  # the clean plan travels with its clean
    assert _archived(path, spark) == archived_v6
    # show_archived_commits reads the same metadata from the history (one entry per instant).
    assert spark.sql(f"CALL show_archived_commits_metadata(path => '{path}', {ALL_TIME})").collect() == shown
    assert hudi_rs.snapshot(path) == snapshot
    assert _rows(table8.read()) == _rows(table.read())
    assert _windows(table8) == windows
    commits8 = table8.timeline.completed_commits()
    for a, b in zip(commits8, commits8[1:]):
        assert hudi_rs.df_rows(table8.read_incremental(a.completed_at, b.completed_at)) == hudi_rs.incremental(
            path, a.completed_at, b.completed_at)

    # -- a write at version 8, then downgrade: the history becomes archive log files again ---------------------
    table8.upsert(spark.createDataFrame([(1, "a", 100, "v8")], DDL))
    snapshot8 = hudi_rs.snapshot(path)
    completions8 = {i.timestamp: i.completion_time for i in table8.timeline.completed_commits()}
    assert spark.sql(f"CALL downgrade_table(path => '{path}', to_version => 'SIX')").collect() == [(True,)]
    assert not Path(path, ".hoodie", "timeline").exists()
    files = _archive_files(path)
    assert files and all(n.startswith(".commits_.archive.") for n in files)
    archived_back = _archived(path, spark)
    assert {k: v for k, v in archived_back.items() if k in archived_v6} == archived_v6
    table6 = HoodieTable.for_path(spark, path)
    entries = read_archived_entries(table6.storage)
    assert {e["actionState"] for e in entries} == {"COMPLETED"}  # one summary entry per instant, as Java writes
    shown_back = spark.sql(f"CALL show_archived_commits_metadata(path => '{path}', {ALL_TIME})").collect()
    assert [r for r in shown_back if r.commit_time in {r.commit_time for r in shown}] == shown
    assert hudi_rs.snapshot(path) == snapshot8
    assert _rows(table6.read()) == _rows(table8.read())
    commits6 = table6.timeline.completed_commits()
    for a, b in zip(commits6, commits6[1:]):
        assert hudi_rs.df_rows(table6.read_incremental(a.timestamp, b.timestamp)) == hudi_rs.incremental(
            path, a.timestamp, b.timestamp)
    with pytest.raises(ChangesNotReadableError):
        table6.read_incremental(oldest_archived)

    # The completed instant files carry their completion times as modification times (as Java's downgrade sets
    # them): upgrading again gives every instant, active or archived, the completion time it had.
    assert spark.sql(f"CALL upgrade_table(path => '{path}', to_version => 'EIGHT')").collect() == [(True,)]
    again = HoodieTable.for_path(spark, path)
    assert {i.timestamp: i.completion_time for i in again.timeline.completed_commits()} == completions8
    assert _archived(path, spark) == archived_back
    assert hudi_rs.snapshot(path) == snapshot8


# -- a table with a metadata table ---------------------------------------------------------------------------
def _metadata_table_props(path: str) -> dict[str, str]:
    return parse_properties(Path(path, ".hoodie", "metadata", ".hoodie", "hoodie.properties").read_text())


def _hudi_rs_through_metadata_table(path: str) -> list[dict]:
    return hudi_rs.rows_of(pa.Table.from_batches(hudi_rs.table(path, {"hoodie.metadata.enable": "true"}).read()))


def _column_stats_from_footers(storage: Storage, versioned: bool) -> dict:
    """What column_stats must hold: the footer statistics of every base file the files partition lists."""
    expected = {}
    for partition, names in MetadataTable(storage).read(Timeline.load(storage)).all_files().items():
        for name in (n for n in names if cs.is_indexed_file(n)):
            meta = pq.read_metadata(storage.full_path(f"{partition}/{name}"))
            columns = cs.columns_to_index((f.name, cs.indexable(f.type)) for f in meta.schema.to_arrow_schema())
            for stats in cs.footer_stats(meta, name, columns, versioned=versioned):
                expected[cs.column_stats_key(stats["columnName"], partition, name)] = stats
    return expected


def _check_indexes(path: str, layout: str) -> None:
    """column_stats holds every base file's footer statistics, and the record index every live key at its
    file group."""
    storage = Storage(path)
    timeline = Timeline.load(storage)
    assert cs.read_column_stats(storage, timeline) == _column_stats_from_footers(storage, layout == "2")
    found = RecordIndex(storage).read_all(timeline)
    live = table_keys(storage, timeline)
    assert sorted(live) == ["1", "10", "12"]
    assert {k: (v.partition_path, v.file_id) for k, v in found.items()} == {
        k: (v.partition_path, v.file_id) for k, v in live.items()}
    # bloom_filters: every listed base file's footer filter, byte for byte.
    listed = MetadataTable(storage).read(timeline).all_files()
    files = [(p, n) for p, names in listed.items() for n in names if n.endswith(".parquet")]
    filters = bf.read_filters(storage, files, timeline)
    assert set(filters) == set(files)
    assert all(v["bloomFilter"] == pq.read_metadata(str(Path(path, p, n))).metadata[FOOTER_BLOOM_FILTER_KEY.encode()]
               for (p, n), v in filters.items())


def _file_group_counts(path: str) -> dict[str, int]:
    """Each metadata-table partition's distinct file ids (base and log files)."""
    out = {}
    for partition in Path(path, ".hoodie", "metadata").iterdir():
        if partition.name != ".hoodie":
            out[partition.name] = len({n.lstrip(".").split("_", 1)[0] for n in (f.name for f in partition.iterdir())
                                       if n.endswith(".hfile") or ".log." in n})
    return out


# File-group counts other than the defaults (column_stats 2, bloom_filters 4, record_index 10).
COUNTS = {"files": 1, "column_stats": 3, "bloom_filters": 1, "record_index": 2}


def test_the_metadata_table_is_built_again_at_the_new_version(hoodpy_spark, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "mdt")
    table = HoodieTable.create(spark, path, table_name="mdt", record_key_fields=["id"], partition_fields=["part"],
                               precombine_field="ts", options={
                                   **SMALL_BLOOM, "hoodie.metadata.enable": "true",
                                   "hoodie.metadata.index.column.stats.enable": "true",
                                   "hoodie.metadata.index.bloom.filter.enable": "true",
                                   "hoodie.metadata.record.index.enable": "true",
                                   "hoodie.metadata.index.column.stats.file.group.count": "3",
                                   "hoodie.metadata.index.bloom.filter.file.group.count": "1",
                                   "hoodie.metadata.record.index.min.filegroup.count": "2",
                                   "hoodie.metadata.record.index.max.filegroup.count": "2"})
    for i in range(3):
        table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (10 + i, "b", i, f"n{i}")], DDL))
    table.delete(spark.createDataFrame([(11, "b", 0, "")], DDL))
    assert _metadata_table_props(path)["hoodie.table.version"] == "6"
    partitions = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())[
        "hoodie.table.metadata.partitions"]
    assert partitions == "bloom_filters,column_stats,files,record_index"
    assert _file_group_counts(path) == COUNTS
    _check_indexes(path, "1")
    snapshot = hudi_rs.snapshot(path)
    assert _hudi_rs_through_metadata_table(path) == snapshot
    for target, layout in (("EIGHT", "2"), ("SIX", "1")):
        # Called without the index options: the table's metadata partitions say what to build again.
        assert spark.sql(f"CALL upgrade_table(path => '{path}', to_version => '{target}')").collect() == [(True,)]
        props = parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())
        assert props["hoodie.table.metadata.partitions"] == partitions
        assert sorted(p.name for p in Path(path, ".hoodie", "metadata").iterdir()) == [
            ".hoodie", "bloom_filters", "column_stats", "files", "record_index"]
        # Rebuilt with the file groups the old metadata table had, not the defaults.
        assert _file_group_counts(path) == COUNTS
        _check_indexes(path, layout)
        mdt = _metadata_table_props(path)
        assert (mdt["hoodie.table.version"], mdt["hoodie.timeline.layout.version"]) == (props["hoodie.table.version"],
                                                                                         layout)
        converted = HoodieTable.for_path(spark, path)
        assert validate_files(converted.storage).rows == []  # the listing is the files on storage
        assert hudi_rs.snapshot(path) == snapshot
        assert _hudi_rs_through_metadata_table(path) == snapshot
    # Writes after the round trip keep it in step.
    converted.upsert(spark.createDataFrame([(1, "a", 9, "after")], DDL))
    assert validate_files(converted.storage).rows == []
    _check_indexes(path, "1")
    assert _hudi_rs_through_metadata_table(path) == hudi_rs.snapshot(path)


# -- a merge-on-read table whose compactions are archived ------------------------------------------------------
def _mor_reads(table: HoodieTable, instant_times: list[str]) -> dict:
    """What readers see: the snapshot, time travel to each of ``instant_times`` and the incremental windows
    between them (by completion time: instant times in version 6, completion times in 8)."""
    by_time = {i.timestamp: i for i in table.timeline.completed_commits()}
    bounds = [by_time[t].completed_at for t in instant_times]
    return {"snapshot": _rows(table.read()), "as_of": [_as_of(table, b) for b in bounds],
            "windows": [_rows(table.read_incremental(a, b)) for a, b in zip(bounds, bounds[1:])]}


def _without_file_name(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in rows]


def _as_of(table: HoodieTable, when: str) -> list[tuple] | str:
    """Rows as of ``when``, or the refusal of an instant whose files the cleaner deleted."""
    try:
        return _rows(table.read(as_of=when))
    except InstantNotRetainedError:
        return "not retained"


def _compacted_then_changed(spark, path: str, commits: list[str], version: str) -> HoodieTable:
    """The table after a version change of a merge-on-read table: at ``version``, with one compaction commit
    after ``commits`` (the completed commits before), and no log files in its latest slices."""
    table = HoodieTable.for_path(spark, path)
    assert table.properties["hoodie.table.version"] == version
    completed = table.timeline.completed_commits()
    assert [i.timestamp for i in completed][:-1] == commits and completed[-1].action == "commit"
    assert all(not s.log_files for s in table.file_system_view().latest_file_slices())
    return table


def test_merge_on_read_upgrade_and_downgrade_with_archived_compactions(hoodpy_spark, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "mor")
    table = HoodieTable.create(spark, path, table_name="mor", record_key_fields=["id"], partition_fields=["part"],
                               precombine_field="ts", table_type="MERGE_ON_READ",
                               options={**OPTIONS, "hoodie.compact.inline": "false"})
    for i in range(7):
        table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (2, "b", i, f"b{i}"), (10 + i, "a", i, f"n{i}")],
                                           DDL))
        if i in (1, 3):
            assert len(table.compaction.run()) == 1
    table.archive(OPTIONS)
    archived = _archived(path, spark)
    assert ("commit" in {a for _, a in archived}) and "deltacommit" in {a for _, a in archived}, archived
    table = HoodieTable.for_path(spark, path)
    assert any(".log." in p.name for p in Path(path).rglob("*")), "the last slices have log files"
    active = [i.timestamp for i in table.timeline.completed_commits()]
    before = _mor_reads(table, active)
    assert sum(rows != "not retained" for rows in before["as_of"]) >= 2 and any(before["windows"])
    snapshot = hudi_rs.snapshot(path)
    assert hudi_rs.df_rows(table.read()) == snapshot

    # The upgrade compacts every slice with log files first (as Hudi's): one more commit, base files only.
    assert spark.sql(f"CALL upgrade_table(path => '{path}', to_version => 'EIGHT')").collect() == [(True,)]
    table8 = _compacted_then_changed(spark, path, active, "8")
    history = {(h.instant_time, h.action) for h in read_history(table8.storage)}
    assert set(archived) == history  # the archived compaction commits and deltacommits, with their plans
    assert any(h.plan for h in read_history(table8.storage) if h.action == "commit")
    assert _mor_reads(table8, active) == before
    assert _rows(table8.read(query_type="read_optimized")) == before["snapshot"]
    # hudi-rs reads what hoodpy reads; the rows equal those before but for _hoodie_file_name (compaction
    # rewrote the log records into base files).
    assert hudi_rs.snapshot(path) == hudi_rs.df_rows(table8.read())
    assert _without_file_name(hudi_rs.snapshot(path)) == _without_file_name(snapshot)
    assert hudi_rs.read_optimized(path) == hudi_rs.snapshot(path)

    assert spark.sql(f"CALL downgrade_table(path => '{path}', to_version => 'SIX')").collect() == [(True,)]
    table6 = HoodieTable.for_path(spark, path)
    assert table6.properties["hoodie.table.version"] == "6"
    assert {k: v for k, v in _archived(path, spark).items() if k in archived} == archived
    assert _mor_reads(table6, active) == before
    assert hudi_rs.snapshot(path) == hudi_rs.df_rows(table6.read())
    assert _without_file_name(hudi_rs.snapshot(path)) == _without_file_name(snapshot)
    # Writes and compaction go on at version 6.
    table6.upsert(spark.createDataFrame([(1, "a", 99, "after")], DDL))
    assert len(table6.compaction.run()) == 1
    assert hudi_rs.df_rows(HoodieTable.for_path(spark, path).read()) == hudi_rs.snapshot(path)


def _mor_table_with_logs(spark, path: str, version: str) -> HoodieTable:
    table = HoodieTable.create(spark, path, table_name=f"mor{version}", record_key_fields=["id"],
                               partition_fields=["part"], precombine_field="ts", table_type="MERGE_ON_READ",
                               options={**OPTIONS, "hoodie.compact.inline": "false",
                                        "hoodie.write.table.version": version, "hoodie.parquet.small.file.limit": "0"})
    for i in range(3):
        table.upsert(spark.createDataFrame([(1, "a", i, f"a{i}"), (2, "b", i, f"b{i}")], DDL))
    table = HoodieTable.for_path(spark, path)
    assert table.properties["hoodie.table.version"] == version
    assert any(s.log_files for s in table.file_system_view().latest_file_slices())
    return table


def test_merge_on_read_downgrade_compacts_version_8_log_files(hoodpy_spark, tmp_path):
    """A version 8 table whose slices have log files (named after their deltacommits, sliced by completion
    time) is compacted at version 8 before the downgrade, so version 6 readers never see such logs."""
    spark, path = hoodpy_spark, str(tmp_path / "mor8")
    table = _mor_table_with_logs(spark, path, "8")
    before, commits = _rows(table.read()), [i.timestamp for i in table.timeline.completed_commits()]

    assert spark.sql(f"CALL downgrade_table(path => '{path}', to_version => 'SIX')").collect() == [(True,)]
    table6 = _compacted_then_changed(spark, path, commits, "6")
    assert _rows(table6.read()) == before == [(1, "a", 2, "a2"), (2, "b", 2, "b2")]
    assert hudi_rs.snapshot(path) == hudi_rs.df_rows(table6.read())
    table6.upsert(spark.createDataFrame([(1, "a", 9, "after")], DDL))
    assert hudi_rs.df_rows(HoodieTable.for_path(spark, path).read()) == hudi_rs.snapshot(path)


def test_merge_on_read_version_9_is_refused_before_anything_is_compacted(hoodpy_spark, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "mor9")
    table = _mor_table_with_logs(spark, path, "9")
    commits = [i.timestamp for i in table.timeline.completed_commits()]
    with pytest.raises(TableVersionChangeError, match="table version 9: hoodpy changes versions 6 and 8"):
        spark.sql(f"CALL downgrade_table(path => '{path}', to_version => 'SIX')").collect()
    table = HoodieTable.for_path(spark, path)
    assert [i.timestamp for i in table.timeline.completed_commits()] == commits
    assert table.properties["hoodie.table.version"] == "9"
    assert any(s.log_files for s in table.file_system_view().latest_file_slices())

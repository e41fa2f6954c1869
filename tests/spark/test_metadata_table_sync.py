"""The metadata table kept in step by hoodpy (table version 6): after writes, an insert overwrite, a clean and a
rollback its listing equals storage's (validate_metadata_table_files) and the file-system view it gives equals
the one a storage listing gives; every data instant has a deltacommit of the same time; it compacts after
hoodie.metadata.compact.max.delta.commits; a crash between its deltacommit and the data commit is ignored by
readers and healed by the next write; hoodie.metadata.enable=false removes it and =true builds it again."""

from __future__ import annotations

from pathlib import Path

import pytest
from hoodpy_spark_helpers import SMALL_BLOOM, rows

from hoodpy.config.properties import load_table_properties
from hoodpy.file_group import fs_view
from hoodpy.file_group.fs_view import FileSystemView
from hoodpy.inspect.metadata_table import validate_files
from hoodpy.metadata_table.reader import MetadataTable
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable
from hoodpy.timeline import transitions
from hoodpy.timeline.instant import Action, State
from hoodpy.timeline.timeline import Timeline
from hoodpy.write import writer as writer_module

pytestmark = pytest.mark.spark

DDL = "id int, p string, ts long, v string"
MDT = (".hoodie", "metadata")
ON = {**SMALL_BLOOM, "hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
      "hoodie.clean.automatic": "false"}


def make_table(spark, path: str, options=ON) -> HoodieTable:
    return HoodieTable.create(spark, path, table_name="mdt_sync", record_key_fields=["id"], partition_fields=["p"],
                              precombine_field="ts", options=options)


def slices(view: FileSystemView) -> set[tuple]:
    return {(s.partition_path, s.file_id, s.base_file.name if s.base_file else None,
             tuple(lf.name for lf in s.log_files)) for s in view.latest_file_slices()}


def assert_in_step(table: HoodieTable) -> None:
    """Listing equal to storage's; the view through the metadata table equal to the one a listing gives."""
    storage = table.storage
    assert validate_files(storage).rows == []
    verbose = validate_files(storage, verbose=True).rows
    assert verbose and all(r[2] and r[3] and r[4] == r[5] for r in verbose)
    timeline = Timeline.load(storage)
    listing = fs_view._list(storage, None)
    by_storage = FileSystemView(timeline, fs_view._base_files(listing), None, fs_view._log_files(listing))
    assert slices(FileSystemView.load(storage, timeline)) == slices(by_storage)


def mdt_instants(path: str) -> dict[tuple[str, str], str]:
    """(instant time, action) -> state of the metadata table's instants."""
    return {(i.timestamp, i.action.value): i.state.value for i in MetadataTable(Storage(path)).timeline.instants}


def test_writes_overwrite_clean_and_rollback_keep_the_listing_in_step(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    commits = [table.upsert(spark.createDataFrame([(i, "a", i, "x"), (i + 10, "b", i, "y")], DDL)).instant_time
               for i in range(4)]
    overwrite = table.insert_overwrite(spark.createDataFrame([(100, "b", 9, "z")], DDL)).instant_time
    clean = table.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert clean is not None and clean.total_files_deleted > 0
    extra = table.upsert(spark.createDataFrame([(5, "c", 1, "new"), (0, "a", 7, "x'")], DDL)).instant_time
    assert_in_step(table)
    rollback = table.rollback_to_instant(extra)
    assert_in_step(table)

    assert rows(table.read(), "id", "p", "ts", "v") == \
        [(0, "a", 0, "x"), (1, "a", 1, "x"), (2, "a", 2, "x"), (3, "a", 3, "x"), (100, "b", 9, "z")]
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == "files"
    instants = mdt_instants(path)
    # Built at the first write (no data instant completed yet: 14 zeros + 010), a deltacommit per data instant
    # of the same time, compactions at <latest deltacommit>001; the rolled-back write's deltacommit is gone.
    assert instants[("00000000000000010", "deltacommit")] == "COMPLETED"
    for t in [*commits, overwrite, clean.instant_time]:
        assert instants[(t, "deltacommit")] == "COMPLETED"
    assert (extra, "deltacommit") not in instants
    compactions = sorted(t for (t, a), s in instants.items() if a == "commit")
    assert compactions and all(t[:-3] in commits + [overwrite, clean.instant_time] and t.endswith("001")
                               for t in compactions)
    assert rollback.timestamp not in {t for t, _ in instants}  # it deleted nothing the listing held
    files = {p.name for p in Path(path, *MDT, "files").iterdir()}
    assert any(n.endswith(f"_{compactions[-1]}.hfile") for n in files)


def test_a_crash_between_the_metadata_deltacommit_and_the_commit(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    before = rows(table.read(), "id", "p", "ts", "v")
    real_complete = transitions.complete

    def crash_on_the_data_instant(storage, inflight, data, **kwargs):
        if not storage.root.endswith("/.hoodie/metadata"):
            raise RuntimeError("process died")
        return real_complete(storage, inflight, data, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(transitions, "complete", crash_on_the_data_instant)
        m.setattr(writer_module.commit_step, "abort", lambda storage, instant: 0)  # a dead process cleans nothing
        with pytest.raises(RuntimeError, match="process died"):
            table.upsert(spark.createDataFrame([(3, "a", 1, "three"), (1, "a", 2, "one'")], DDL))
    timeline = Timeline.load(table.storage)
    [failed] = timeline.pending_writes()
    assert mdt_instants(path)[(failed.timestamp, "deltacommit")] == "COMPLETED"  # the orphan
    # Readers ignore it: same rows, and the listing shows the failed write's files as absent from it.
    assert rows(HoodieTable.for_path(spark, path).read(), "id", "p", "ts", "v") == before
    missing = validate_files(table.storage).rows
    assert missing and all(r[2] and not r[3] and failed.timestamp in r[1] for r in missing)

    after = table.upsert(spark.createDataFrame([(4, "b", 1, "four")], DDL))  # rolls the failed write back first
    instants = mdt_instants(path)
    assert (failed.timestamp, "deltacommit") not in instants
    assert instants[(after.instant_time, "deltacommit")] == "COMPLETED"
    assert not any(failed.timestamp in p.name for p in Path(path, *MDT, "files").iterdir())
    assert_in_step(table)
    assert rows(table.read(), "id", "p", "ts", "v") == [*before, (4, "b", 1, "four")]


def test_metadata_enable_false_removes_it_and_true_builds_it_again(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path, SMALL_BLOOM)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one")], DDL))
    assert not Path(path, *MDT).exists()  # off unless asked for
    table.upsert(spark.createDataFrame([(2, "b", 1, "two")], DDL), options={"hoodie.metadata.enable": "true"})
    instants = mdt_instants(path)
    built = [t for (t, a) in instants if a == "deltacommit" and t.endswith("010")]
    assert built == [Timeline.load(table.storage).completed_commits()[0].timestamp + "010"]  # <latest>010
    assert_in_step(table)
    table.upsert(spark.createDataFrame([(3, "a", 1, "three")], DDL))  # unset: the table has one, kept
    assert_in_step(table)
    table.upsert(spark.createDataFrame([(4, "a", 1, "four")], DDL), options={"hoodie.metadata.enable": "false"})
    assert not Path(path, *MDT).exists()
    assert load_table_properties(table.storage)["hoodie.table.metadata.partitions"] == ""
    assert rows(table.read(), "id") == [(1,), (2,), (3,), (4,)]


def test_a_pending_instant_defers_building_it(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path, SMALL_BLOOM)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    plan = table.clustering.schedule({"hoodie.clustering.plan.strategy.small.file.limit": "100000000"})
    assert plan is not None
    table.upsert(spark.createDataFrame([(3, "c", 1, "three")], DDL), options={"hoodie.metadata.enable": "true"})
    assert not Path(path, *MDT).exists()  # the pending clustering: Hudi does not build it then either
    table.clustering.execute(plan, options={"hoodie.metadata.enable": "true"})
    assert mdt_instants(path)[(plan.instant_time, "deltacommit")] == "COMPLETED"
    assert_in_step(table)
    assert Timeline.load(table.storage).find(plan.instant_time, Action.REPLACECOMMIT).state == State.COMPLETED


def test_archival_stops_before_the_latest_metadata_compaction(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path, {**ON, "hoodie.metadata.compact.max.delta.commits": "4",
                                     "hoodie.archive.automatic": "false"})
    commits = [table.upsert(spark.createDataFrame([(i, "a", i, "x")], DDL)).instant_time for i in range(7)]
    latest = MetadataTable(table.storage).latest_compaction_time()
    assert latest is not None and commits[0] < latest < commits[-1]
    result = table.archive({"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2",
                            "hoodie.cleaner.commits.retained": "1"})
    # Without the metadata table all but the newest commit would go; its log blocks count only while their
    # data instant is active, so archival keeps everything from its latest compaction on (Hudi's rule).
    archived = [i.timestamp for i in result.archived]
    assert archived == [t for t in commits if t < latest]
    assert [i.timestamp for i in Timeline.load(table.storage).completed_commits()] == \
        [t for t in commits if t >= latest]
    assert_in_step(table)
    assert rows(table.read(), "id") == [(i,) for i in range(7)]


def test_a_restore_to_a_savepoint_keeps_the_listing_in_step(spark, tmp_path):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    saved = table.upsert(spark.createDataFrame([(3, "a", 1, "three")], DDL)).instant_time
    table.savepoints.create(saved)
    later = [table.upsert(spark.createDataFrame([(i, "c", 1, "later")], DDL)).instant_time for i in (4, 5)]
    restore = table.savepoints.rollback_to(saved)
    instants = mdt_instants(path)
    # The first later commit was compacted into the base file (3 deltacommits after the one that built it):
    # the restore's deltacommit marks its files deleted. The second one's deltacommit went with its instant.
    assert MetadataTable(table.storage).latest_compaction_time() == later[0] + "001"
    assert (later[1], "deltacommit") not in instants
    assert instants[(restore.timestamp, "deltacommit")] == "COMPLETED"
    assert_in_step(table)
    assert rows(table.read(), "id") == [(1,), (2,), (3,)]
    assert MetadataTable(table.storage).read(Timeline.load(table.storage)).files("c") == {}


def test_an_unreadable_metadata_table_is_built_again_by_the_next_write(spark, tmp_path, caplog):
    path = str(tmp_path / "t")
    table = make_table(spark, path)
    table.upsert(spark.createDataFrame([(1, "a", 1, "one"), (2, "b", 1, "two")], DDL))
    for f in Path(path, *MDT, "files").glob("*.hfile"):
        f.write_bytes(b"lost")
    # Readers fall back to listing storage (and say so); the next write builds it again.
    assert rows(HoodieTable.for_path(spark, path).read(), "id") == [(1,), (2,)]
    assert "listing the table's files on storage instead" in caplog.text
    table.upsert(spark.createDataFrame([(3, "a", 1, "three")], DDL))
    assert "building it again" in caplog.text
    assert_in_step(table)
    assert rows(table.read(), "id") == [(1,), (2,), (3,)]


def test_merge_on_read_writes_and_compaction_keep_the_listing_in_step(spark, tmp_path):
    """A merge-on-read table: deltacommits that add log files, a compaction and a clean each update the metadata
    table (log files listed with their sizes); hudi-rs reads through it the rows hoodpy reads."""
    from tests.compat import hudi_rs

    path = str(tmp_path / "mor")
    table = HoodieTable.create(spark, path, table_name="mdt_mor", record_key_fields=["id"], partition_fields=["p"],
                               precombine_field="ts", table_type="MERGE_ON_READ", options=ON)
    table.bulk_insert(spark.createDataFrame([(i, "ab"[i % 2], 1, "x") for i in range(8)], DDL))
    table.upsert(spark.createDataFrame([(0, "a", 2, "u"), (1, "b", 2, "u")], DDL))
    assert list(Path(path).rglob(".*.log.*"))
    assert_in_step(table)
    table.delete(spark.createDataFrame([(2, "a", 0, None)], DDL))
    assert_in_step(table)
    table.compaction.run()
    assert_in_step(table)
    table.upsert(spark.createDataFrame([(3, "b", 3, "after")], DDL))
    assert_in_step(table)
    data_instants = {i.timestamp for i in Timeline.load(table.storage).completed_commits()}
    assert data_instants <= {t for (t, _), state in mdt_instants(path).items() if state == "COMPLETED"}
    assert rows(table.read(), "id", "v") == [(0, "u"), (1, "u"), (3, "after"), (4, "x"), (5, "x"), (6, "x"),
                                             (7, "x")]
    assert hudi_rs.df_rows(table.read()) == hudi_rs.snapshot(path)

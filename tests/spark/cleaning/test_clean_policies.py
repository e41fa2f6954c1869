"""Cleaning end to end: each policy deletes exactly the files no retained instant reads, time travel to
every retained instant returns what it did before the clean, and hudi-rs reads the cleaned table.

The table (two partitions, automatic cleaning off while building) has five commits:
c1 insert (a: g1, b: g2), c2 upsert a (g1 v2), c3 insert_overwrite b (g2 replaced by g3), c4 upsert a and b
(g1 v3, g3 v2), c5 upsert a (g1 v4): seven base files.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from tests.spark.hoodpy_spark_helpers import SMALL_BLOOM, data_files
from hoodpy.errors import InstantNotRetainedError, InvalidConfigError, PlanNotFoundError
from hoodpy.services.clean.execute import read_clean_metadata
from hoodpy.table import HoodieTable
from hoodpy.timeline.instant import parse_instant_time
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

DDL = "id int, part string, ts int, val string"
BUILD = {**SMALL_BLOOM, "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
         "hoodie.parquet.compression.codec": "snappy"}


def rows_of(df):
    return sorted((r.id, r.part, r.val, r._hoodie_commit_time) for r in df.collect())


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """(path, commit times, rows as of each commit, files as of each commit) of the five-commit table."""
    path = str(tmp_path_factory.mktemp("clean_policies") / "t")
    t = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["part"],
                           precombine_field="ts", options=BUILD)
    df = lambda data: spark.createDataFrame(data, DDL)  # noqa: E731
    commits = [
        t.insert(df([(1, "a", 1, "a1"), (2, "a", 1, "a2"), (3, "b", 1, "b3")])),
        t.upsert(df([(1, "a", 2, "a1v2")])),
        t.insert_overwrite(df([(4, "b", 3, "b4")])),
        t.upsert(df([(2, "a", 4, "a2v4"), (4, "b", 4, "b4v4")])),
        t.upsert(df([(1, "a", 5, "a1v5")])),
    ]
    times = [c.instant_time for c in commits]
    rows = {ts: rows_of(t.read(as_of=ts)) for ts in times}
    files = {ts: {bf.path for bf in t.file_system_view(as_of=ts).latest_base_files()} for ts in times}
    assert len(data_files(path)) == 7
    return path, times, rows, files


@pytest.fixture
def table(spark, built, tmp_path):
    path, times, rows, files = built
    copy = str(tmp_path / "t")
    shutil.copytree(path, copy)
    return HoodieTable.for_path(spark, copy, options=BUILD), times, rows, files


def all_files(path):
    return set(data_files(path))


def check_retained_reads(t, times, rows, retained):
    """Instants in ``retained`` read exactly as before the clean; the others raise InstantNotRetainedError."""
    for ts in times:
        if ts in retained:
            assert rows_of(t.read(as_of=ts)) == rows[ts], ts
            assert hudi_rs.keys_and_times(hudi_rs.snapshot(t.base_path, as_of=ts)) == {
                (str(r[0]), r[3]) for r in rows[ts]}, ts
        else:
            with pytest.raises(InstantNotRetainedError, match=ts):
                t.read(as_of=ts)


@pytest.mark.parametrize("policy", ["KEEP_LATEST_COMMITS", "KEEP_LATEST_BY_HOURS"])
def test_by_commits_policies(table, policy):
    t, times, rows, files = table
    before = all_files(t.base_path)
    options = {"hoodie.cleaner.policy": policy}
    now = None
    if policy == "KEEP_LATEST_COMMITS":
        options["hoodie.cleaner.commits.retained"] = "2"
    else:  # the cutoff now - 1h falls exactly on c4
        options["hoodie.cleaner.hours.retained"] = "1"
        now = parse_instant_time(times[3]) + timedelta(hours=1)
    result = t.cleaning.run(options, now=now)
    # Earliest retained c4: c3's files (the version each group had before c4) and everything newer stay.
    assert result.policy == policy and result.earliest_retained_instant == times[3]
    needed = files[times[2]] | files[times[3]] | files[times[4]]
    expected = before - needed
    assert len(expected) == 2  # g1 v1 and the replaced g2
    assert {p for ps in result.deleted_files.values() for p in ps} == expected
    assert all_files(t.base_path) == needed and result.failed_count == 0
    check_retained_reads(t, times, rows, retained=set(times[2:]))
    meta = read_clean_metadata(t.storage, result.instant_time)
    assert meta["totalFilesDeleted"] == 2 and meta["earliestCommitToRetain"] == times[3]
    assert t.cleaning.run(options, now=now) is None  # nothing left: no new clean instant
    assert len([i for i in t.timeline.instants if i.action.value == "clean"]) == 1


def test_keep_latest_file_versions(table):
    t, times, rows, files = table
    before = all_files(t.base_path)
    result = t.cleaning.run({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                             "hoodie.cleaner.fileversions.retained": "2"})
    # g1 keeps v3 and v4, g3 keeps both versions, the replaced g2 goes entirely.
    assert result.total_files_deleted == 3 and result.earliest_retained_instant == ""
    kept = all_files(t.base_path)
    assert before - kept == {p for ps in result.deleted_files.values() for p in ps}
    retained = {ts for ts in times if files[ts] <= kept}
    assert retained == {times[3], times[4]}
    check_retained_reads(t, times, rows, retained)


def test_savepoint_survives_cleans_and_rollback_restores_it(table):
    t, times, rows, files = table
    sp = t.savepoints.create(times[1], user="ops", comment="before overwrite")
    assert sp.instant_time == times[1] and sp.savepointed_by == "ops"
    assert [s.instant_time for s in t.savepoints.list()] == [times[1]]
    result = t.cleaning.run({"hoodie.cleaner.commits.retained": "1"})
    assert result.earliest_retained_instant == times[4]
    assert files[times[1]] <= all_files(t.base_path)  # pinned by the savepoint
    assert rows_of(t.read(as_of=times[1])) == rows[times[1]]
    with pytest.raises(InstantNotRetainedError):
        t.read(as_of=times[2])
    restore = t.savepoints.rollback_to(times[1])
    assert restore.action.value == "restore" and restore.is_completed
    assert rows_of(t.read()) == rows[times[1]]
    assert [i.timestamp for i in t.timeline.completed_commits()] == times[:2]
    assert hudi_rs.keys_and_times(hudi_rs.snapshot(t.base_path)) == {(str(r[0]), r[3]) for r in rows[times[1]]}
    # The table takes writes again after the restore.
    t.upsert(t.spark.createDataFrame([(9, "a", 9, "new")], DDL))
    assert len(t.read().collect()) == len(rows[times[1]]) + 1


def test_savepoint_errors_leave_the_table_unchanged(table):
    from hoodpy.errors import SavepointError

    t, times, _, _ = table
    before = sorted(p.name for p in (Path(t.base_path) / ".hoodie").iterdir())
    with pytest.raises(SavepointError, match="not a completed commit"):
        t.savepoints.create("20200101000000000")
    with pytest.raises(SavepointError, match="No savepoint"):
        t.savepoints.delete(times[0])
    with pytest.raises(SavepointError, match="No savepoint"):
        t.savepoints.rollback_to(times[0])
    assert sorted(p.name for p in (Path(t.base_path) / ".hoodie").iterdir()) == before
    t.savepoints.create(times[0])
    with pytest.raises(SavepointError, match="already savepointed"):
        t.savepoints.create(times[0])
    t.savepoints.delete(times[0])
    assert t.savepoints.list() == []


def test_clean_interrupted_half_way_is_finished_by_the_next_clean(table):
    t, times, rows, files = table
    options = {"hoodie.cleaner.commits.retained": "2"}
    instant = t.cleaning.schedule(options).instant_time
    plan = t.cleaning.plan(instant)
    assert plan.num_files == 2 and [p.instant_time for p in t.cleaning.pending()] == [instant]
    # What a crash mid-execution leaves: the clean inflight, half of its files deleted.
    hoodie = Path(t.base_path) / ".hoodie"
    (hoodie / f"{instant}.clean.inflight").write_bytes((hoodie / f"{instant}.clean.requested").read_bytes())
    first = [p for ps in plan.files_per_partition.values() for p in ps][0]
    (Path(t.base_path) / first).unlink()
    result = t.cleaning.run(options)
    assert result.instant_time == instant and result.total_files_deleted == 2 and result.failed_count == 0
    assert t.cleaning.pending() == []
    assert (hoodie / f"{instant}.clean").exists()
    check_retained_reads(t, times, rows, retained=set(times[2:]))


def test_clean_errors(table):
    t, _, _, _ = table
    with pytest.raises(InvalidConfigError, match="hoodie.cleaner.policy"):
        t.cleaning.run({"hoodie.cleaner.policy": "KEEP_EVERYTHING"})
    with pytest.raises(PlanNotFoundError):
        t.cleaning.execute("20200101000000000")
    assert [i for i in t.timeline.instants if i.action.value == "clean"] == []
    # A write with a bad clean or archival option fails before it commits anything.
    before = len(t.timeline.instants)
    batch = t.spark.createDataFrame([(1, "a", 9, "x")], DDL)
    with pytest.raises(InvalidConfigError, match="hoodie.cleaner.commits.retained"):
        t.upsert(batch, options={"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "0"})
    with pytest.raises(InvalidConfigError, match="hoodie.keep.max.commits"):
        t.upsert(batch, options={"hoodie.archive.automatic": "true", "hoodie.keep.max.commits": "5",
                                 "hoodie.keep.min.commits": "6"})
    assert len(t.timeline.instants) == before

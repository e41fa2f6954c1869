"""Table services on tables of version 8 and 9 (Hudi 1.x, timeline layout 2) through SQL: archival into the
LSM history, clustering, savepoints and restore. After each, hudi-rs reads the rows it read before (or, after
a restore, as of the savepoint), the instant files are named and encoded as Hudi 1.x writes them, and the
table version is unchanged. hudi-rs does not read the LSM history: reads reaching archived instants are
compared with what hudi-rs and hoodpy read before archival."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import fastavro
import pytest

from hoodpy.config.properties import parse_properties
from hoodpy.errors import ProcedureArgumentError, SavepointError
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts long, city string"
_names = itertools.count()


def _create(spark, database, path, version):
    name = f"{database}.v{version}_{next(_names)}"
    spark.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT, city STRING) USING hoodpy
                  PARTITIONED BY (city) LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.write.table.version' = '{version}',
                                 'hoodie.parquet.small.file.limit' = '0')""")
    return name


def _timeline(path):
    return sorted(p.name for p in Path(path, ".hoodie", "timeline").iterdir() if p.is_file())


def _props(path):
    return parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())


def _avro(path):
    reader = fastavro.reader(io.BytesIO(Path(path).read_bytes()))
    return json.loads(reader.metadata["avro.schema"]), next(iter(reader))


def _without_file_names(rows):
    return [{k: v for k, v in r.items() if k != "_hoodie_file_name"} for r in rows]


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def test_archival_into_the_lsm_history_keeps_every_read(hoodpy_spark, database, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "t")
    name = _create(spark, database, path, 8)
    for i in range(5):
        spark.sql(f"INSERT INTO {name} VALUES ({i}, 'n{i}', {i}, '{'sf' if i % 2 else 'la'}'), (9, 'u{i}', {i}, 'la')")
    table = HoodieTable.for_path(spark, path)
    commits = table.timeline.completed_commits()
    completions = [c.completion_time for c in commits]
    as_of = {c: hudi_rs.snapshot(path, as_of=c) for c in completions}
    windows = list(zip(completions, completions[1:]))
    incremental = {w: hudi_rs.incremental(path, *w) for w in windows}
    shown = call(spark, f"CALL show_commits(table => '{name}')")

    assert call(spark, f"CALL archive_commits(table => '{name}', min_commits => 2, max_commits => 3, "
                       "retain_commits => 1)") == [(0,)]
    history = Path(path, ".hoodie", "timeline", "history")
    archived = [c.timestamp for c in commits[:3]]
    assert sorted(p.name for p in history.iterdir()) == [f"{archived[0]}_{archived[-1]}_0.parquet", "_version_",
                                                         "manifest_1"]
    assert json.loads((history / "manifest_1").read_text())["files"][0]["fileLen"] == \
        (history / f"{archived[0]}_{archived[-1]}_0.parquet").stat().st_size
    assert not [n for n in _timeline(path) if n.startswith(tuple(archived))]
    assert hudi_rs.completed_instants(path) == [c.timestamp for c in commits[3:]]
    assert _props(path)["hoodie.table.version"] == "8"

    table = HoodieTable.for_path(spark, path)
    assert hudi_rs.df_rows_like(table.read(), as_of[completions[-1]]) == as_of[completions[-1]]
    assert hudi_rs.snapshot(path) == as_of[completions[-1]]
    for c in completions:  # time travel to archived commits: their completion times come from the history
        assert hudi_rs.df_rows_like(table.read(as_of=c), as_of[c]) == as_of[c], c
    for w in windows:  # windows over archived commits: selected by completion time, metadata from the history
        assert hudi_rs.df_rows_like(table.read_incremental(*w), incremental[w]) == incremental[w], w

    # Archived instants in the inspection procedures, with the figures show_commits gave while active.
    rows = call(spark, f"CALL show_timeline(table => '{name}', showArchived => true, limit => 100)")
    assert [(r[0], r[1], r[6]) for r in rows if r[6] == "ARCHIVED"] == [(t, "commit", "ARCHIVED")
                                                                         for t in reversed(archived)]
    old = call(spark, f"CALL show_archived_commits(table => '{name}', start_ts => '{archived[0]}', "
                      f"end_ts => '{archived[-1]}')")
    assert [(r[0], *r[2:]) for r in old] == [(r[0], *r[3:]) for r in shown if r[0] in archived]
    assert [r[1] for r in old] == [c for c in reversed(completions[:3])]  # state transition = completion time


def test_clustering_on_version_9_writes_hudi_1x_instants(hoodpy_spark, database, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "t")
    name = _create(spark, database, path, 9)
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'sf'), (2, 'b', 1, 'la')")
    spark.sql(f"INSERT INTO {name} VALUES (3, 'c', 1, 'sf'), (4, 'd', 1, 'la')")
    before = hudi_rs.snapshot(path)
    last = hudi_rs.completed_instants(path)[-1]
    assert len(hudi_rs.file_slices(path)) == 4
    ((instant, groups, state, _),) = call(spark, f"CALL run_clustering(table => '{name}', order => 'name')")
    assert (groups, state) == (2, "COMPLETED")

    names = _timeline(path)
    [completed] = [n for n in names if n.startswith(f"{instant}_")]
    assert completed.endswith(".replacecommit")
    assert {f"{instant}.clustering.requested", f"{instant}.clustering.inflight"} <= set(names)
    assert not [n for n in names if n.startswith(instant) and ".replacecommit." in n]
    timeline = Path(path, ".hoodie", "timeline")
    assert (timeline / f"{instant}.clustering.inflight").read_bytes() == b""  # as Hudi 1.x leaves it
    schema, plan = _avro(timeline / f"{instant}.clustering.requested")
    plan_fields = [f["name"] for f in schema["fields"][1]["type"][1]["fields"]]
    assert schema["name"].endswith("HoodieRequestedReplaceMetadata") and "missingSchedulePartitions" in plan_fields
    assert plan["operationType"] == "CLUSTER" and len(plan["clusteringPlan"]["inputGroups"]) == 2
    _, meta = _avro(timeline / completed)
    assert meta["operationType"] == "CLUSTER" and sorted(meta["partitionToReplaceFileIds"]) == ["city=la", "city=sf"]

    # The same rows and meta fields (Hudi preserves them), in new files: one per partition.
    assert _without_file_names(hudi_rs.snapshot(path)) == _without_file_names(before)
    assert len(hudi_rs.file_slices(path)) == 2
    assert hudi_rs.snapshot(path, as_of=last) == before and len(hudi_rs.file_slices(path, as_of=last)) == 4
    assert hudi_rs.completed_instants(path)[-1] == instant
    spark.sql(f"UPDATE {name} SET name = 'cc' WHERE id = 3")  # the clustered file takes updates
    assert [r["name"] for r in hudi_rs.snapshot(path) if r["id"] == 3] == ["cc"]
    props = _props(path)
    assert (props["hoodie.table.version"], props["hoodie.table.ordering.fields"]) == ("9", "ts")


def test_savepoint_and_restore_on_version_8(hoodpy_spark, database, tmp_path):
    spark, path = hoodpy_spark, str(tmp_path / "t")
    name = _create(spark, database, path, 8)
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'sf'), (2, 'b', 1, 'la')")
    spark.sql(f"UPDATE {name} SET name = 'bb', ts = 2 WHERE id = 2")
    saved = hudi_rs.completed_instants(path)[-1]
    at_savepoint = hudi_rs.snapshot(path)
    assert call(spark, f"CALL create_savepoint(table => '{name}', commit_time => '{saved}')") == [(True,)]
    spark.sql(f"INSERT INTO {name} VALUES (3, 'c', 1, 'sf')")
    spark.sql(f"DELETE FROM {name} WHERE id = 1")
    assert len(hudi_rs.snapshot(path)) == 2
    assert call(spark, f"CALL rollback_to_savepoint(table => '{name}', instant_time => '{saved}')") == [(True,)]

    assert hudi_rs.snapshot(path) == at_savepoint
    assert len(hudi_rs.completed_instants(path)) == 2 and hudi_rs.completed_instants(path)[-1] == saved
    ours = HoodieTable.for_path(spark, path).read()
    assert hudi_rs.df_rows_like(ours, at_savepoint) == at_savepoint
    names = _timeline(path)
    assert f"{saved}.savepoint.inflight" in names and [n for n in names if n.startswith(f"{saved}_") and
                                                       n.endswith(".savepoint")]
    [restore] = [n for n in names if n.endswith(".restore")]
    restore_time = restore.split("_")[0]
    assert {f"{restore_time}.restore.requested", f"{restore_time}.restore.inflight"} <= set(names)
    assert not [p for p in Path(path, ".hoodie").iterdir() if p.is_file() and p.name[:1].isdigit()]
    assert _props(path)["hoodie.table.version"] == "8"
    assert [r[0] for r in call(spark, f"CALL show_savepoints(table => '{name}')")] == [saved]
    spark.sql(f"INSERT INTO {name} VALUES (4, 'd', 1, 'la')")  # writes go on after the restore
    assert sorted(r["id"] for r in hudi_rs.snapshot(path)) == [1, 2, 4]


@pytest.mark.parametrize("statement, error, message", [
    ("CALL archive_commits(table => '{name}', min_commits => 3, max_commits => 3, retain_commits => 1)",
     ProcedureArgumentError, "max_commits \\(3\\) must be greater than min_commits"),
    ("CALL rollback_to_savepoint(table => '{name}', instant_time => '20200101000000000')", SavepointError,
     "No savepoint at 20200101000000000"),
    ("CALL run_clustering(table => '{name}', order => 'no_such_column')", ProcedureArgumentError,
     "sort column 'no_such_column' does not exist"),
])
def test_bad_service_calls_leave_a_version_8_table_unchanged(hoodpy_spark, database, tmp_path, statement, error,
                                                            message):
    spark, path = hoodpy_spark, str(tmp_path / "t")
    name = _create(spark, database, path, 8)
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'sf')")
    spark.sql(f"INSERT INTO {name} VALUES (2, 'b', 1, 'sf')")
    files = {str(p.relative_to(path)): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}
    with pytest.raises(error, match=message):
        spark.sql(statement.format(name=name)).collect()
    assert {str(p.relative_to(path)): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()} == files

"""SQL only: create a hoodpy table, insert, merge, update, delete, time travel, CALL run_clustering,
run_clean and show_commits, all through ``spark.sql``; checked against expected rows and against hudi-rs
reading the same files. The table services run last (the ``serviced`` fixture is first requested by the
last tests of the module), since cleaning removes the files that time travel to the first commits reads."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTableBuilder

pytestmark = pytest.mark.spark

COLUMNS = ("id", "name", "ts", "city")


def rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def hudi_rs_rows(path, as_of=None):
    options = HudiReadOptions()
    if as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    batches = HudiTableBuilder.from_base_uri(path).build().read(options)
    if not batches:
        return []
    table = pa.Table.from_batches(batches).select(list(COLUMNS))
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.fixture(scope="module")
def history(hoodpy_spark, database, tmp_path_factory):
    """Runs the statements once; returns what each step saw."""
    spark = hoodpy_spark
    t = f"{database}.rides"
    location = str(tmp_path_factory.mktemp("e2e") / "rides")
    seen = {"location": location}
    spark.sql(f"""
        /* {{"app": "dbt", "node_id": "model.e2e.rides"}} */
        CREATE TABLE {t} (id INT, name STRING, ts BIGINT, city STRING) USING hoodpy
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'ann', 10, 'sf'), (2, 'bob', 10, 'sf'), (3, 'cy', 10, 'nyc')")
    seen["after_insert"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    spark.sql(f"""
        MERGE INTO {t} AS t
        USING (SELECT * FROM VALUES (1, 'ANN', 20L, 'sf', false), (3, 'cy', 20L, 'nyc', true),
                                    (4, 'dee', 20L, 'la', false), (2, 'old', 5L, 'sf', false)
               AS v(id, name, ts, city, gone)) AS s
        ON t.id = s.id
        WHEN MATCHED AND s.gone THEN DELETE
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *""")
    seen["after_merge"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    spark.sql(f"UPDATE {t} SET name = upper(name), ts = ts + 1 WHERE city = 'sf'")
    seen["after_update"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    spark.sql(f"DELETE FROM {t} WHERE id IN (SELECT id FROM {t} WHERE city = 'la')")
    seen["after_delete"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    seen["commits"] = [tuple(r) for r in spark.sql(f"CALL show_commits(table => '{t}')").collect()]
    seen["table"] = t
    return seen


def test_insert(history):
    assert history["after_insert"] == [(1, "ann", 10, "sf"), (2, "bob", 10, "sf"), (3, "cy", 10, "nyc")]


def test_operations_recorded_in_commit_metadata(history):
    operations = []
    for commit in sorted(history["commits"]):
        meta = json.loads((Path(history["location"]) / ".hoodie" / f"{commit[0]}.commit").read_text())
        operations.append(meta["operationType"])
    # INSERT INTO upserts by default in hoodpy; MERGE and UPDATE upsert; DELETE deletes.
    assert operations == ["UPSERT", "UPSERT", "UPSERT", "DELETE"]


def test_merge_updates_deletes_inserts_and_respects_event_time(history):
    # id 2's source row is older (ts 5 < 10): event-time ordering keeps the stored row, as Hudi does.
    assert history["after_merge"] == [(1, "ANN", 20, "sf"), (2, "bob", 10, "sf"), (4, "dee", 20, "la")]


def test_update(history):
    assert history["after_update"] == [(1, "ANN", 21, "sf"), (2, "BOB", 11, "sf"), (4, "dee", 20, "la")]


def test_delete_with_subquery(history):
    assert history["after_delete"] == [(1, "ANN", 21, "sf"), (2, "BOB", 11, "sf")]


def test_show_commits_lists_each_write_newest_first(history):
    commits = history["commits"]
    assert len(commits) == 4
    assert [c[0] for c in commits] == sorted((c[0] for c in commits), reverse=True)
    assert {c[2] for c in commits} == {"commit"}
    delete, update, merge, insert = commits
    # (commit_time, state_transition_time, action, bytes, files_added, files_updated, partitions,
    #  records_written, update_records_written, errors)
    assert insert[4:] == (2, 0, 2, 3, 0, 0)
    assert merge[4] == 1 and merge[6] == 3  # a new file group in 'la'; sf, nyc and la written
    assert update[7:9] == (2, 2)
    assert delete[7] == 0


def test_time_travel_to_each_commit(hoodpy_spark, history):
    t = history["table"]
    instants = sorted(c[0] for c in history["commits"])
    steps = ["after_insert", "after_merge", "after_update", "after_delete"]
    for instant, step in zip(instants, steps, strict=True):
        for clause in (f"TIMESTAMP AS OF '{instant}'", f"VERSION AS OF {instant}"):
            assert rows(hoodpy_spark, f"SELECT {', '.join(COLUMNS)} FROM {t} {clause}") == history[step]


def test_time_travel_by_timestamp_string(hoodpy_spark, history):
    t = history["table"]
    first = sorted(c[0] for c in history["commits"])[0]
    moment = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
    assert rows(hoodpy_spark, f"SELECT {', '.join(COLUMNS)} FROM {t} TIMESTAMP AS OF '{moment}'") == \
        history["after_insert"]


def test_join_of_two_snapshots(hoodpy_spark, history):
    t = history["table"]
    first = sorted(c[0] for c in history["commits"])[0]
    got = rows(hoodpy_spark, f"""
        WITH now AS (SELECT id, name FROM {t})
        SELECT now.id, past.name, now.name FROM now JOIN {t} TIMESTAMP AS OF '{first}' AS past ON now.id = past.id""")
    assert got == [(1, "ann", "ANN"), (2, "bob", "BOB")]


def test_hudi_rs_reads_what_sql_wrote(history):
    path = history["location"]
    assert hudi_rs_rows(path) == history["after_delete"]
    instants = sorted(c[0] for c in history["commits"])
    assert hudi_rs_rows(path, as_of=instants[1]) == history["after_merge"]


# -- table services through CALL, last: cleaning removes the files older instants need ----------------
@pytest.fixture(scope="module")
def serviced(hoodpy_spark, history):
    """After the tests above: CALL run_clean (keeping one commit), run_clustering, show_commits. (Cleaning
    first: file groups that clustering replaced are cleaned only once the clustering leaves retention.)"""
    spark, t = hoodpy_spark, history["table"]
    seen = {"parquet_before_clean": len(list(Path(history["location"]).rglob("*.parquet")))}
    seen["clean"] = [tuple(r) for r in spark.sql(f"CALL run_clean(table => '{t}', retain_commits => 1)").collect()]
    seen["parquet_after_clean"] = len(list(Path(history["location"]).rglob("*.parquet")))
    seen["after_clean"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    seen["clustering"] = [tuple(r) for r in spark.sql(
        f"CALL run_clustering(table => '{t}', order => 'name', show_involved_partition => true)").collect()]
    seen["after_clustering"] = rows(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")
    seen["show_clustering"] = [tuple(r) for r in spark.sql(f"CALL show_clustering(table => '{t}')").collect()]
    seen["commits"] = [tuple(r) for r in spark.sql(f"CALL show_commits(table => '{t}')").collect()]
    return seen


def test_run_clean_deletes_old_file_versions(hoodpy_spark, history, serviced):
    from hoodpy.errors import InstantNotRetainedError

    ((start, _, deleted, earliest, _, version),) = serviced["clean"]
    assert deleted > 0 and serviced["parquet_after_clean"] == serviced["parquet_before_clean"] - deleted
    assert earliest == history["commits"][0][0]  # one commit retained: the latest write (the DELETE)
    assert serviced["after_clean"] == history["after_delete"]
    first = sorted(c[0] for c in history["commits"])[0]
    with pytest.raises(InstantNotRetainedError, match=first):
        hoodpy_spark.sql(f"SELECT * FROM {history['table']} VERSION AS OF {first}").collect()


def test_run_clustering_rewrites_without_changing_rows(history, serviced):
    ((instant, groups, state, partitions),) = serviced["clustering"]
    assert state == "COMPLETED" and "city=sf" in partitions.split(",") and groups == len(partitions.split(","))
    assert serviced["after_clustering"] == history["after_delete"]
    assert serviced["show_clustering"] == [(instant, groups, "COMPLETED", "*")]
    newest = serviced["commits"][0]
    assert (newest[0], newest[2]) == (instant, "replacecommit")
    assert [c[0] for c in serviced["commits"][1:]] == [c[0] for c in history["commits"]]
    assert hudi_rs_rows(history["location"]) == history["after_delete"]

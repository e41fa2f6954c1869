"""Tables without a primary key in SQL, as Hudi 0.14+ Spark SQL has them: ``CREATE TABLE ... USING hoodpy``
without ``primaryKey`` makes a table whose record keys are generated (``<instant>_<task>_<row>``); INSERT INTO
adds rows (duplicates included), UPDATE and DELETE locate rows by their stored ``_hoodie_record_key``, MERGE INTO
keeps the stored keys of the rows it matches and generates keys for the rows it inserts (HUDI-6464); hudi-rs
reads every step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import InvalidRecordError
from hoodpy.table import HoodieTable
from hoodpy.storage import Storage
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

COLUMNS = ["_hoodie_record_key", "_hoodie_commit_time", "_hoodie_partition_path", "id", "v", "ts", "city"]
KEY = re.compile(r"^(\d{17})_\d+_\d+$")


def state(spark, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(f"SELECT {', '.join(COLUMNS)} FROM {name}").collect())


def assert_hudi_rs_agrees(spark, name: str, path: str) -> list[tuple]:
    ours = state(spark, name)
    assert sorted(tuple(r[c] for c in COLUMNS) for r in hudi_rs.snapshot(path)) == ours
    return ours


def create_keyless(spark, name: str, path: str, table_type: str) -> None:
    """A partitioned table without primaryKey (generated keys), with an ordering field."""
    spark.sql(f"CREATE TABLE {name} (id INT, v STRING, ts BIGINT, city STRING) USING hoodpy PARTITIONED BY (city) "
              f"LOCATION '{path}' TBLPROPERTIES (preCombineField = 'ts', type = '{table_type}')")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_keyless_table_insert_update_delete(hoodpy_spark, database, tmp_path, table_type):
    spark = hoodpy_spark
    name, path = f"{database}.keyless_{table_type}", str(tmp_path / "keyless")
    create_keyless(spark, name, path, table_type)
    props = load_table_properties(Storage(path))
    assert "hoodie.table.recordkey.fields" not in props and props["hoodie.table.partition.fields"] == "city"
    assert "primaryKey" not in dict(tuple(r) for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect())

    # INSERT INTO: every row is a new record, a repeated row too (no key to upsert by).
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'sf'), (2, 'b', 1, 'la'), (1, 'a', 1, 'sf')")
    spark.sql(f"INSERT INTO {name} SELECT 3, 'c', 2, 'sf'")
    rows = assert_hudi_rs_agrees(spark, name, path)
    assert sorted(r[3:] for r in rows) == [(1, "a", 1, "sf"), (1, "a", 1, "sf"), (2, "b", 1, "la"), (3, "c", 2, "sf")]
    assert len({r[0] for r in rows}) == 4
    for key, commit_time, partition, *_, city in rows:  # keys: <instant>_<task>_<row>
        assert KEY.match(key).group(1) == commit_time and partition == f"city={city}"
    keys = {r[3:]: r[0] for r in rows if r[3] != 1}

    # UPDATE: the matching rows keep their keys, the others are untouched.
    spark.sql(f"UPDATE {name} SET v = concat(v, '!'), ts = 9 WHERE id >= 2")
    rows = assert_hudi_rs_agrees(spark, name, path)
    assert sorted(r[3:] for r in rows) == [(1, "a", 1, "sf"), (1, "a", 1, "sf"), (2, "b!", 9, "la"),
                                           (3, "c!", 9, "sf")]
    assert {r[3]: r[0] for r in rows if r[3] != 1} == {k[0]: v for k, v in keys.items()}
    assert len({r[1] for r in rows if r[3] != 1}) == 1  # one commit updated both partitions
    if table_type == "mor":  # the update went to log files, which hudi-rs merged above
        assert list(Path(path).rglob(".*.log.*"))

    # DELETE: both copies of id 1 (two records) go; the rest stays as it was.
    before = [r for r in rows if r[3] != 1]
    spark.sql(f"DELETE FROM {name} WHERE id = 1")
    assert assert_hudi_rs_agrees(spark, name, path) == before
    spark.sql(f"DELETE FROM {name} WHERE id = 42")  # nothing matches: no commit
    assert len(hudi_rs.completed_instants(path)) == 4


def test_keyless_non_partitioned_ctas(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    name, path = f"{database}.keyless_ctas", str(tmp_path / "keyless_ctas")
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}' "
              "AS SELECT id, concat('v', id) AS v FROM range(4)")
    spark.sql(f"UPDATE {name} SET v = 'x' WHERE id = 1")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    expected = [(0, "v0"), (1, "x"), (3, "v3")]
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, v FROM {name}").collect()) == expected
    theirs = hudi_rs.snapshot(path)
    assert sorted((r["id"], r["v"]) for r in theirs) == expected
    assert all(KEY.match(r["_hoodie_record_key"]) for r in theirs)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_keyless_merge_into(hoodpy_spark, database, tmp_path, table_type):
    spark = hoodpy_spark
    name, path = f"{database}.keyless_merge_{table_type}", str(tmp_path / "keyless_merge")
    create_keyless(spark, name, path, table_type)
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1, 'sf'), (2, 'b', 1, 'la'), (3, 'c', 1, 'sf'), (4, 'd', 1, 'la')")
    before = {r[3]: r for r in assert_hudi_rs_agrees(spark, name, path)}

    # One MERGE: a matched delete, a matched update, two inserts (one into a new partition). The ON condition
    # is not on a record key (there is none): any condition goes, as in Hudi.
    spark.sql(f"""MERGE INTO {name} t
        USING (SELECT * FROM VALUES (2, 'B', 5, 'la'), (3, 'x', 5, 'sf'), (7, 'g', 5, 'sf'), (8, 'h', 5, 'ny')
               AS src(id, v, ts, city)) s
        ON t.id = s.id AND t.city = s.city
        WHEN MATCHED AND s.id = 3 THEN DELETE
        WHEN MATCHED THEN UPDATE SET v = s.v, ts = s.ts
        WHEN NOT MATCHED THEN INSERT *""")
    instants = hudi_rs.completed_instants(path)
    assert len(instants) == 2  # one commit for all three clauses
    merged = instants[-1]
    rows = {r[3]: r for r in assert_hudi_rs_agrees(spark, name, path)}
    assert sorted(r[3:] for r in rows.values()) == [(1, "a", 1, "sf"), (2, "B", 5, "la"), (4, "d", 1, "la"),
                                                   (7, "g", 5, "sf"), (8, "h", 5, "ny")]
    assert rows[1] == before[1] and rows[4] == before[4]  # untouched: same key, same commit
    assert rows[2][0] == before[2][0] and rows[2][1] == merged  # updated: its key kept
    new_keys = [rows[7][0], rows[8][0]]
    for key in new_keys:  # Hudi's generated keys: <instant>_<Spark partition>_<row>, the instant the MERGE's
        assert KEY.match(key).group(1) == merged
    assert len(set(new_keys) | {r[0] for r in before.values()}) == 6
    if table_type == "mor":  # the update and the delete went to log files
        assert list(Path(path).rglob(".*.log.*"))

    # Insert-only MERGE on another condition: the matched source row is skipped, the other one inserted.
    spark.sql(f"""MERGE INTO {name} t USING (SELECT * FROM VALUES ('g', 9, 'sf'), ('z', 9, 'sf') AS src(v, ts, city)) s
        ON t.v = s.v WHEN NOT MATCHED THEN INSERT (id, v, ts, city) VALUES (9, s.v, s.ts, s.city)""")
    after = {r[3]: r for r in assert_hudi_rs_agrees(spark, name, path)}
    assert {k: v for k, v in after.items() if k != 9} == rows
    assert after[9][3:] == (9, "z", 9, "sf") and KEY.match(after[9][0]).group(1) == after[9][1] != merged


def test_keyless_upsert_generates_keys_for_rows_without_one(hoodpy_spark, database, tmp_path):
    """The engine contract the MERGE uses: in an upsert into a table with generated keys, rows read from the table
    keep their ``_hoodie_record_key``, rows whose key is null are new records and get generated keys; a delete
    needs a stored key."""
    spark = hoodpy_spark
    name, path = f"{database}.keyless_upsert", str(tmp_path / "keyless_upsert")
    spark.sql(f"CREATE TABLE {name} (id INT, v STRING) USING hoodpy LOCATION '{path}'")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')")
    table = HoodieTable.for_path(spark, path)
    stored = {r["id"]: r["_hoodie_record_key"] for r in hudi_rs.snapshot(path)}
    changed = table.read().filter("id = 1").selectExpr("_hoodie_record_key", "id", "'a2' AS v")
    added = spark.createDataFrame([(None, 3, "c"), (None, 4, "d")], "_hoodie_record_key string, id int, v string")
    result = table.upsert(changed.unionByName(added))
    theirs = {r["id"]: (r["_hoodie_record_key"], r["v"]) for r in hudi_rs.snapshot(path)}
    assert theirs[1] == (stored[1], "a2") and theirs[2] == (stored[2], "b")
    assert {KEY.match(theirs[i][0]).group(1) for i in (3, 4)} == {result.instant_time}
    assert len({k for k, _ in theirs.values()}) == 4

    gone = spark.createDataFrame([(None, 3, "c", True)], "_hoodie_record_key string, id int, v string, "
                                 "_hoodie_is_deleted boolean")
    with pytest.raises(InvalidRecordError, match="null or empty record key"):
        table.upsert(gone)
    assert {r["id"]: (r["_hoodie_record_key"], r["v"]) for r in hudi_rs.snapshot(path)} == theirs

"""Tables without a primary key in SQL, as Hudi 0.14+ Spark SQL has them: ``CREATE TABLE ... USING hoodpy``
without ``primaryKey`` makes a table whose record keys are generated (``<instant>_<task>_<row>``); INSERT INTO
adds rows (duplicates included), UPDATE and DELETE locate rows by their stored ``_hoodie_record_key``; hudi-rs
reads every step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import UnsupportedStatementError
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


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_keyless_table_insert_update_delete(hoodpy_spark, database, tmp_path, table_type):
    spark = hoodpy_spark
    name, path = f"{database}.keyless_{table_type}", str(tmp_path / "keyless")
    spark.sql(f"CREATE TABLE {name} (id INT, v STRING, ts BIGINT, city STRING) USING hoodpy PARTITIONED BY (city) "
              f"LOCATION '{path}' TBLPROPERTIES (preCombineField = 'ts', type = '{table_type}')")
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

    with pytest.raises(UnsupportedStatementError, match="record keys are generated"):
        spark.sql(f"MERGE INTO {name} t USING (SELECT 2 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert state(spark, name) == before


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

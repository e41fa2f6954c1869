"""SQL INSERT, UPDATE and DELETE into the Java Hudi 0.14 copy-on-write samples (table version 6), adopted with
``CREATE TABLE ... USING hoodpy LOCATION``: hudi-rs reads the expected rows afterwards, the three writes are three
new instants after Java's, whose history reads as before, and ``hoodie.table.version`` stays 6.

Rows are modelled by ``id`` (the complex key's first field, the other samples' key): the insert copies the rows
of one id under id + 1000, the update adds 7 to ``intField`` of another id's rows, the delete removes a third's
(in that order)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hudi_rs
from hoodpy.config.properties import parse_properties
from java_samples import unzip_sample
from sql_ext import disable, enable

pytestmark = [pytest.mark.compat, pytest.mark.spark]

SAMPLES = ["v6_nonpartitioned", "v6_complexkeygen_hivestyle", "v6_simplekeygen_nonhivestyle_overwritetable"]


@pytest.fixture(scope="module")
def hoodpy_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


def _rows(rows: list[dict], columns: list[str]) -> list[tuple]:
    return sorted((tuple(r[c] for c in columns) for r in rows), key=repr)


@pytest.mark.parametrize("name", SAMPLES)
def test_sql_insert_update_delete_keep_version_6(hoodpy_spark, tmp_path, name):
    spark = hoodpy_spark
    src = unzip_sample(name, tmp_path / "src")
    path = str(tmp_path / name)
    shutil.copytree(src, path)
    props_file = Path(path, ".hoodie", "hoodie.properties")
    assert parse_properties(props_file.read_text())["hoodie.table.version"] == "6"
    before = hudi_rs.snapshot(path)
    columns = [c for c in before[0] if c not in hudi_rs.META]
    old_instants = hudi_rs.completed_instants(path)
    ids = sorted({r["id"] for r in before})
    # The overwritten sample holds one id: the update then goes to the inserted copy, the delete to Java's row.
    copied, updated, deleted = ids[:3] if len(ids) >= 3 else (ids[0], ids[0] + 1000, ids[0])
    table = f"v6_sql_{name}"
    spark.sql(f"CREATE TABLE {table} USING hoodpy LOCATION '{path}'")
    try:
        select = ", ".join("id + 1000 AS id" if c == "id" else c for c in columns)
        spark.sql(f"INSERT INTO {table} SELECT {select} FROM {table} WHERE id = {copied}")
        spark.sql(f"UPDATE {table} SET intField = intField + 7 WHERE id = {updated}")
        spark.sql(f"DELETE FROM {table} WHERE id = {deleted}")
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table}")

    expected = [{c: r[c] for c in columns} for r in before]
    expected += [{**r, "id": r["id"] + 1000} for r in expected if r["id"] == copied]
    expected = [{**r, "intField": r["intField"] + 7} if r["id"] == updated else r for r in expected]
    expected = [r for r in expected if r["id"] != deleted]
    assert _rows(hudi_rs.snapshot(path), columns) == _rows(expected, columns)
    assert parse_properties(props_file.read_text())["hoodie.table.version"] == "6"
    instants = hudi_rs.completed_instants(path)
    assert instants[:len(old_instants)] == old_instants and len(instants) == len(old_instants) + 3
    assert all(Path(path, ".hoodie", f"{t}.commit").exists() for t in instants[len(old_instants):])  # layout 1
    assert hudi_rs.snapshot(path, as_of=old_instants[-1]) == hudi_rs.snapshot(str(src), as_of=old_instants[-1])


def test_sql_writes_into_the_empty_version_6_sample(hoodpy_spark, tmp_path):
    """Java's table with properties and no commits: adopted through SQL, it takes a first insert, an update and a
    delete; hudi-rs reads the rows; the version stays 6."""
    spark = hoodpy_spark
    path = str(tmp_path / "v6_empty")
    shutil.copytree(unzip_sample("v6_empty", tmp_path / "src"), path)
    spark.sql(f"CREATE TABLE v6_sql_empty USING hoodpy LOCATION '{path}'")
    try:
        assert spark.table("v6_sql_empty").columns[-3:] == ["id", "name", "isActive"]
        assert spark.table("v6_sql_empty").count() == 0
        spark.sql("INSERT INTO v6_sql_empty VALUES (1, 'a', true), (2, 'b', false), (3, 'c', true)")
        spark.sql("UPDATE v6_sql_empty SET name = 'bb' WHERE id = 2")
        spark.sql("DELETE FROM v6_sql_empty WHERE id = 3")
    finally:
        spark.sql("DROP TABLE IF EXISTS v6_sql_empty")
    assert [(r["id"], r["name"], r["isActive"]) for r in hudi_rs.snapshot(path)] == [(1, "a", True),
                                                                                     (2, "bb", False)]
    assert parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())["hoodie.table.version"] == "6"
    instants = hudi_rs.completed_instants(path)
    assert len(instants) == 3 and all(Path(path, ".hoodie", f"{t}.commit").exists() for t in instants)

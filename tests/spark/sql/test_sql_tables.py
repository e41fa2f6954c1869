"""hoodpy tables in SQL: CREATE TABLE ... USING hoodpy (catalog entry, table config, errors), CTAS,
INSERT OVERWRITE, TRUNCATE, DROP [PURGE], reads from other statements, and what plain Spark sees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sql_ext import disable, enable, table_for_name
from hoodpy.config.properties import load_table_properties
from hoodpy.errors import HoodieError, InvalidConfigError
from sql_ext.catalog import PLACEHOLDER
from hoodpy.errors import (
    CatalogTableExistsError,
    InvalidStatementError,
    UnsupportedStatementError,
)
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def base_path(spark, table):
    return dict(rows(spark, f"SHOW TBLPROPERTIES {table}"))["hoodie.base.path"]


# -- CREATE TABLE (no data written) -------------------------------------------------------------------
@pytest.fixture(scope="module")
def events(hoodpy_spark, database):
    name = f"{database}.events"
    hoodpy_spark.sql(f"""
        CREATE TABLE {name} (id BIGINT COMMENT 'the key', city STRING, name STRING, ts TIMESTAMP)
        USING hoodpy PARTITIONED BY (city) COMMENT 'events table'
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', 'hoodie.parquet.small.file.limit' = '0')""")
    return name


def test_create_table_registers_a_catalog_entry(hoodpy_spark, database, events):
    spark = hoodpy_spark
    assert (database, "events", False) in rows(spark, f"SHOW TABLES IN {database}")
    props = dict(rows(spark, f"SHOW TBLPROPERTIES {events}"))
    assert props["primaryKey"] == "id" and props["preCombineField"] == "ts" and props["type"] == "cow"
    assert props["hoodie.parquet.small.file.limit"] == "0"
    assert props["hoodie.base.path"].endswith(f"{database}.db/events")
    described = [r[0] for r in spark.sql(f"DESCRIBE TABLE {events}").collect()]
    assert described[:9] == [*META, "id", "name", "ts", "city"]  # partition columns last, as Spark orders them


def test_create_table_writes_hudi_table_config(hoodpy_spark, events):
    props = load_table_properties(Storage(base_path(hoodpy_spark, events)))
    assert props["hoodie.table.name"] == "events"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.partition.fields"] == "city"
    assert props["hoodie.table.precombine.field"] == "ts"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    assert props["hoodie.table.type"] == "COPY_ON_WRITE" and props["hoodie.table.version"] == "6"


def test_empty_table_reads_as_empty_with_meta_and_data_columns(hoodpy_spark, events):
    df = hoodpy_spark.sql(f"SELECT * FROM {events}")
    assert df.columns == [*META, "id", "name", "ts", "city"] and df.count() == 0


def test_create_if_not_exists_and_duplicates(hoodpy_spark, events):
    hoodpy_spark.sql(f"CREATE TABLE IF NOT EXISTS {events} (id INT) USING hoodpy TBLPROPERTIES (primaryKey = 'id')")
    with pytest.raises(CatalogTableExistsError, match="already exists"):
        hoodpy_spark.sql(f"CREATE TABLE {events} (id INT) USING hoodpy TBLPROPERTIES (primaryKey = 'id')")


@pytest.mark.parametrize(("ddl", "error", "fragment"), [
    ("(id INT) USING hoodpy TBLPROPERTIES (primaryKey = 'id', type = 'mox')", InvalidConfigError, "cow"),
    ("(id INT) USING hoodpy PARTITIONED BY (nope) TBLPROPERTIES (primaryKey = 'id')", InvalidStatementError,
     "PARTITIONED BY column(s) nope"),
    ("(id INT) USING hoodpy TBLPROPERTIES (primaryKey = 'key')", InvalidConfigError, "lacks configured field"),
    ("USING hoodpy TBLPROPERTIES (primaryKey = 'id')", InvalidStatementError, "needs column definitions or AS SELECT"),
    ("(id INT) USING hoodpy LOCATION current_date() TBLPROPERTIES (primaryKey = 'id')", InvalidStatementError,
     "LOCATION must be a literal"),
])
def test_create_table_errors_leave_nothing_behind(hoodpy_spark, database, ddl, error, fragment):
    name = f"{database}.broken"
    with pytest.raises(error) as info:
        hoodpy_spark.sql(f"CREATE TABLE {name} {ddl}")
    assert fragment in str(info.value)
    assert not hoodpy_spark.catalog.tableExists(name)
    location = hoodpy_spark.sql(f"DESCRIBE DATABASE {database}").collect()
    folder = Path(dict((r[0], r[1]) for r in location)["Location"].removeprefix("file:")) / "broken"
    assert not (folder / ".hoodie" / "hoodie.properties").exists()


def test_create_or_replace_is_not_supported_yet(hoodpy_spark, database):
    with pytest.raises(UnsupportedStatementError, match="CREATE OR REPLACE"):
        hoodpy_spark.sql(f"CREATE OR REPLACE TABLE {database}.x (id INT) USING hoodpy TBLPROPERTIES (primaryKey='id')")


@pytest.mark.parametrize(("statement", "fragment"), [
    ("UPDATE {t} SET id = 5 WHERE name = 'a'", "record key or partition column"),
    ("UPDATE {t} SET city = 'la'", "record key or partition column"),
    ("UPDATE {t} SET nope = 1", "'nope' is not a column"),
    ("INSERT INTO {t} VALUES (1, 'a')", "the query has 2 column(s) but 4 are expected (id, name, ts, city)"),
    ("INSERT INTO {t} (id, nope) VALUES (1, 'a')", "'nope' is not a column"),
    ("MERGE INTO {t} t USING (SELECT 1 AS id, 'a' AS name) s ON t.name = s.name WHEN MATCHED THEN DELETE",
     "must equate the record key column(s) id"),
    ("MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE",
     "WHEN NOT MATCHED BY SOURCE"),
    ("CREATE VIEW {t}_view AS SELECT * FROM {t} VERSION AS OF '20200101000000'",
     "a persistent view cannot time-travel"),
    ("CACHE TABLE {t}", "CACHE TABLE on hoodpy table"),
])
def test_statement_errors_name_the_problem_before_writing(hoodpy_spark, events, statement, fragment):
    table = HoodieTable.for_path(hoodpy_spark, base_path(hoodpy_spark, events))
    before = len(table.timeline)
    with pytest.raises(HoodieError) as info:
        hoodpy_spark.sql(statement.format(t=events))
    assert fragment in str(info.value)
    assert len(table.timeline) == before


def test_drop_keeps_files_and_purge_deletes_them(hoodpy_spark, database, tmp_path):
    name = f"{database}.dropme"
    location = str(tmp_path / "dropme")
    hoodpy_spark.sql(f"CREATE TABLE {name} (id INT, v STRING) USING hoodpy LOCATION '{location}' "
                     "TBLPROPERTIES (primaryKey = 'id')")
    assert (Path(location) / PLACEHOLDER).is_file()
    hoodpy_spark.sql(f"DROP TABLE {name}")
    assert not hoodpy_spark.catalog.tableExists(name) and HoodieTable.exists(location)
    hoodpy_spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{location}'")  # adopts the table again
    assert hoodpy_spark.sql(f"SELECT * FROM {name}").columns == [*META, "id", "v"]
    hoodpy_spark.sql(f"DROP TABLE IF EXISTS {name} PURGE")
    assert not Path(location).exists()
    hoodpy_spark.sql(f"DROP TABLE IF EXISTS {name}")  # nothing left: passes through to Spark


# -- CTAS, INSERT OVERWRITE, TRUNCATE and reads from other statements (four writes) -----------------------
@pytest.fixture(scope="module")
def cities(hoodpy_spark, database):
    spark = hoodpy_spark
    name = f"{database}.cities"
    spark.sql(f"CREATE TABLE {database}.src USING parquet AS "
              "SELECT * FROM VALUES (1, 'a', 'sf'), (2, 'b', 'sf'), (3, 'c', 'nyc') AS v(id, name, city)")
    spark.sql(f"CREATE TABLE {name} USING hoodpy PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'id') "
              f"AS SELECT * FROM {database}.src")
    seen = {"ctas": rows(spark, f"SELECT id, name, city FROM {name}"), "name": name}
    spark.sql(f"INSERT OVERWRITE {name} PARTITION (city = 'sf') SELECT 7, 'g'")
    seen["overwrite_partition"] = rows(spark, f"SELECT id, name, city FROM {name}")
    spark.sql(f"INSERT OVERWRITE TABLE {name} SELECT 8, 'h', 'la'")
    seen["overwrite_table"] = rows(spark, f"SELECT id, name, city FROM {name}")
    seen["commits"] = [tuple(r) for r in spark.sql(f"CALL show_commits(table => '{name}')").collect()]
    return seen


def test_ctas_writes_the_query_with_bulk_insert(hoodpy_spark, cities):
    assert cities["ctas"] == [(1, "a", "sf"), (2, "b", "sf"), (3, "c", "nyc")]
    first = cities["commits"][-1][0]
    meta = json.loads((Path(base_path(hoodpy_spark, cities["name"])) / ".hoodie" / f"{first}.commit").read_text())
    assert meta["operationType"] == "BULK_INSERT"


def test_insert_overwrite_replaces_the_partition_then_the_table(cities):
    assert cities["overwrite_partition"] == [(3, "c", "nyc"), (7, "g", "sf")]
    assert cities["overwrite_table"] == [(8, "h", "la")]
    assert [c[2] for c in cities["commits"]] == ["replacecommit", "replacecommit", "commit"]


def test_other_statements_read_hoodpy_tables(hoodpy_spark, database, cities):
    spark, name = hoodpy_spark, cities["name"]
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT id, name FROM {name}")
    assert rows(spark, "SELECT * FROM recent") == [(8, "h")]
    spark.sql(f"INSERT INTO {database}.src SELECT id, name, city FROM {name}")
    assert (8, "h", "la") in rows(spark, f"SELECT * FROM {database}.src")
    spark.sql(f"CREATE TABLE {database}.copy USING parquet AS SELECT * FROM {name}")
    assert rows(spark, f"SELECT id, name, city FROM {database}.copy") == [(8, "h", "la")]
    assert spark.table(name).select("id").collect()[0][0] == 8  # spark.table is routed too
    spark.sql(f"CACHE TABLE snap AS SELECT count(*) AS n FROM {name}")
    assert rows(spark, "SELECT n FROM snap") == [(1,)]
    spark.sql("UNCACHE TABLE snap")


def test_a_new_session_sees_the_table_once_enabled(hoodpy_spark, database, cities):
    other = hoodpy_spark.newSession()
    assert ("cities" in {r.tableName for r in other.sql(f"SHOW TABLES IN {database}").collect()})
    enable(other)
    try:
        assert rows(other, f"SELECT id FROM {cities['name']}") == [(8,)]
    finally:
        disable(other)


def test_plain_spark_can_neither_read_nor_write_a_hoodpy_table(hoodpy_spark, cities):
    spark, name = hoodpy_spark, cities["name"]
    path = base_path(spark, name)
    timeline_before = sorted(p.name for p in (Path(path) / ".hoodie").iterdir())
    disable(spark)
    try:
        with pytest.raises(Exception) as info:
            spark.sql(f"SELECT * FROM {name}").collect()
        assert "HOODPY-TABLE--query-it-through-sql_ext.enable" in str(info.value)
        with pytest.raises(Exception) as info:
            spark.sql(f"INSERT INTO {name} SELECT '1', '2', '3', '4', '5', 9, 'x', 'la'")
        assert "not a directory" in str(info.value)
    finally:
        enable(spark)
    assert sorted(p.name for p in (Path(path) / ".hoodie").iterdir()) == timeline_before
    assert rows(spark, f"SELECT id FROM {name}") == [(8,)]


def test_truncate_table(hoodpy_spark, cities):
    hoodpy_spark.sql(f"TRUNCATE TABLE {cities['name']}")
    assert rows(hoodpy_spark, f"SELECT * FROM {cities['name']}") == []
    top = hoodpy_spark.sql(f"CALL show_commits(table => '{cities['name']}', limit => 1)").collect()[0]
    assert top["action"] == "replacecommit"


def test_enable_returns_the_session_and_both_spellings_route(spark, hoodpy_spark, events):
    from pyspark.sql import SparkSession

    assert enable(spark) is spark is hoodpy_spark  # idempotent, the same object
    assert SparkSession.builder.getOrCreate() is spark  # getOrCreate hands back the enabled session
    for session in (spark, SparkSession.builder.getOrCreate()):
        assert session.sql(f"CALL show_commits(table => '{events}')").columns[0] == "commit_time"
    assert isinstance(spark.sql("SELECT 1 AS x").collect()[0].x, int)


def test_for_name_opens_the_catalog_table(hoodpy_spark, cities):
    from hoodpy.errors import UnknownTableError

    table = table_for_name(hoodpy_spark, cities["name"])
    via_sql = rows(hoodpy_spark, f"SELECT id, name, city FROM {cities['name']}")
    assert sorted(tuple(r) for r in table.read().select("id", "name", "city").collect()) == via_sql
    assert table.base_path == base_path(hoodpy_spark, cities["name"])
    with pytest.raises(UnknownTableError):
        table_for_name(hoodpy_spark, cities["name"] + "_missing")

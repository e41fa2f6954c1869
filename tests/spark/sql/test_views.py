"""Persistent views over hoodpy tables: stored as written, expanded to the current snapshot when read
through the layer; views over other tables stay Spark's, byte for byte."""

from __future__ import annotations

import functools

import pytest

from sql_ext import disable, enable
from hoodpy.errors import UnsupportedStatementError
from sql_ext.catalog import PLACEHOLDER
from sql_ext.session import SqlLayer

pytestmark = pytest.mark.spark


def rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


@pytest.fixture(scope="module")
def tables(hoodpy_spark, database):
    spark = hoodpy_spark
    spark.sql(f"CREATE TABLE {database}.rides (id INT, city STRING, fare DOUBLE, ts BIGINT) USING hoodpy "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    spark.sql(f"INSERT INTO {database}.rides VALUES (1, 'sf', 10.0, 1), (2, 'la', 20.0, 1)")
    spark.sql(f"CREATE TABLE {database}.cities (city STRING, state STRING) USING parquet")
    spark.sql(f"INSERT INTO {database}.cities VALUES ('sf', 'CA'), ('la', 'CA'), ('ny', 'NY')")
    current = spark.catalog.currentDatabase()
    spark.sql(f"USE {database}")
    try:  # unqualified names in a view resolve in the view's database, wherever it is read from
        spark.sql("CREATE VIEW cheap (ride, fare) AS SELECT id, fare FROM rides WHERE fare < 50")
    finally:
        spark.sql(f"USE {current}")
    spark.sql(f"CREATE VIEW {database}.cheap_ids AS SELECT ride FROM {database}.cheap")
    spark.sql(f"CREATE VIEW {database}.by_state AS SELECT c.state, r.id, r.fare FROM {database}.rides r "
              f"JOIN {database}.cities c ON r.city = c.city")
    return database


def test_a_view_shows_the_current_snapshot_after_upserts(hoodpy_spark, tables):
    spark, db = hoodpy_spark, tables
    assert rows(spark, f"SELECT * FROM {db}.cheap") == [(1, 10.0), (2, 20.0)]
    spark.sql(f"INSERT INTO {db}.rides VALUES (1, 'sf', 11.0, 2), (3, 'ny', 30.0, 2), (2, 'la', 99.0, 2)")
    assert rows(spark, f"SELECT * FROM {db}.cheap") == [(1, 11.0), (3, 30.0)]
    assert rows(spark, f"SELECT ride FROM {db}.cheap_ids") == [(1,), (3,)]  # a view over a view
    assert rows(spark, f"SELECT state, sum(fare) FROM {db}.by_state GROUP BY state") == [("CA", 110.0),
                                                                                       ("NY", 30.0)]
    assert sorted(tuple(r) for r in spark.table(f"{db}.cheap").collect()) == [(1, 11.0), (3, 30.0)]
    # A view read by other statements: a CTAS into a parquet table, a join with the table itself.
    spark.sql(f"CREATE TABLE {db}.snap USING parquet AS SELECT v.ride, r.city FROM {db}.cheap v "
              f"JOIN {db}.rides r ON v.ride = r.id")
    assert rows(spark, f"SELECT * FROM {db}.snap") == [(1, "sf"), (3, "ny")]


def test_views_are_catalog_views_plain_spark_cannot_read(hoodpy_spark, tables):
    spark, db = hoodpy_spark, tables
    assert {(r.tableName, r.isTemporary) for r in spark.sql(f"SHOW TABLES IN {db}").collect()} >= {
        ("cheap", False), ("cheap_ids", False), ("by_state", False)}
    assert spark.catalog.getTable(f"{db}.cheap").tableType == "VIEW"
    disable(spark)
    try:
        with pytest.raises(Exception, match=PLACEHOLDER.rsplit("/", 1)[-1]):
            spark.sql(f"SELECT * FROM {db}.cheap").collect()
    finally:
        enable(spark)


def test_time_travel_on_a_view_is_refused(hoodpy_spark, tables):
    with pytest.raises(UnsupportedStatementError, match="time travel"):
        hoodpy_spark.sql(f"SELECT * FROM {tables}.cheap VERSION AS OF '20200101000000'")


def test_views_over_other_tables_pass_through_and_stay_cached(hoodpy_spark, tables):
    spark, db = hoodpy_spark, tables
    real_sql = functools.partial(type(spark).sql, spark)
    seen = []

    def spy(text, *args, **kwargs):
        seen.append(text)
        return real_sql(text, *args, **kwargs)

    layer = SqlLayer(spark, spy, functools.partial(type(spark).table, spark))
    statements = [f"CREATE VIEW {db}.ny AS SELECT * FROM {db}.cities WHERE state = 'NY'",
                  f"SELECT city FROM {db}.ny", f"SELECT c.city FROM {db}.ny c JOIN {db}.cities d ON c.city = d.city"]
    for statement in statements:
        before = len(seen)
        got = layer.sql(statement).collect()
        mine = [t for t in seen[before:] if not t.startswith(("SHOW TBLPROPERTIES `", "DESCRIBE TABLE EXTENDED `"))]
        assert mine == [statement]
        if statement.startswith("SELECT"):
            assert [tuple(r) for r in got] == [("ny",)]
    # Warm: a second read looks nothing up again.
    before = len(seen)
    layer.sql(statements[1]).collect()
    assert seen[before:] == [statements[1]]


def test_drop_view(hoodpy_spark, tables):
    spark, db = hoodpy_spark, tables
    spark.sql(f"CREATE VIEW {db}.gone AS SELECT id FROM {db}.rides")
    assert rows(spark, f"SELECT count(*) FROM {db}.gone") == [(3,)]
    spark.sql(f"DROP VIEW {db}.gone")
    assert not spark.catalog.tableExists(f"{db}.gone")
    assert rows(spark, f"SELECT count(*) FROM {db}.rides") == [(3,)]  # the table is untouched

"""On a real session: statements that touch no hoodpy table reach the session's own ``sql`` byte for byte
(the only other calls the layer makes are its catalog lookups), and give the same results."""

from __future__ import annotations

import functools

import pytest

from sql_ext.session import SqlLayer

pytestmark = pytest.mark.spark


def statements(db):
    return [
        f"CREATE TABLE {db}.pq (id INT, s STRING) USING parquet",
        f"INSERT INTO {db}.pq VALUES (1, 'a'), (2, '{{b}}')",
        f"  \n\tINSERT INTO TABLE {db}.pq\n SELECT id + 10, s FROM {db}.pq ;  ",
        "SET spark.sql.shuffle.partitions = 4",
        "SET hoodie.datasource.write.operation=upsert",
        f"SHOW TABLES IN {db}",
        f"SHOW TBLPROPERTIES {db}.pq",
        f"DESCRIBE TABLE EXTENDED {db}.pq",
        f"EXPLAIN SELECT * FROM {db}.pq",
        f"CACHE TABLE {db}.pq",
        f"UNCACHE TABLE IF EXISTS {db}.pq",
        f'/* {{"app": "dbt", "node_id": "model.x"}} */\nselect s, count(*) AS n from {db}.pq group by s order by s',
        f"-- comment\nWITH a AS (SELECT * FROM {db}.pq WHERE id > 1) SELECT max(id) FROM a;",
        f"SELECT * FROM {db}.pq WHERE s = '{{b}}' AND id IN (SELECT id FROM {db}.pq)",
        "SELECT 'CALL show_commits()' AS not_a_call, 'naïve' AS u",
        f"CREATE OR REPLACE TEMPORARY VIEW pv AS SELECT * FROM {db}.pq",
        "SELECT count(*) FROM pv",
        f"ALTER TABLE {db}.pq SET TBLPROPERTIES ('k' = 'v')",
        f"DROP TABLE {db}.pq",
        "RESET hoodie.datasource.write.operation",  # the session is shared: leave no hoodie option behind
    ]


def test_real_statements_reach_spark_unchanged(hoodpy_spark, database):
    spark = hoodpy_spark
    real_sql = functools.partial(type(spark).sql, spark)
    seen = []

    def spy(text, *args, **kwargs):
        seen.append((text, args, kwargs))
        return real_sql(text, *args, **kwargs)

    layer = SqlLayer(spark, spy, functools.partial(type(spark).table, spark))
    for statement in statements(database):
        before = len(seen)
        got = layer.sql(statement).collect()
        calls = seen[before:]
        mine = [c for c in calls if not c[0].startswith("SHOW TBLPROPERTIES `")]  # hoodpy's catalog lookups
        assert mine == [(statement, (), {})], statement
        if statement.lstrip().upper().startswith(("SELECT", "/*", "-- COMMENT")) and "pv" not in statement:
            assert got == real_sql(statement).collect()

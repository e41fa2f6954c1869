"""Statements that touch no hoodpy table reach the session's own ``spark.sql`` byte for byte (no Spark)."""

from __future__ import annotations

import pytest

from sql_stubs import StubCatalog, stub_layer

# A varied set: DDL, DML on other tables, SET, SHOW, EXPLAIN, CACHE, comments, semicolons, odd whitespace,
# syntax sqlglot cannot parse, several statements, and strings that look like hoodpy syntax.
STATEMENTS = [
    "CREATE TABLE pq (id INT, s STRING) USING parquet",
    "CREATE TABLE IF NOT EXISTS db.pq2 USING parquet PARTITIONED BY (id) AS SELECT 1 AS id, 'a' AS s",
    "CREATE TABLE hv (id INT) STORED AS ORC TBLPROPERTIES ('primaryKey' = 'id')",
    "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM pq WHERE id > 1",
    "CREATE VIEW pv AS SELECT id FROM pq",
    "INSERT INTO pq VALUES (1, 'a'), (2, 'b')",
    "INSERT INTO TABLE pq SELECT * FROM pq",
    "INSERT OVERWRITE TABLE pq PARTITION (id = 1) SELECT 'x'",
    "INSERT INTO pq BY NAME SELECT 'a' AS s, 1 AS id",
    "DELETE FROM delta_t WHERE id = 1",
    "UPDATE delta_t SET s = 'x' WHERE id = 1",
    "MERGE INTO delta_t t USING pq s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    "SET spark.sql.shuffle.partitions = 4",
    "SET hoodie.datasource.write.operation=insert",
    "SET",
    "RESET",
    "SHOW TABLES",
    "SHOW TABLES IN db LIKE 'p*'",
    "SHOW TBLPROPERTIES pq",
    "SHOW CREATE TABLE pq",
    "SHOW PARTITIONS pq",
    "DESCRIBE TABLE EXTENDED pq",
    "DESC pq",
    "EXPLAIN SELECT * FROM pq",
    "EXPLAIN EXTENDED SELECT 1",
    "CACHE TABLE pq",
    "CACHE LAZY TABLE c AS SELECT * FROM pq",
    "UNCACHE TABLE IF EXISTS pq",
    "CLEAR CACHE",
    "REFRESH TABLE pq",
    "MSCK REPAIR TABLE pq",
    "ANALYZE TABLE pq COMPUTE STATISTICS",
    "ALTER TABLE pq ADD COLUMNS (c INT)",
    "ALTER TABLE pq SET TBLPROPERTIES ('a' = 'b')",
    "DROP TABLE IF EXISTS pq PURGE",
    "DROP VIEW IF EXISTS v",
    "TRUNCATE TABLE pq",
    "USE db",
    "CREATE DATABASE IF NOT EXISTS d2",
    "DROP DATABASE IF EXISTS d2 CASCADE",
    '/* {"app": "dbt", "dbt_version": "1.10.0", "node_id": "model.proj.m"} */\nselect * from pq',
    "-- a line comment\nSELECT 1",
    "SELECT 1;",
    "  \n\tSELECT\n   1 AS x  ;  \n",
    "select\tid,\n\ts\nfrom\n\tpq\nwhere id in (select id from pq)",
    "WITH a AS (SELECT 1 AS x) SELECT * FROM a",
    "SELECT * FROM range(10)",
    "SELECT * FROM parquet.`/tmp/some/path`",
    "SELECT * FROM pq TIMESTAMP AS OF '2024-01-01'",
    "VALUES (1, 2), (3, 4)",
    "TABLE pq",
    "FROM pq SELECT id",
    "(SELECT 1) UNION ALL (SELECT 2)",
    "SELECT '{not_a_field}' AS braces, '}{' AS more",
    "SELECT 'CALL show_commits(table => ''t'')' AS not_a_call",
    "SELECT 'naïve ✓' AS unicode",
    "SELECT TRANSFORM(id) USING 'cat' AS (x) FROM pq",
    "SELECT 1 +",
    "SELECT 1; SELECT 2",
    "BEGIN SELECT 1; END",
    "ADD JAR /tmp/x.jar",
    "LIST FILES",
    "",
    ";",
]


@pytest.mark.parametrize("statement", STATEMENTS)
def test_statement_reaches_spark_unchanged(statement):
    layer, spy = stub_layer()
    result = layer.sql(statement)
    assert len(spy.calls) == 1
    args, kwargs = spy.calls[0]
    assert args[0] is statement and len(args) == 1 and kwargs == {}
    assert result == ("result", "sql", 1)


def test_args_and_format_kwargs_pass_through():
    layer, spy = stub_layer()
    marker = object()
    layer.sql("SELECT * FROM pq WHERE id = :id", {"id": 1})
    layer.sql("SELECT * FROM {df} WHERE s = {s}", df=marker, s="x")
    layer.sql("SELECT * FROM pq WHERE id = ?", args=[1])
    assert spy.calls == [
        (("SELECT * FROM pq WHERE id = :id", {"id": 1}), {}),
        (("SELECT * FROM {df} WHERE s = {s}",), {"df": marker, "s": "x"}),
        (("SELECT * FROM pq WHERE id = ?", [1]), {}),
    ]


def test_unrouted_statements_are_not_looked_up():
    layer, spy = stub_layer()
    # EXPLAIN and ALTER are routed: EXPLAIN SELECT reads hoodpy tables, ALTER TABLE evolves them.
    for statement in ("SHOW TABLES", "SET a = b", "DESCRIBE pq", "USE db"):
        layer.sql(statement)
    assert layer.catalog.lookups == []


def test_ddl_passing_through_invalidates_catalog_cache():
    layer, _ = stub_layer()
    layer.sql("ALTER TABLE pq ADD COLUMNS (c INT)")
    layer.sql("DROP TABLE IF EXISTS pq")
    layer.sql("SELECT 1")
    assert layer.catalog.invalidations == 2


def test_stub_catalog_is_the_default_for_stub_layers():
    layer, _ = stub_layer()
    assert isinstance(layer.catalog, StubCatalog)

"""The ``USING hoodpy ... TBLPROPERTIES`` clauses that dbt's DDL and on_schema_change rebuilds render read back
as written (no Spark)."""

from __future__ import annotations

from sql_ext.catalog import create_options_sql, hoodpy_table_properties
from sql_ext.ddl import table_options
from sql_ext.dialect import DIALECT


def test_create_options_read_back_as_written():
    props = hoodpy_table_properties(["id"], "ts", {"hoodie.example.pattern": r"city=\d+\\x", "hoodie.note": "it's"})
    sql = f"CREATE TABLE t (id INT, ts BIGINT, city STRING) {create_options_sql(['city'], props)}"
    options, _, _, partitioned = table_options(DIALECT.parse(sql)[0])
    assert options == props
    assert [p.name for p in partitioned] == ["city"]


def test_unpartitioned_has_no_partitioned_by():
    assert create_options_sql([], {"primaryKey": "id"}) == "USING hoodpy TBLPROPERTIES ('primaryKey' = 'id')"

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


def test_unquoted_dotted_keys_are_kept_whole():
    sql = ("CREATE TABLE t (id INT, ts BIGINT) USING hoodpy OPTIONS (hoodie.index.type = 'BLOOM') "
           "TBLPROPERTIES (primaryKey = 'id', hoodie.cleaner.commits.retained = '3', `hoodie`.`keep`.max.commits = 5, "
           "'hoodie.quoted.key' = 'q', hoodie.parquet.small.file.limit = '0', hoodie.a.b.c.d.e = 'x')")
    options, _, _, _ = table_options(DIALECT.parse(sql)[0])
    assert options == {"hoodie.index.type": "BLOOM", "primaryKey": "id", "hoodie.cleaner.commits.retained": "3",
                       "hoodie.keep.max.commits": "5", "hoodie.quoted.key": "q",
                       "hoodie.parquet.small.file.limit": "0", "hoodie.a.b.c.d.e": "x"}


def test_alter_set_keeps_unquoted_dotted_keys_whole():
    from sql_ext.ddl import _property_key

    tree = DIALECT.parse("ALTER TABLE db.t SET TBLPROPERTIES (hoodie.parquet.small.file.limit = 'lots', "
                         "hoodie.base.path = '/x', a = 1)")[0]
    [action] = tree.args["actions"]
    assert [_property_key(p.this) for props in action.expressions for p in props.expressions] == [
        "hoodie.parquet.small.file.limit", "hoodie.base.path", "a"]

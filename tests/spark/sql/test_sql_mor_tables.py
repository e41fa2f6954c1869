"""Merge-on-read tables in SQL: ``CREATE TABLE ... USING hoodpy TBLPROPERTIES (type = 'mor')`` (as Hudi's Spark
SQL takes it), then INSERT, UPDATE, MERGE INTO and DELETE as deltacommits with log files; SELECT and hudi-rs read
the same rows, and the catalog entry says ``mor``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compat import hudi_rs
from hoodpy.config.properties import load_table_properties
from hoodpy.storage import Storage

pytestmark = pytest.mark.spark


def test_mor_table_through_sql(hoodpy_spark, database):
    spark = hoodpy_spark
    t = f"{database}.rides"
    spark.sql(f"CREATE TABLE {t} (id INT, name STRING, ts BIGINT, city STRING) USING hoodpy PARTITIONED BY (city) "
              "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor', "
              "'hoodie.parquet.small.file.limit' = '0')")
    props = dict((r[0], r[1]) for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect())
    path = props["hoodie.base.path"]
    assert props["type"] == "mor"
    assert load_table_properties(Storage(path))["hoodie.table.type"] == "MERGE_ON_READ"
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1, 'sf'), (2, 'b', 1, 'sf'), (3, 'c', 1, 'la')")
    spark.sql(f"UPDATE {t} SET name = upper(name), ts = ts + 1 WHERE city = 'sf'")
    spark.sql(f"""MERGE INTO {t} AS t USING (SELECT 3 AS id, 'z' AS name, 5L AS ts, 'la' AS city
                  UNION ALL SELECT 4, 'd', 5L, 'la') AS s ON t.id = s.id
                  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"DELETE FROM {t} WHERE id = 2")
    got = sorted(tuple(r) for r in spark.sql(f"SELECT id, name, ts, city FROM {t}").collect())
    assert got == [(1, "A", 2, "sf"), (3, "z", 5, "la"), (4, "d", 5, "la")]
    assert hudi_rs.df_rows(spark.sql(f"SELECT * FROM {t}")) == hudi_rs.snapshot(path)
    hoodie = Path(path) / ".hoodie"
    assert len(list(hoodie.glob("*.deltacommit"))) == 4 and not list(hoodie.glob("*.commit"))
    assert list(Path(path).rglob(".*.log.*"))  # the UPDATE, MERGE and DELETE appended log files

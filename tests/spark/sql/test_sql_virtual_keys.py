"""SQL over a table created with ``'hoodie.populate.meta.fields' = 'false'`` in TBLPROPERTIES: INSERT,
UPDATE, MERGE and DELETE find rows by the keys the key generator computes, SELECT returns the data columns,
and hudi-rs reads the rows; on a merge-on-read table (``type = 'mor'``) too, before and after
``CALL run_compaction``."""

from __future__ import annotations

import pytest

from hoodpy.config.properties import parse_properties
from tests.compat.hudi_rs import snapshot_tuples as hudi_rs

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("kind", ["cow", "mor"])
def test_sql_on_a_virtual_key_table(hoodpy_spark, database, tmp_path, kind):
    spark = hoodpy_spark
    t = f"{database}.vk_{kind}"  # the database is shared by the module
    location = str(tmp_path / "vk")
    spark.sql(f"""
        CREATE TABLE {t} (id INT, name STRING, ts BIGINT, city STRING) USING hoodpy
        PARTITIONED BY (city) LOCATION '{location}'
        TBLPROPERTIES (type = '{kind}', primaryKey = 'id', preCombineField = 'ts',
                       'hoodie.populate.meta.fields' = 'false')""")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'ann', 10, 'sf'), (2, 'bob', 10, 'sf'), (3, 'cy', 10, 'nyc')")
    spark.sql(f"UPDATE {t} SET name = upper(name), ts = 11 WHERE city = 'sf'")
    spark.sql(f"""MERGE INTO {t} AS t
        USING (SELECT * FROM VALUES (3, 'CY', 20L, 'nyc', false), (4, 'dee', 20L, 'la', false), (1, 'x', 20L, 'sf', true)
               AS v(id, name, ts, city, gone)) AS s
        ON t.id = s.id
        WHEN MATCHED AND s.gone THEN DELETE
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"DELETE FROM {t} WHERE id = 4")
    expected = [(2, "BOB", 11, "sf"), (3, "CY", 20, "nyc")]
    assert sorted(tuple(r) for r in spark.sql(f"SELECT id, name, ts, city FROM {t}").collect()) == expected
    assert "_hoodie_record_key" not in spark.table(t).columns
    assert hudi_rs(location, ["id", "name", "ts", "city"]) == expected
    props = parse_properties((tmp_path / "vk" / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.populate.meta.fields"] == "false"
    if kind == "mor":
        assert props["hoodie.table.type"] == "MERGE_ON_READ"
        assert list((tmp_path / "vk").rglob(".*.log.*")), "the updates went to log files"
        [(_, operations, state)] = [tuple(r) for r in spark.sql(f"CALL run_compaction(op => 'run', table => '{t}')")
                                    .collect()]
        assert state == "COMPLETED" and operations >= 1
        assert sorted(tuple(r) for r in spark.sql(f"SELECT id, name, ts, city FROM {t}").collect()) == expected
        assert hudi_rs(location, ["id", "name", "ts", "city"]) == expected

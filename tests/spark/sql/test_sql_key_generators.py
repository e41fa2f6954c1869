"""SQL over a table created with TimestampBasedKeyGenerator options in TBLPROPERTIES (the options of Java
Hudi's v9_timebasedkeygen_nonhivestyle fixture): INSERT, UPDATE, MERGE and DELETE land in the date folders
Java Hudi would use, and hudi-rs reads the rows."""

from __future__ import annotations

import pytest

from hoodpy.config.properties import parse_properties
from tests.compat.hudi_rs import snapshot_tuples as hudi_rs

pytestmark = pytest.mark.spark


def test_sql_on_a_time_based_table(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    t = f"{database}.txns"
    location = str(tmp_path / "txns")
    spark.sql(f"""
        CREATE TABLE {t} (txn_id STRING, txn_ts BIGINT, amount INT, ts_str STRING) USING hoodpy
        PARTITIONED BY (ts_str) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'txn_id', preCombineField = 'txn_ts',
          'hoodie.datasource.write.hive_style_partitioning' = 'false',
          'hoodie.table.keygenerator.type' = 'TIMESTAMP',
          'hoodie.keygen.timebased.timestamp.type' = 'DATE_STRING',
          'hoodie.keygen.timebased.input.dateformat' = "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
          'hoodie.keygen.timebased.output.dateformat' = 'yyyy/MM/dd/HH')""")
    spark.sql(f"""INSERT INTO {t} VALUES ('T1', 1, 10, '2024-01-15T10:30:00.000Z'),
        ('T2', 1, 20, '2024-01-15T11:45:00.000Z'), ('T3', 1, 30, '2024-01-16T09:00:00.000+0100')""")
    spark.sql(f"UPDATE {t} SET amount = 31, txn_ts = 2 WHERE txn_id = 'T3'")
    spark.sql(f"""MERGE INTO {t} AS t USING (SELECT 'T1' AS txn_id, 3L AS txn_ts, 11 AS amount,
                  '2024-01-15T10:30:00.000Z' AS ts_str UNION ALL
                  SELECT 'T4', 3L, 40, '2024-01-18T16:30:00.000Z') AS s
                  ON t.txn_id = s.txn_id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    spark.sql(f"DELETE FROM {t} WHERE txn_id = 'T2'")
    expected = [("2024/01/15/10", "T1", 11, "2024-01-15T10:30:00.000Z"),
                # Printed in the offset the value carried (Hudi: no output time zone configured).
                ("2024/01/16/09", "T3", 31, "2024-01-16T09:00:00.000+0100"),
                ("2024/01/18/16", "T4", 40, "2024-01-18T16:30:00.000Z")]
    got = sorted(tuple(r) for r in spark.sql(
        f"SELECT _hoodie_partition_path, txn_id, amount, ts_str FROM {t}").collect())
    assert got == expected
    assert hudi_rs(location, ["_hoodie_partition_path", "txn_id", "amount", "ts_str"]) == expected
    props = parse_properties((tmp_path / "txns" / ".hoodie" / "hoodie.properties").read_text())
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
    assert props["hoodie.keygen.timebased.input.dateformat"] == "yyyy-MM-dd'T'HH:mm:ss.SSSZ"


def test_sql_on_a_custom_key_generator_table(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    t = f"{database}.custom"
    location = str(tmp_path / "custom")
    spark.sql(f"""
        CREATE TABLE {t} (id STRING, amount INT, region STRING, ts BIGINT) USING hoodpy
        PARTITIONED BY (region, ts) LOCATION '{location}'
        TBLPROPERTIES (primaryKey = 'id',
          'hoodie.table.keygenerator.class' = 'org.apache.hudi.keygen.CustomKeyGenerator',
          'hoodie.datasource.write.partitionpath.field' = 'region:SIMPLE,ts:TIMESTAMP',
          'hoodie.keygen.timebased.timestamp.type' = 'UNIX_TIMESTAMP',
          'hoodie.keygen.timebased.output.dateformat' = 'yyyyMMdd')""")
    spark.sql(f"INSERT INTO {t} VALUES ('a', 1, 'eu', 1705311000), ('b', 2, 'us', 1705367700)")
    spark.sql(f"UPDATE {t} SET amount = 3 WHERE id = 'b'")
    spark.sql(f"DELETE FROM {t} WHERE id = 'a'")
    spark.sql(f"INSERT INTO {t} VALUES ('c', 4, 'eu', NULL)")
    expected = [("region=eu/ts=19700101", "c", 4), ("region=us/ts=20240116", "b", 3)]
    got = sorted(tuple(r) for r in spark.sql(f"SELECT _hoodie_partition_path, id, amount FROM {t}").collect())
    assert got == expected
    assert hudi_rs(location, ["_hoodie_partition_path", "id", "amount"]) == expected

"""The BUCKET index from SQL: TBLPROPERTIES choose it, every statement (CTAS, INSERT, UPDATE, DELETE, MERGE)
writes into the file group of each key's bucket, and a bad bucket layout fails at CREATE TABLE."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodpy.errors import InvalidConfigError
from hoodpy.index.bucket import BucketSpec, bucket_id
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SPEC = BucketSpec(4, ("id",))
BUCKET_PROPS = "'hoodie.index.type' = 'BUCKET', 'hoodie.bucket.index.num.buckets' = '4'"


def _layout(spark, name) -> dict[tuple[str, int], str]:
    """(partition, bucket) -> file id, after checking each file holds only keys of the bucket it names."""
    path = dict(tuple(r) for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect())["hoodie.base.path"]
    table = HoodieTable.for_path(spark, path)
    out = {}
    for bf in table.file_system_view().latest_base_files():
        keys = {r[0] for r in table.read().where(f"_hoodie_file_name = '{bf.name.name}'")
                .select("_hoodie_record_key").collect()}
        bucket = int(bf.file_id[:8])
        assert {bucket_id(k, SPEC) for k in keys} <= {bucket}
        assert (bf.partition_path, bucket) not in out
        out[(bf.partition_path, bucket)] = bf.file_id
    return out


def _rows(spark, name):
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, name, dt, ts FROM {name}").collect())


def test_statements_write_into_bucket_file_groups(hoodpy_spark, database):
    name = f"{database}.bucketed"
    hoodpy_spark.sql(f"""
        CREATE TABLE {name} USING hoodpy PARTITIONED BY (dt)
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', {BUCKET_PROPS})
        AS SELECT id, concat('n', id) AS name, IF(id % 2 = 0, 'd0', 'd1') AS dt, 1L AS ts FROM range(12)""")
    first = _layout(hoodpy_spark, name)
    assert set(first) == {(f"dt=d{i % 2}", bucket_id(str(i), SPEC)) for i in range(12)}

    hoodpy_spark.sql(f"INSERT INTO {name} VALUES (20, 'n20', 1, 'd0'), (21, 'n21', 1, 'd1')")
    hoodpy_spark.sql(f"UPDATE {name} SET name = 'updated', ts = 2 WHERE id IN (1, 2)")
    hoodpy_spark.sql(f"DELETE FROM {name} WHERE id = 3")
    hoodpy_spark.sql(f"""
        MERGE INTO {name} t USING (SELECT 4L AS id, 'merged' AS name, 'd0' AS dt, 3L AS ts
                                   UNION ALL SELECT 30L, 'new', 'd0', 3L) s
        ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    final = _layout(hoodpy_spark, name)
    assert all(final[slot] == file_id for slot, file_id in first.items())  # buckets keep their file groups
    expected = {(i, f"n{i}", f"d{i % 2}", 1) for i in (*range(12), 20, 21) if i != 3}
    expected -= {(1, "n1", "d1", 1), (2, "n2", "d0", 1), (4, "n4", "d0", 1)}
    expected |= {(1, "updated", "d1", 2), (2, "updated", "d0", 2), (4, "merged", "d0", 3), (30, "new", "d0", 3)}
    assert _rows(hoodpy_spark, name) == sorted(expected)


@pytest.mark.parametrize("props, fragment", [
    ("'hoodie.bucket.index.hash.field' = 'name'", "name are not record key fields"),
    ("'hoodie.bucket.index.num.buckets' = '-1'", "at least one bucket"),
    ("'hoodie.index.bucket.engine' = 'CONSISTENT_HASHING'", "CONSISTENT_HASHING"),
])
def test_bad_bucket_layout_fails_at_create(hoodpy_spark, database, props, fragment):
    name = f"{database}.bad_bucket"
    with pytest.raises(InvalidConfigError, match=fragment):
        hoodpy_spark.sql(f"""CREATE TABLE {name} (id INT, name STRING) USING hoodpy
                             TBLPROPERTIES (primaryKey = 'id', 'hoodie.index.type' = 'BUCKET', {props})""")
    assert not hoodpy_spark.catalog.tableExists(name)
    location = dict((r[0], r[1]) for r in hoodpy_spark.sql(f"DESCRIBE DATABASE {database}").collect())["Location"]
    assert not (Path(location.removeprefix("file:")) / "bad_bucket" / ".hoodie").exists()

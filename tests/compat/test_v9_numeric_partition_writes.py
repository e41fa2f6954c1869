"""SQL INSERT, UPDATE and DELETE into the Java Hudi 1.1 TimestampBasedKeyGenerator samples whose numeric
partition column the table schema declares a string (Java's SQL UPDATE made it one): new and changed rows
land in the partition Java computed from the same number, hudi-rs reads the expected rows, the version stays
9. A value that is not a number is refused naming it, and the table is left as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hudi_rs
from hoodpy.config.properties import parse_properties
from hoodpy.table import HoodieTable
from sql_ext import disable, enable
from test_table_versions import unzip_v1x

pytestmark = [pytest.mark.compat, pytest.mark.spark]

CASES = {"v9_timebasedkeygen_epochmillis": "ts_millis", "v9_timebasedkeygen_unixtimestamp": "ts_epoch"}


@pytest.fixture(scope="module")
def hoodpy_spark(spark):
    enable(spark)
    yield spark
    disable(spark)


def _tree(path: str) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}


@pytest.mark.parametrize("sample", sorted(CASES))
def test_sql_writes_into_a_string_declared_numeric_partition_column(hoodpy_spark, tmp_path, sample):
    spark, column = hoodpy_spark, CASES[sample]
    path = str(tmp_path / sample)
    shutil.copytree(unzip_v1x(sample, tmp_path / "src"), path)
    before = hudi_rs.snapshot(path)
    partition_of = {r["txn_id"]: r["_hoodie_partition_path"] for r in before}
    columns = [c for c in before[0] if c not in hudi_rs.META]
    spark.sql(f"CREATE TABLE {sample} USING hoodpy LOCATION '{path}'")
    try:
        select = ", ".join("concat(txn_id, '-new') AS txn_id" if c == "txn_id" else c for c in columns)
        spark.sql(f"INSERT INTO {sample} SELECT {select} FROM {sample} WHERE txn_id = 'TXN-002'")
        spark.sql(f"UPDATE {sample} SET txn_type = 'UPDATED' WHERE txn_id = 'TXN-003'")
        spark.sql(f"DELETE FROM {sample} WHERE txn_id = 'TXN-005'")
        unchanged = _tree(path)
        with pytest.raises(Exception, match=r"value 'soon' is not a number"):
            spark.sql(f"INSERT INTO {sample} SELECT {select.replace(column, repr('soon') + ' AS ' + column)} "
                      f"FROM {sample} WHERE txn_id = 'TXN-006'")
        assert _tree(path) == unchanged
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {sample}")

    after = hudi_rs.snapshot(path)
    by_key = {}
    for r in after:
        by_key.setdefault(r["txn_id"], []).append(r)
    # The new row sits where Java put the row it copies (same number); the updated one did not move.
    assert [r["_hoodie_partition_path"] for r in by_key["TXN-002-new"]] == [partition_of["TXN-002"]]
    assert [(r["txn_type"], r["_hoodie_partition_path"]) for r in by_key["TXN-003"]] == [
        ("UPDATED", partition_of["TXN-003"])]
    assert "TXN-005" not in by_key
    assert sorted(by_key) == sorted({*partition_of, "TXN-002-new"} - {"TXN-005"})
    assert sorted(r[column] for r in after) == sorted(
        [r[column] for r in before if r["txn_id"] != "TXN-005"] +
        [r[column] for r in before if r["txn_id"] == "TXN-002"])
    ours = HoodieTable.for_path(spark, path).read()
    assert hudi_rs.df_rows_like(ours, after) == after
    assert parse_properties(Path(path, ".hoodie", "hoodie.properties").read_text())["hoodie.table.version"] == "9"

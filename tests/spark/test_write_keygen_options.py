"""Key generator options given with one write: the time-based format a Hudi 0.14 table does not record is
taken from the write's options (partition paths as Java makes them); an option that would change the table's
keys is refused naming it, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodpy.config.properties import load_table_properties, save_table_properties
from hoodpy.errors import InvalidConfigError
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

FORMAT = {"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
          "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"}


def _tree(path):
    return {str(p.relative_to(path)): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}


def test_write_options_complete_a_time_based_table_and_conflicts_are_refused(spark, tmp_path):
    path = str(tmp_path / "t")
    table = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["ts"],
                               precombine_field="ts",
                               key_generator_class="org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                               table_properties=FORMAT)
    # As Hudi 0.14 leaves it: the class recorded, the time-based keys not.
    props = load_table_properties(table.storage)
    save_table_properties(table.storage, {k: v for k, v in props.items() if k not in FORMAT})
    table = HoodieTable.for_path(spark, path)
    df = spark.createDataFrame([("a", 1705311000000), ("b", 1705485600000)], "id string, ts long")
    table.insert(df, options={"hoodie.deltastreamer.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                              "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd"})
    rows = sorted((r.id, r._hoodie_partition_path) for r in HoodieTable.for_path(spark, path).read().collect())
    assert rows == [("a", "2024/01/15"), ("b", "2024/01/17")]
    assert sorted(p.parent.relative_to(path).as_posix() for p in Path(path).rglob("*.parquet")) == [
        "2024/01/15", "2024/01/17"]

    before = _tree(path)
    with pytest.raises(InvalidConfigError, match="for hoodie.datasource.write.recordkey.field: the table has 'id'"):
        table.upsert(df, options={**FORMAT, "hoodie.datasource.write.recordkey.field": "ts"})
    assert _tree(path) == before

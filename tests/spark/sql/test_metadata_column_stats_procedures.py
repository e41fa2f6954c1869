"""show_metadata_table_column_stats and show_metadata_table_stats through CALL, with Hudi's parameters and
output columns, on a table whose metadata table has column_stats."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hoodpy.errors import MetadataTableError
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts long, city string"


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def test_column_stats_and_stats_procedures(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    path = str(tmp_path / "trips")
    table = HoodieTable.create(spark, path, table_name="trips", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts", options={"hoodie.metadata.enable": "true"})
    table.insert(spark.createDataFrame([(1, "a", 1, "sf"), (2, "b", 1, "nyc")], SCHEMA))
    name = f"{database}.trips"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    with pytest.raises(MetadataTableError, match="column.stats.enable"):
        call(spark, f"CALL show_metadata_table_column_stats(table => '{name}')")
    files_only = dict(call(spark, f"CALL show_metadata_table_stats(table => '{name}')"))
    assert set(files_only) == {"partitionCount", "files.baseFileCount", "files.logFileCount",
                               "files.totalBaseFileSizeInBytes", "files.totalLogFileSizeInBytes"}
    assert files_only["partitionCount"] == "2" and files_only["files.baseFileCount"] == "1"

    table.insert(spark.createDataFrame([(3, "c", 7, "sf"), (4, None, 9, "sf")], SCHEMA),
                 options={"hoodie.metadata.index.column.stats.enable": "true"})
    df = spark.sql(f"CALL show_metadata_table_column_stats(table => '{name}', partition => 'sf', "
                   f"targetColumns => 'name,ts')")
    assert df.columns == ["file_name", "column_name", "min_value", "max_value", "null_num"]
    sf_files = sorted(p.name for p in Path(path, "sf").glob("*.parquet"))
    expected = []
    for f in sf_files:
        meta = pq.read_metadata(Path(path, "sf", f))
        cols = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
        for column in ("name", "ts"):
            st = meta.row_group(0).column(cols[column]).statistics
            expected.append((f, column, str(st.min), str(st.max), st.null_count))
    assert [tuple(r) for r in df.collect()] == sorted(expected)
    assert any(r[4] == 1 for r in expected)  # the null name is counted
    everything = call(spark, f"CALL show_metadata_table_column_stats(path => '{path}')")
    assert len(everything) == 3 * 7  # 3 base files x (3 meta columns + 4 data columns)

    stats = dict(call(spark, f"CALL show_metadata_table_stats(table => '{name}')"))
    assert stats["column_stats.baseFileCount"] == "2"  # the 2 col-stats file groups
    sizes = sum(p.stat().st_size for p in Path(path, ".hoodie", "metadata", "column_stats").glob("col-stats-*.hfile"))
    assert stats["column_stats.totalBaseFileSizeInBytes"] == str(sizes)
    # Each group's init log file (an empty delete block), then the insert's block: built from the files before it,
    # the partition got the inserted file's records in the insert's own deltacommit.
    assert stats["column_stats.logFileCount"] == "4"

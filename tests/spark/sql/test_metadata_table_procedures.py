"""The metadata-table procedures through CALL: create / init / delete it, its partitions and files, and its
listing validated against storage, by catalog name and by path, with Hudi's output columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodpy.config.properties import load_table_properties
from hoodpy.errors import MetadataTableError
from hoodpy.storage import Storage
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts long, city string"


def call(spark, statement):
    return [tuple(r) for r in spark.sql(statement).collect()]


def data_files(path: str, partition: str) -> list[str]:
    return sorted(p.name for p in Path(path, partition).iterdir() if p.name.endswith(".parquet"))


def test_metadata_table_procedures(hoodpy_spark, database, tmp_path):
    spark = hoodpy_spark
    path = str(tmp_path / "trips")
    table = HoodieTable.create(spark, path, table_name="trips", record_key_fields=["id"], partition_fields=["city"],
                               precombine_field="ts")
    table.insert(spark.createDataFrame([(1, "a", 1, "sf"), (2, "b", 1, "nyc")], SCHEMA))
    name = f"{database}.trips"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    with pytest.raises(MetadataTableError, match="create_metadata_table"):
        call(spark, f"CALL show_metadata_table_partitions(table => '{name}')")

    [(created,)] = call(spark, f"CALL create_metadata_table(table => '{name}')")
    assert created.startswith(f"Created Metadata Table in {path}/.hoodie/metadata (duration=")
    assert load_table_properties(Storage(path))["hoodie.table.metadata.partitions"] == "files"
    with pytest.raises(MetadataTableError, match="not empty"):
        call(spark, f"CALL create_metadata_table(table => '{name}')")
    spark.sql(f"INSERT INTO {name} VALUES (3, 'c', 1, 'la'), (1, 'a2', 2, 'sf')")  # the table has one: kept

    partitions = spark.sql(f"CALL show_metadata_table_partitions(table => '{name}')")
    assert partitions.columns == ["partition"]
    assert [tuple(r) for r in partitions.collect()] == [("la",), ("nyc",), ("sf",)]
    files = spark.sql(f"CALL show_metadata_table_files(table => '{name}', partition => 'sf')")
    assert files.columns == ["file_path"] and [r[0] for r in files.collect()] == data_files(path, "sf")
    assert call(spark, f"CALL show_metadata_table_files(path => '{path}', partition => 'sf', limit => 1)") == \
        [(data_files(path, "sf")[0],)]
    validation = spark.sql(f"CALL validate_metadata_table_files(table => '{name}')")
    assert validation.columns == ["partition", "file_name", "is_present_in_fs", "is_present_in_metadata",
                                  "fs_size", "metadata_size"]
    assert validation.collect() == []
    verbose = call(spark, f"CALL validate_metadata_table_files(table => '{name}', verbose => true)")
    assert sorted((p, f) for p, f, *_ in verbose) == sorted(
        (p, f) for p in ("la", "nyc", "sf") for f in data_files(path, p))
    assert all(fs and md and fs_size == md_size > 0 for _, _, fs, md, fs_size, md_size in verbose)

    [(deleted,)] = call(spark, f"CALL delete_metadata_table(table => '{name}')")
    assert deleted == f"Deleted Metadata Table at '{path}/.hoodie/metadata'"
    assert not Path(path, ".hoodie", "metadata").exists()
    assert load_table_properties(Storage(path))["hoodie.table.metadata.partitions"] == ""
    [(opened,)] = call(spark, f"CALL init_metadata_table(table => '{name}')")
    assert opened.startswith("Initialized Metadata Table in ")
    [(checked,)] = call(spark, f"CALL init_metadata_table(table => '{name}', read_only => true)")
    assert checked.startswith("Opened Metadata Table in ")
    assert call(spark, f"CALL validate_metadata_table_files(path => '{path}')") == []

"""ALTER TABLE on hoodpy tables: SET / UNSET TBLPROPERTIES (options of later writes), ADD COLUMNS (schema
evolution, seen by reads and by hudi-rs), RENAME TO, DROP PARTITION (delete_partition); every other form is refused and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions, HudiTableBuilder

from hoodpy.errors import InvalidConfigError, InvalidStatementError, UnsupportedStatementError

pytestmark = pytest.mark.spark


def rows(spark, sql):
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=lambda r: tuple((v is not None, v) for v in r))


def properties(spark, name):
    return {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}


def hoodie_properties(path):
    text = (Path(path) / ".hoodie" / "hoodie.properties").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))


@pytest.fixture
def table(hoodpy_spark, database, tmp_path, request):
    spark = hoodpy_spark
    name = f"{database}.{request.node.name.removeprefix('test_')[:40]}"
    path = str(tmp_path / "t")
    spark.sql(f"""CREATE TABLE {name} (id INT, name STRING, ts BIGINT) USING hoodpy LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')""")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a', 1), (2, 'b', 1)")
    yield {"name": name, "path": path}
    spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_set_and_unset_tblproperties_are_options_of_later_writes(hoodpy_spark, table):
    spark, name = hoodpy_spark, table["name"]
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('hoodie.parquet.small.file.limit' = '0')")
    assert properties(spark, name)["hoodie.parquet.small.file.limit"] == "0"
    # With no small files to pack into, the new key opens a second file group.
    spark.sql(f"INSERT INTO {name} VALUES (3, 'c', 1)")
    assert rows(spark, f"SELECT count(DISTINCT _hoodie_file_name) FROM {name}") == [(2,)]
    spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ('hoodie.parquet.small.file.limit')")
    assert "hoodie.parquet.small.file.limit" not in properties(spark, name)
    # Back to the default: the next insert goes into an existing small file group.
    spark.sql(f"INSERT INTO {name} VALUES (4, 'd', 1)")
    assert rows(spark, f"SELECT count(DISTINCT _hoodie_file_id) FROM (SELECT split(_hoodie_file_name, '_')[0] "
                       f"AS _hoodie_file_id FROM {name})") == [(2,)]
    assert rows(spark, f"SELECT id, name FROM {name}") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_set_tblproperties_errors(hoodpy_spark, table):
    spark, name = hoodpy_spark, table["name"]
    before = properties(spark, name)
    with pytest.raises(InvalidConfigError, match="hoodie.parquet.small.file.limit"):
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('hoodie.parquet.small.file.limit' = 'lots')")
    # Unquoted dotted keys are checked by their whole name (they were cut to their last segment).
    with pytest.raises(InvalidConfigError, match="hoodie.parquet.small.file.limit"):
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES (hoodie.parquet.small.file.limit = 'lots')")
    with pytest.raises(UnsupportedStatementError, match="cannot set hoodie.base.path"):
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES (hoodie.base.path = '/elsewhere')")
    with pytest.raises(UnsupportedStatementError, match="cannot set primaryKey"):
        spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES (primaryKey = 'name')")
    with pytest.raises(UnsupportedStatementError, match="cannot unset hoodie.base.path"):
        spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ('hoodie.base.path')")
    assert properties(spark, name) == before


def test_add_columns_evolves_the_schema(hoodpy_spark, table):
    spark, name, path = hoodpy_spark, table["name"], table["path"]
    spark.sql(f"ALTER TABLE {name} ADD COLUMNS (note STRING COMMENT 'free text', score DOUBLE)")
    assert rows(spark, f"SELECT id, name, ts, note, score FROM {name}") == [(1, "a", 1, None, None),
                                                                          (2, "b", 1, None, None)]
    assert [c.name for c in spark.catalog.listColumns(name)][-2:] == ["note", "score"]
    spark.sql(f"INSERT INTO {name} (id, name, ts, note, score) VALUES (2, 'b2', 2, 'hi', 0.5)")
    assert rows(spark, f"SELECT id, name, note, score FROM {name}") == [(1, "a", None, None), (2, "b2", "hi", 0.5)]
    # The evolution is a commit of no records whose schema carries the new columns.
    commits = sorted(Path(path, ".hoodie").glob("*.commit"))
    alter = json.loads(commits[1].read_text())
    assert alter["partitionToWriteStats"] == {}
    assert [f["name"] for f in json.loads(alter["extraMetadata"]["schema"])["fields"]][-2:] == ["note", "score"]
    # An independent reader sees the column too.
    batches = HudiTableBuilder.from_base_uri(path).build().read(HudiReadOptions())
    got = pa.Table.from_batches(batches).select(["id", "note"]).to_pylist()
    assert sorted((r["id"], r["note"]) for r in got) == [(1, None), (2, "hi")]


def test_add_columns_errors_change_nothing(hoodpy_spark, table):
    spark, name, path = hoodpy_spark, table["name"], table["path"]
    before = sorted(p.name for p in Path(path, ".hoodie").iterdir())
    with pytest.raises(InvalidStatementError, match="column 'NAME' already exists"):
        spark.sql(f"ALTER TABLE {name} ADD COLUMNS (NAME STRING)")
    with pytest.raises(InvalidStatementError, match="cannot be NOT NULL"):
        spark.sql(f"ALTER TABLE {name} ADD COLUMNS (x INT NOT NULL)")
    for statement, what in [
        (f"ALTER TABLE {name} ADD COLUMN x INT FIRST", "column positions"),
        (f"ALTER TABLE {name} DROP COLUMN name", "DROP COLUMN"),
        (f"ALTER TABLE {name} ALTER COLUMN ts TYPE DOUBLE", "ALTER COLUMN"),
        (f"ALTER TABLE {name} RENAME COLUMN name TO label", ""),
        (f"ALTER TABLE {name} SET LOCATION '/tmp/elsewhere'", "SET LOCATION"),
    ]:
        with pytest.raises(UnsupportedStatementError,
                           match="SET TBLPROPERTIES, UNSET TBLPROPERTIES, ADD COLUMNS, RENAME TO and DROP PARTITION") as e:
            spark.sql(statement)
        assert what in str(e.value)
    assert sorted(p.name for p in Path(path, ".hoodie").iterdir()) == before
    assert rows(spark, f"SELECT * FROM {name}")[0][:5] != (None,) * 5
    assert rows(spark, f"SELECT id, name, ts FROM {name}") == [(1, "a", 1), (2, "b", 1)]


def test_rename_to(hoodpy_spark, database, table):
    spark, name, path = hoodpy_spark, table["name"], table["path"]
    new = f"{database}.renamed_t"
    spark.sql(f"ALTER TABLE {name} RENAME TO {new}")
    try:
        assert not spark.catalog.tableExists(name)
        assert rows(spark, f"SELECT id, name FROM {new}") == [(1, "a"), (2, "b")]
        assert hoodie_properties(path)["hoodie.table.name"] == "renamed_t"
        spark.sql(f"INSERT INTO {new} VALUES (3, 'c', 1)")
        assert len(rows(spark, f"SELECT id FROM {new}")) == 3
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {new}")


def test_drop_partition_is_hudis_delete_partition(hoodpy_spark, database, tmp_path):
    spark, name, path = hoodpy_spark, f"{database}.dropped", str(tmp_path / "p")
    spark.sql(f"""CREATE TABLE {name} (id INT, ts BIGINT, dt STRING, hh STRING) USING hoodpy LOCATION '{path}'
                  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') PARTITIONED BY (dt, hh)""")
    try:
        spark.sql(f"INSERT INTO {name} VALUES (1, 1, 'd1', '10'), (2, 1, 'd1', '11'), (3, 1, 'd2', '10')")
        before = sorted(p.name for p in Path(path, ".hoodie").iterdir())
        with pytest.raises(InvalidStatementError, match="must name each partition field"):
            spark.sql(f"ALTER TABLE {name} DROP PARTITION (dt = 'd1')")
        with pytest.raises(InvalidConfigError, match="no such partition"):
            spark.sql(f"ALTER TABLE {name} DROP PARTITION (dt = 'd9', hh = '10')")
        assert sorted(p.name for p in Path(path, ".hoodie").iterdir()) == before
        spark.sql(f"ALTER TABLE {name} DROP IF EXISTS PARTITION (dt = 'd9', hh = '10')")  # nothing to do
        assert sorted(p.name for p in Path(path, ".hoodie").iterdir()) == before

        spark.sql(f"ALTER TABLE {name} DROP PARTITION (dt = 'd1', hh = '10'), PARTITION (dt = 'd2', hh = '10')")
        assert rows(spark, f"SELECT id, dt, hh FROM {name}") == [(2, "d1", "11")]
        replace = [p.name for p in Path(path, ".hoodie").iterdir() if p.name.endswith(".replacecommit")]
        assert len(replace) == 1
        metadata = json.loads(Path(path, ".hoodie", replace[0]).read_text())
        assert metadata["operationType"] == "DELETE_PARTITION"
        assert sorted(metadata["partitionToReplaceFileIds"]) == ["dt=d1/hh=10", "dt=d2/hh=10"]
        theirs = HudiTableBuilder.from_base_uri(path).build().read(HudiReadOptions())
        assert sorted(pa.Table.from_batches(theirs).column("id").to_pylist()) == [2]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")

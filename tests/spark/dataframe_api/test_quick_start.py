"""Hudi 1.x's Spark quick start (https://hudi.apache.org/docs/quick-start-guide, Python tab, datasource flavour)
run as written with format("hudi") replaced by format("hoodpy"): the guide's table has no record key, so Hudi
generates keys (``<instant>_<task partition>_<row>``); updates and deletes find rows by the ``_hoodie_record_key``
of rows read back. hudi-rs reads the table after every step and sees what hoodpy reads.

Steps of the guide covered: insert (mode overwrite creates the table), query, update (append), delete, time
travel (three formats), incremental query and point in time (begin ``0`` / ``000``), the "Table Types" switch to
MERGE_ON_READ, and the "Keys" and "Merge Modes" sections (a record key and an ordering field). Added, from Hudi's
write operations: insert_overwrite and delete_partition. Not covered: the CDC query (CDC is a separate issue), the
"Merging Data" step's payload class ``com.payloads.CustomMergeIntoConnector`` (a user's Java class, refused by
name below), and the SQL and index sections.
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from pyspark.sql.functions import col

from hoodpy.errors import InvalidConfigError, InvalidRecordError
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs
from tests.spark.hoodpy_spark_helpers import tree

pytestmark = pytest.mark.spark

columns = ["ts", "uuid", "rider", "driver", "fare", "city"]
data = [(1695159649087, "334e26e9-8355-45cc-97c6-c31daf0df330", "rider-A", "driver-K", 19.10, "san_francisco"),
        (1695091554788, "e96c4396-3fad-413a-a942-4cb36106d721", "rider-C", "driver-M", 27.70, "san_francisco"),
        (1695046462179, "9909a8b1-2d15-4d3d-8ec9-efc48c536a00", "rider-D", "driver-L", 33.90, "san_francisco"),
        (1695516137016, "e3cf430c-889d-4015-bc98-59bdce1e530c", "rider-F", "driver-P", 34.15, "sao_paulo"),
        (1695115999911, "c8abbe79-8d89-47ea-b4ce-4d224bae5bfa", "rider-J", "driver-T", 17.85, "chennai")]
FARES = {r[2]: r[4] for r in data}
CITY = {r[2]: r[5] for r in data}


def fares(df) -> dict[str, float]:
    return {r["rider"]: round(r["fare"], 2) for r in df.select("rider", "fare").collect()}


def same_as_hudi_rs(df, path: str, as_of: str | None = None) -> None:
    theirs = hudi_rs.snapshot(path, as_of)
    assert hudi_rs.df_rows_like(df, theirs) == theirs


def properties(path: str) -> dict[str, str]:
    text = (path.removeprefix("file://") + "/.hoodie/hoodie.properties")
    with open(text) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line and not line.startswith("#"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_quick_start_as_written(api_spark, tmp_path, table_type):
    spark = api_spark
    tableName = "trips_table"
    basePath = "file://" + str(tmp_path / "trips_table")
    local = str(tmp_path / "trips_table")

    # -- Insert data
    inserts = spark.createDataFrame(data).toDF(*columns)
    hudi_options = {
        'hoodie.table.name': tableName,
        'hoodie.datasource.write.partitionpath.field': 'city'
    }
    if table_type == "MERGE_ON_READ":  # the guide's "Table Types" section
        hudi_options['hoodie.datasource.write.table.type'] = 'MERGE_ON_READ'
    inserts.write.format("hoodpy"). \
        options(**hudi_options). \
        mode("overwrite"). \
        save(basePath)

    # The table the guide's first write creates: no record key (keys generated), SimpleKeyGenerator inferred
    # from one partition field, the requested type; the write was a bulk_insert (no key, no operation named).
    props = properties(basePath)
    assert "hoodie.table.recordkey.fields" not in props
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert props["hoodie.table.partition.fields"] == "city" and props["hoodie.table.type"] == table_type
    assert props["hoodie.table.name"] == tableName
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "false"
    timeline = HoodieTable.for_path(spark, basePath).timeline
    first_instant = timeline.completed_commits()[0]
    assert timeline.commit_metadata(first_instant).operation_type == "BULK_INSERT"

    # -- Query data
    tripsDF = spark.read.format("hoodpy").load(basePath)
    tripsDF.createOrReplaceTempView("trips_table")

    assert fares(spark.sql("SELECT uuid, fare, ts, rider, driver, city FROM  trips_table WHERE fare > 20.0")) == {
        "rider-C": 27.70, "rider-D": 33.90, "rider-F": 34.15}
    meta = spark.sql("SELECT _hoodie_commit_time, _hoodie_record_key, _hoodie_partition_path, rider, driver, fare "
                     "FROM trips_table").collect()
    first = first_instant.timestamp
    keys = {r["rider"]: r["_hoodie_record_key"] for r in meta}
    assert all(re.fullmatch(rf"{first}_\d+_\d+", k) for k in keys.values()), keys
    assert len(set(keys.values())) == 5
    assert {(r["rider"], r["_hoodie_partition_path"], r["_hoodie_commit_time"]) for r in meta} == {
        (rider, CITY[rider], first) for rider in FARES}
    same_as_hudi_rs(tripsDF, basePath)

    # -- Update data
    # Lets read data from target Hudi table, modify fare column for rider-D and update it.
    updatesDf = spark.read.format("hoodpy").load(basePath).filter("rider == 'rider-D'").withColumn("fare", col("fare") * 10)

    updatesDf.write.format("hoodpy"). \
        options(**hudi_options). \
        mode("append"). \
        save(basePath)

    after_update = spark.read.format("hoodpy").load(basePath)
    assert fares(after_update) == {**FARES, "rider-D": 339.0}  # updated in place: still five rows
    rows = {r["rider"]: r for r in after_update.collect()}
    assert {r: rows[r]["_hoodie_record_key"] for r in rows} == keys  # the key a row was given stays its key
    assert rows["rider-D"]["_hoodie_commit_time"] > first
    assert {rows[r]["_hoodie_commit_time"] for r in rows if r != "rider-D"} == {first}
    same_as_hudi_rs(after_update, basePath)

    # -- Delete data
    # Lets  delete rider: rider-D
    deletesDF = spark.read.format("hoodpy").load(basePath).filter("rider == 'rider-F'")

    # issue deletes
    hudi_hard_delete_options = {
        'hoodie.table.name': tableName,
        'hoodie.datasource.write.partitionpath.field': 'city',
        'hoodie.datasource.write.operation': 'delete',
    }

    deletesDF.write.format("hoodpy"). \
        options(**hudi_hard_delete_options). \
        mode("append"). \
        save(basePath)

    after_delete = spark.read.format("hoodpy").load(basePath)
    expected = {r: f for r, f in {**FARES, "rider-D": 339.0}.items() if r != "rider-F"}
    assert fares(after_delete) == expected
    same_as_hudi_rs(after_delete, basePath)
    instants = hudi_rs.completed_instants(basePath)
    assert len(instants) == 3 and instants[0] == first

    # -- Time Travel Query: the guide's three formats, at the first commit and at midnight after it
    as_of_first = spark.read.format("hoodpy"). \
        option("as.of.instant", first). \
        load(basePath)
    assert fares(as_of_first) == FARES
    same_as_hudi_rs(as_of_first, basePath, as_of=first)
    moment = datetime.strptime(first, "%Y%m%d%H%M%S%f")
    assert fares(spark.read.format("hoodpy").
                 option("as.of.instant", moment.strftime("%Y-%m-%d %H:%M:%S.") + first[14:]).
                 load(basePath)) == FARES
    # "It is equal to as.of.instant = <day> 00:00:00": before the table existed, so no rows
    assert spark.read.format("hoodpy").option("as.of.instant", moment.strftime("%Y-%m-%d")).load(basePath) \
        .count() == 0

    # -- Incremental query
    # reload data
    spark.read.format("hoodpy").load(basePath).createOrReplaceTempView("trips_table")

    commits = list(map(lambda row: row[0], spark.sql("SELECT DISTINCT(_hoodie_commit_time) AS commitTime FROM  trips_table ORDER BY commitTime").limit(50).collect()))
    beginTime = commits[len(commits) - 2]  # commit time we are interested in

    # incrementally query data
    incremental_read_options = {
        'hoodie.datasource.query.type': 'incremental',
        'hoodie.datasource.read.begin.instanttime': beginTime,
    }

    tripsIncrementalDF = spark.read.format("hoodpy"). \
        options(**incremental_read_options). \
        load(basePath)
    tripsIncrementalDF.createOrReplaceTempView("trips_incremental")

    changed = spark.sql("SELECT `_hoodie_commit_time`, fare, rider, driver, uuid, ts FROM trips_incremental WHERE fare > 20.0")
    assert beginTime == first and fares(changed) == {"rider-D": 339.0}
    theirs = hudi_rs.incremental(basePath, beginTime, instants[-1])
    assert hudi_rs.df_rows_like(tripsIncrementalDF, theirs) == theirs

    # The Scala tab's begin time 0, and 0.x's "000": from the start of the timeline
    for begin in (0, "000"):
        everything = spark.read.format("hoodpy").option("hoodie.datasource.query.type", "incremental") \
            .option("hoodie.datasource.read.begin.instanttime", begin).load(basePath)
        assert fares(everything) == expected

    # -- Insert overwrite (Hudi's write operations): san_francisco's rows replaced by the batch's
    overwrite = spark.createDataFrame(
        [(1695332066204, "1dced545-862b-4ceb-8b43-d2a568f6616b", "rider-E", "driver-O", 93.50, "san_francisco")]
    ).toDF(*columns)
    overwrite.write.format("hoodpy").options(**hudi_options) \
        .option("hoodie.datasource.write.operation", "insert_overwrite").mode("append").save(basePath)
    after_overwrite = spark.read.format("hoodpy").load(basePath)
    assert fares(after_overwrite) == {"rider-E": 93.50, "rider-J": 17.85}
    same_as_hudi_rs(after_overwrite, basePath)

    # -- Delete partition: chennai, named by hoodie.datasource.write.partitions.to.delete
    before = HoodieTable.for_path(spark, basePath).file_system_view().latest_file_slices(["chennai"])
    spark.createDataFrame([], inserts.schema).write.format("hoodpy").options(**hudi_options) \
        .option("hoodie.datasource.write.operation", "delete_partition") \
        .option("hoodie.datasource.write.partitions.to.delete", "chennai").mode("append").save(basePath)
    after_drop = spark.read.format("hoodpy").load(basePath)
    assert fares(after_drop) == {"rider-E": 93.50}
    same_as_hudi_rs(after_drop, basePath)
    table = HoodieTable.for_path(spark, basePath)
    drop = table.timeline.completed_commits()[-1]
    assert drop.action.value == "replacecommit"
    drop_metadata = table.timeline.commit_metadata(drop)
    assert drop_metadata.operation_type == "DELETE_PARTITION" and not drop_metadata.write_stats
    assert drop_metadata.replaced_file_ids() == {(s.partition_path, s.file_id) for s in before} != set()
    assert (tmp_path / "trips_table" / "chennai").is_dir()  # files stay until cleaned, as in Hudi
    # time travel still sees the partition
    assert fares(spark.read.format("hoodpy").option("as.of.instant", instants[-1]).load(basePath)) == expected
    assert local  # the path hoodpy wrote is the one hudi-rs read


def test_keys_and_merge_modes_sections(api_spark, tmp_path):
    """The guide's "Keys" and "Merge Modes" sections: a record key makes upsert the operation; an ordering field
    keeps a stored record whose ordering value is larger than the incoming one's."""
    spark = api_spark
    basePath = str(tmp_path / "keyed")
    inserts = spark.createDataFrame(data).toDF(*columns)
    hudi_options = {
        'hoodie.table.name': "trips_table",
        'hoodie.datasource.write.partitionpath.field': 'city',
        'hoodie.datasource.write.recordkey.field': 'uuid',
        'hoodie.datasource.write.precombine.field': 'ts',
    }
    inserts.write.format("hoodpy").options(**hudi_options).mode("overwrite").save(basePath)
    table = HoodieTable.for_path(spark, basePath)
    assert table.timeline.commit_metadata(table.timeline.completed_commits()[0]).operation_type == "UPSERT"
    assert {r["_hoodie_record_key"] for r in spark.read.format("hoodpy").load(basePath).collect()} == {
        d[1] for d in data}

    upsert = spark.createDataFrame([
        (1695159649088, data[0][1], "rider-A", "driver-K", 50.0, "san_francisco"),  # newer: wins
        (1695091554787, data[1][1], "rider-C", "driver-M", 1.0, "san_francisco"),   # older: stored row stays
    ]).toDF(*columns)
    upsert.write.format("hoodpy").options(**hudi_options).mode("append").save(basePath)
    merged = spark.read.format("hoodpy").load(basePath)
    assert fares(merged) == {**FARES, "rider-A": 50.0}
    same_as_hudi_rs(merged, basePath)


def test_generated_keys_refuse_what_hudi_refuses(api_spark, tmp_path):
    """On a table with generated keys: an upsert of rows that do not carry _hoodie_record_key, combining an insert
    batch, and the guide's user payload class are refused, naming the problem, and nothing changes."""
    spark = api_spark
    path = str(tmp_path / "auto")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.partitionpath.field": "city"}
    spark.createDataFrame(data).toDF(*columns).write.format("hoodpy").options(**options).mode("overwrite").save(path)
    before = tree(path)
    fresh = spark.createDataFrame(data[:1]).toDF(*columns)
    with pytest.raises(InvalidRecordError, match="_hoodie_record_key"):
        fresh.write.format("hoodpy").options(**options).option("hoodie.datasource.write.operation", "upsert") \
            .mode("append").save(path)
    with pytest.raises(InvalidRecordError, match="_hoodie_record_key"):
        fresh.write.format("hoodpy").options(**options).option("hoodie.datasource.write.operation", "delete") \
            .mode("append").save(path)
    with pytest.raises(InvalidConfigError, match="auto generation of record keys"):
        fresh.write.format("hoodpy").options(**options).option("hoodie.datasource.write.operation", "insert") \
            .option("hoodie.combine.before.insert", "true").mode("append").save(path)
    with pytest.raises(InvalidConfigError, match="CustomMergeIntoConnector"):
        spark.read.format("hoodpy").load(path).limit(2).withColumn("fare", col("fare") * 100).write \
            .format("hoodpy").option("hoodie.datasource.write.payload.class", "com.payloads.CustomMergeIntoConnector") \
            .mode("append").save(path)
    assert tree(path) == before

    # An insert naming no key generates new keys each time (Hudi's append-only behaviour): duplicates by content
    fresh.write.format("hoodpy").options(**options).option("hoodie.datasource.write.operation", "insert") \
        .mode("append").save(path)
    rows = spark.read.format("hoodpy").load(path).filter("rider == 'rider-A'").collect()
    assert len(rows) == 2 and len({r["_hoodie_record_key"] for r in rows}) == 2
    assert hudi_rs.snapshot_tuples(path, ["rider", "fare"]).count(("rider-A", 19.10)) == 2


def test_python_api_generates_keys_and_deletes_partitions(api_spark, tmp_path):
    """HoodieTable.create without record key fields, insert, and delete_partitions (with a wildcard)."""
    spark = api_spark
    table = HoodieTable.create(spark, str(tmp_path / "py"), table_name="py", record_key_fields=[],
                               partition_fields=["city"])
    result = table.insert(spark.createDataFrame(data).toDF(*columns))
    keys = [r["_hoodie_record_key"] for r in table.read().collect()]
    assert len(set(keys)) == 5 and all(k.startswith(result.instant_time + "_") for k in keys)
    dropped = table.delete_partitions(["sao*"])
    assert dropped.files_replaced == 1 and dropped.operation.value == "delete_partition"
    assert sorted(r["city"] for r in table.read().collect()) == ["chennai", "san_francisco", "san_francisco",
                                                                  "san_francisco"]
    with pytest.raises(InvalidConfigError, match="no such partition"):
        table.delete_partitions(["paris"])
    # without partitions.to.delete: the partitions of the rows given
    table.write(spark.createDataFrame(data[-1:]).toDF(*columns), "delete_partition")
    assert hudi_rs.snapshot_tuples(str(tmp_path / "py"), ["rider"]) == [("rider-A",), ("rider-C",), ("rider-D",)]

"""Reads through SQL: planning is reused while a table is unchanged and redone after any commit; pruning
agrees with Spark's WHERE under either ANSI setting; columns qualified by database resolve."""

from __future__ import annotations

import pytest

import hoodpy.read.cache as read_cache
from hoodpy.errors import InvalidConfigError
from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, fare double, f float, note string, dp double"
SEPARATE_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every write opens new file groups
ANSI = "spark.sql.ansi.enabled"


@pytest.fixture(scope="module")
def table(hoodpy_spark, database, tmp_path_factory):
    """Four base files; partitioned by a DOUBLE column, with a FLOAT column holding 2^24."""
    spark = hoodpy_spark
    path = str(tmp_path_factory.mktemp("planning") / "t")
    t = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["dp"],
                           hive_style_partitioning=True)
    batches = [
        [(6, 10.0, 1.5, "6", 1.0), (9, 11.0, 16777216.0, "nine", 2.0)],
        [(20, 20.0, 2.5, "20", 2.0), (21, 21.0, 3.5, None, 1.0)],
    ]
    for b in batches:
        t.insert(spark.createDataFrame(b, SCHEMA), options=SEPARATE_FILES)
    name = f"{database}.t"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    return {"name": name, "path": path, "table": t, "database": database}


@pytest.fixture
def ansi(hoodpy_spark):
    """Sets spark.sql.ansi.enabled for one test and puts the session's value back."""
    saved = hoodpy_spark.conf.get(ANSI, None)

    def set_ansi(value: bool) -> None:
        hoodpy_spark.conf.set(ANSI, str(value).lower())

    yield set_ansi
    if saved is None:
        hoodpy_spark.conf.unset(ANSI)
    else:
        hoodpy_spark.conf.set(ANSI, saved)


def outcome(spark, query):
    """Sorted rows, or the error's class name: what a user sees."""
    try:
        return sorted((tuple(r) for r in spark.sql(query).collect()), key=repr)
    except Exception as e:  # noqa: BLE001 -- ANSI casts fail at run time, and must fail alike on both sides
        return type(e).__name__ + ":" + str(e).split("]")[0]


# -- planning reuse and freshness -------------------------------------------------------------------
def test_a_repeated_query_reuses_the_plan_and_a_commit_is_seen_at_once(hoodpy_spark, table, monkeypatch,
                                                                      tmp_path_factory):
    spark = hoodpy_spark
    path = str(tmp_path_factory.mktemp("fresh") / "w")
    writer = HoodieTable.create(spark, path, table_name="w", record_key_fields=["id"])
    writer.insert(spark.createDataFrame([(1, "a")], "id int, v string"))
    name = f"{table['database']}.w"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    listings = []
    real = read_cache.table_base_files
    monkeypatch.setattr(read_cache, "table_base_files", lambda *a, **k: listings.append(1) or real(*a, **k))

    query = f"SELECT id, v FROM {name} ORDER BY id"
    assert [tuple(r) for r in spark.sql(query).collect()] == [(1, "a")]
    first = spark.sql(query)
    assert [tuple(r) for r in spark.sql(query).collect()] == [(1, "a")]
    assert len(listings) == 1  # unchanged table: the base files were listed once
    assert spark.sql(query).inputFiles() == first.inputFiles()

    # Another handle commits (an upsert and an insert): the next SELECT sees both at once.
    other = HoodieTable.for_path(spark, path)
    other.upsert(spark.createDataFrame([(1, "b"), (2, "c")], "id int, v string"))
    assert [tuple(r) for r in spark.sql(query).collect()] == [(1, "b"), (2, "c")]
    assert len(listings) == 2
    # A delete through the Python API, then a rollback of it: each is visible to the next query.
    deleted = writer.delete(spark.createDataFrame([(2,)], "id int"))
    assert [tuple(r) for r in spark.sql(query).collect()] == [(1, "b")]
    writer.rollback_to_instant(deleted.instant_time)
    assert [tuple(r) for r in spark.sql(query).collect()] == [(1, "b"), (2, "c")]
    # Time travel still plans from the same cached state.
    first_commit = writer.timeline.completed_commits()[0].timestamp
    assert [tuple(r) for r in spark.sql(f"SELECT id, v FROM {name} VERSION AS OF {first_commit}").collect()] \
        == [(1, "a")]


# -- typed literals: pruning agrees with Spark's WHERE under both ANSI settings ---------------------------
WHERES = [
    "id IN (9.0, '20')",        # mixed kinds: ANSI compares numbers, non-ANSI text
    "id = '6'", "id = '9.5'", "id = 9.0", "id IN (6, 9)", "id < 9.5",
    "note = 6", "note IN ('6', 20)", "note = '20'",
    "fare = 10", "fare IN (10, 11.5)", "fare < 11",
    "f = 16777217", "f < 16777217", "f >= 16777217",  # FLOAT vs INT: rounded (non-ANSI) or DOUBLE (ANSI)
    "f = 1.5", "f > 2",
    "dp = 2", "dp IN (1, 3)", "dp = '2'", "dp > 1.5",   # a DOUBLE partition column
    "id = 6 AND dp = 1",
]


@pytest.mark.parametrize("ansi_on", [True, False])
def test_pruning_never_drops_a_row_spark_returns(hoodpy_spark, table, ansi, ansi_on):
    spark = hoodpy_spark
    ansi(ansi_on)
    table["table"].read().createOrReplaceTempView("unpruned_planning_t")
    for where in WHERES:
        got = outcome(spark, f"SELECT id, fare, f, note, dp FROM {table['name']} WHERE {where}")
        expected = outcome(spark, f"SELECT id, fare, f, note, dp FROM unpruned_planning_t WHERE {where}")
        assert got == expected, f"ansi={ansi_on}: {where}"
    # The settings differ here: non-ANSI rounds 16777217 to FLOAT (= 2^24), ANSI compares DOUBLEs.
    assert outcome(spark, f"SELECT id FROM {table['name']} WHERE f = 16777217") == ([] if ansi_on else [(9,)])
    assert len(spark.sql(f"SELECT id FROM {table['name']} WHERE dp = 2").inputFiles()) == 2  # still prunes


@pytest.mark.parametrize("ansi_on", [True, False])
def test_python_filters_bind_values_to_the_column_type(hoodpy_spark, table, ansi, ansi_on):
    ansi(ansi_on)
    t = table["table"]

    def ids(filters):
        return sorted(r["id"] for r in t.read(filters=filters).collect())

    assert ids([("id", "in", [9.0, "20"])]) == [9, 20]       # the same under both settings
    assert ids([("ID", "=", "6")]) == [6]
    assert ids([("id", "in", [9.5, 6])]) == [6]
    assert ids([("id", "<", 9.5)]) == [6, 9]
    assert ids([("note", "=", 6)]) == [6]
    assert ids([("dp", "=", 2)]) == [9, 20]
    assert ids([("dp", "in", ["1", 3])]) == [6, 21]
    assert ids([("f", "=", 16777216)]) == [9]
    assert ids([("f", "=", 16777217)]) == []                  # compared exactly, as DOUBLE
    assert ids([("fare", ">=", "20")]) == [20, 21]
    with pytest.raises(InvalidConfigError, match="'abc' is not a number .*column id is int"):
        t.read(filters=[("id", "in", [6, "abc"])])
    with pytest.raises(InvalidConfigError, match="1.5 is not a string"):
        t.read(filters=[("note", "=", 1.5)])


# -- columns qualified by database -------------------------------------------------------------------
def test_columns_qualified_by_database_or_table(hoodpy_spark, table):
    spark, name, db = hoodpy_spark, table["name"], table["database"]

    def rows(query):
        return sorted(tuple(r) for r in spark.sql(query).collect())

    assert rows(f"SELECT {db}.t.id, t.note FROM {name} WHERE {db}.t.id = 6") == [(6, "6")]
    assert rows(f"SELECT spark_catalog.{db}.t.id FROM {name} WHERE t.dp = 2 AND {db}.t.fare > 15") == [(20,)]
    assert rows(f"SELECT {db}.t.id FROM {name} JOIN (SELECT 6 AS k) s ON {db}.t.id = s.k") == [(6,)]
    assert rows(f"SELECT x.id FROM {name} x WHERE x.id = 9") == [(9,)]
    assert rows(f"SELECT t.id FROM {name} AS t WHERE t.id = 9") == [(9,)]
    assert rows(f"SELECT t.id FROM {name} WHERE t.id = 9") == [(9,)]
    # The pushed-down db.t.col filter prunes: one file holds id 6.
    assert len(spark.sql(f"SELECT * FROM {name} WHERE {db}.t.id = 6").inputFiles()) == 1
    # As in Spark, an alias hides the table's name.
    with pytest.raises(Exception, match="UNRESOLVED_COLUMN"):
        spark.sql(f"SELECT {db}.t.id FROM {name} AS x").collect()

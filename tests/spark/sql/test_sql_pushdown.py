"""WHERE pushdown: SELECT over a hoodpy table reads fewer files when the WHERE allows it, and returns exactly
what the same query returns over the unpruned snapshot, for pushable and non-pushable predicates."""

from __future__ import annotations

import pytest

from hoodpy.table import HoodieTable

pytestmark = pytest.mark.spark

SCHEMA = "id int, fare double, note string, city string"
SEPARATE_FILES = {"hoodie.parquet.small.file.limit": "0"}  # every write opens new file groups


@pytest.fixture(scope="module")
def table(hoodpy_spark, database, tmp_path_factory):
    """Six base files: each commit writes one file per partition it touches, with its own id and fare range."""
    spark = hoodpy_spark
    path = str(tmp_path_factory.mktemp("pushdown") / "t")
    t = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["city"],
                           hive_style_partitioning=True)
    batches = [
        [(1, 1.0, "x", "sf"), (2, 2.0, "y", "sf"), (3, 3.0, "z", "nyc"), (4, 4.0, "w", "nyc")],
        [(5, 10.0, None, "sf"), (6, 11.0, "v", "sf"), (7, 12.0, "u", "nyc"), (8, 13.0, "t", "nyc")],
        [(9, 20.0, "s", "la"), (10, 21.0, "r", "la"), (11, 22.0, "q", "sf"), (12, 23.0, "p", "sf")],
    ]
    instants = [t.insert(spark.createDataFrame(b, SCHEMA), options=SEPARATE_FILES).instant_time for b in batches]
    name = f"{database}.t"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    spark.sql("SET spark.sql.parquet.filterPushdown=true")
    t.read().createOrReplaceTempView("unpruned_t")
    return {"name": name, "path": path, "instants": instants, "table": t}


def run(spark, query):
    df = spark.sql(query)
    rows = sorted((tuple(r) for r in df.collect()), key=lambda r: tuple((v is not None, v) for v in r))
    return rows, len(df.inputFiles())


def check(spark, table, where, *, files=None, select="id, fare, note, city"):
    """The query over the hoodpy table equals the query over the unpruned snapshot; returns files read."""
    got, read = run(spark, f"SELECT {select} FROM {table['name']} AS t WHERE {where}")
    expected, all_files = run(spark, f"SELECT {select} FROM unpruned_t AS t WHERE {where}")
    assert all_files == 6
    assert got == expected, where
    if files is not None:
        assert read == files, f"{where}: read {read} files, expected {files}"
    return got


@pytest.mark.parametrize(("where", "files"), [
    ("city = 'sf'", 3),                                  # partition pruning
    ("'nyc' = city", 2),
    ("CITY IN ('la', 'nyc')", 3),
    ("id = 6", 1),                                       # record-key range
    ("id IN (1, 9)", 2),
    ("id BETWEEN 5 AND 8", 2),                           # footer statistics
    ("fare BETWEEN 10 AND 13", 4),                       # floats: > / >= never prune (NaN sorts above all)
    ("fare >= 20.5 AND city = 'la'", 1),
    ("fare < 2", 1),
    ("note IS NULL", 1),
    ("note IS NOT NULL AND id > 8", 2),
    ("t.city = 'sf' AND t.fare <= 11", 2),               # qualified by the alias
    ("id = 6 AND (note = 'v' OR note IS NULL)", 1),      # the OR stays with Spark, the rest prunes
])
def test_pushed_predicates_read_fewer_files(hoodpy_spark, table, where, files):
    check(hoodpy_spark, table, where, files=files)


@pytest.mark.parametrize("where", [
    "upper(city) = 'SF'",             # a function of the column
    "city = 'sf' OR fare > 20",       # a disjunction
    "NOT city = 'sf'",
    "id = '6'",                       # a string literal against an int column: left to Spark's casts
    "id = 6.0",
    "fare + 1 > 12",
    "note IS NULL OR note = 'x'",
    "id IN (SELECT 6)",
])
def test_predicates_that_are_not_pushed_read_every_file(hoodpy_spark, table, where):
    check(hoodpy_spark, table, where, files=6)


def test_queries_around_the_table(hoodpy_spark, table):
    spark, name = hoodpy_spark, table["name"]
    # Aggregates, a CTE, a subquery in FROM: each WHERE prunes the read under it.
    got, read = run(spark, f"SELECT city, count(*), sum(fare) FROM {name} WHERE city = 'sf' GROUP BY city")
    assert (got, read) == ([("sf", 6, 69.0)], 3)
    got, read = run(spark, f"WITH x AS (SELECT id FROM {name} WHERE id > 10) SELECT * FROM x")
    assert (got, read) == ([(11,), (12,)], 1)
    # A self-join: each side gets its own filters.
    got, read = run(spark, f"""SELECT a.id, b.id FROM {name} a JOIN {name} b ON a.fare = b.fare - 1
                                WHERE a.city = 'la' AND b.id > 8""")
    assert got == [(9, 10), (10, 11)] and read == 2
    # The null-supplying side of an outer join is not pruned: t.note IS NULL must also see unmatched rows.
    query = """SELECT v.k, x.id FROM VALUES (5), (99) AS v(k) LEFT JOIN {t} AS x ON v.k = x.id
               WHERE x.note IS NULL"""
    got, read = run(spark, query.format(t=name))
    expected, _ = run(spark, query.format(t="unpruned_t"))
    assert got == expected == [(5, 5), (99, None)] and read == 6
    # Time travel with a WHERE: pruned among the files of that instant.
    got, read = run(spark, f"SELECT id FROM {name} VERSION AS OF {table['instants'][0]} WHERE city = 'sf'")
    assert (got, read) == ([(1,), (2,)], 1)


def test_explain_select_on_a_hoodpy_table(hoodpy_spark, table):
    plan = hoodpy_spark.sql(f"EXPLAIN SELECT id FROM {table['name']} WHERE city = 'sf'").collect()[0][0]
    assert "FileScan parquet" in plan and "HOODPY-TABLE" not in plan, plan
    assert "(3 paths)" in plan and "city=nyc" not in plan, plan  # the pruned snapshot: sf's three files

"""``hudi_table_changes`` in Spark SQL: Hudi's incremental query through the SQL layer, equal to hudi-rs's
incremental read on every window of an insert / upsert / delete / insert_overwrite sequence, usable in
joins, WHERE and aggregates, with clear errors for a bad table, format or instant."""

from __future__ import annotations

import pytest

from hoodpy.errors import InvalidConfigError, InvalidInstantError, InvalidStatementError, UnknownTableError
from hoodpy.meta_fields import COMMIT_TIME
from hoodpy.table import HoodieTable
from tests.compat import hudi_rs

pytestmark = pytest.mark.spark

SCHEMA = "id int, name string, ts bigint, region string"
EARLIEST = "00000000000000000"


@pytest.fixture(scope="module")
def changes(hoodpy_spark, database, tmp_path_factory):
    """Four commits: insert, upsert (one update, one new key), delete, insert_overwrite of region 'eu'."""
    spark = hoodpy_spark
    path = str(tmp_path_factory.mktemp("changes") / "t")
    t = HoodieTable.create(spark, path, table_name="t", record_key_fields=["id"], partition_fields=["region"],
                           precombine_field="ts")
    df = lambda rows: spark.createDataFrame(rows, SCHEMA)  # noqa: E731
    instants = [
        t.insert(df([(1, "a", 1, "eu"), (2, "b", 1, "eu"), (3, "c", 1, "us")])).instant_time,
        t.upsert(df([(2, "b2", 2, "eu"), (4, "d", 2, "us")])).instant_time,
        t.delete(df([(3, "c", 3, "us")])).instant_time,
        t.insert_overwrite(df([(5, "e", 4, "eu")])).instant_time,
    ]
    name = f"{database}.t"
    spark.sql(f"CREATE TABLE {name} USING hoodpy LOCATION '{path}'")
    spark.sql(f"CREATE TABLE {database}.names (id INT, label STRING) USING parquet")
    spark.sql(f"INSERT INTO {database}.names VALUES (1, 'one'), (2, 'two'), (4, 'four'), (5, 'five')")
    return {"name": name, "path": path, "instants": instants, "database": database}


def _rows(df):
    return hudi_rs.df_rows(df)


def test_every_window_agrees_with_hudi_rs(hoodpy_spark, changes):
    instants, name = changes["instants"], changes["name"]
    windows = [*zip(instants, instants[1:]), (instants[0], instants[-1]), (EARLIEST, instants[-1])]
    for start, end in windows:
        ours = _rows(hoodpy_spark.sql(f"SELECT * FROM hudi_table_changes('{name}', 'latest_state', "
                                      f"'{start}', '{end}')"))
        assert ours == hudi_rs.incremental(changes["path"], start, end), (start, end)
        assert all(start < r[COMMIT_TIME] <= end for r in ours)


def test_the_upsert_window_holds_the_updated_and_new_records(hoodpy_spark, changes):
    first, second = changes["instants"][:2]
    rows = hoodpy_spark.sql(f"SELECT id, name, {COMMIT_TIME} FROM hudi_table_changes('{changes['name']}', "
                            f"'latest_state', '{first}', '{second}') ORDER BY id").collect()
    assert [tuple(r) for r in rows] == [(2, "b2", second), (4, "d", second)]


def test_earliest_and_no_end_read_every_latest_record(hoodpy_spark, changes):
    ours = _rows(hoodpy_spark.sql(f"SELECT * FROM hudi_table_changes('{changes['name']}', 'latest_state', "
                                  "'earliest')"))
    assert ours == hudi_rs.incremental(changes["path"], EARLIEST, changes["instants"][-1])
    assert sorted(r["id"] for r in ours) == [4, 5]  # region eu overwritten by 5, key 3 deleted


def test_no_end_reads_to_the_latest_commit_and_by_path(hoodpy_spark, changes):
    first, last = changes["instants"][0], changes["instants"][-1]
    by_name = _rows(hoodpy_spark.sql(
        f"SELECT * FROM hudi_table_changes('{changes['name']}', 'latest_state', '{first}')"))
    by_path = _rows(hoodpy_spark.sql(
        f"SELECT * FROM hudi_table_changes('{changes['path']}', 'latest_state', '{first}')"))
    assert by_name == by_path == hudi_rs.incremental(changes["path"], first, last)


def test_a_14_digit_start_is_millisecond_000(hoodpy_spark, changes):
    first, last = changes["instants"][0], changes["instants"][-1]
    seconds = first[:14]
    ours = _rows(hoodpy_spark.sql(f"SELECT * FROM hudi_table_changes('{changes['name']}', 'latest_state', "
                                  f"'{seconds}', '{last}')"))
    assert ours == hudi_rs.incremental(changes["path"], seconds + "000", last)


def test_in_a_join_with_where_and_an_aggregate(hoodpy_spark, changes):
    database = changes["database"]
    rows = hoodpy_spark.sql(f"""
        SELECT c.id, n.label, c.name
        FROM hudi_table_changes('{changes['name']}', 'latest_state', 'earliest') AS c
        JOIN {database}.names n ON c.id = n.id
        WHERE c.region = 'us' OR c.id > 4
        ORDER BY c.id""").collect()
    assert [tuple(r) for r in rows] == [(4, "four", "d"), (5, "five", "e")]
    counts = hoodpy_spark.sql(f"""
        SELECT region, count(*) AS n FROM hudi_table_changes('{changes['name']}', 'latest_state',
            '{changes['instants'][0]}', '{changes['instants'][2]}') GROUP BY region ORDER BY region""").collect()
    assert [tuple(r) for r in counts] == [("eu", 1), ("us", 1)]  # 2 updated, 4 inserted; 3's delete has no row


def test_with_a_hoodpy_table_in_the_same_statement(hoodpy_spark, changes):
    """The changes joined with the table's snapshot: the call is replaced, the table still read by hoodpy."""
    name = changes["name"]
    rows = hoodpy_spark.sql(f"""
        SELECT s.id, s.name FROM {name} s
        JOIN hudi_table_changes('{name}', 'latest_state', '{changes['instants'][-2]}') c ON s.id = c.id""").collect()
    assert [tuple(r) for r in rows] == [(5, "e")]


def test_in_a_temporary_view_a_ctas_and_explain(hoodpy_spark, changes):
    """The call's view outlives the statement, so a temporary view over it keeps reading that window."""
    name, database, last = changes["name"], changes["database"], changes["instants"][-2]
    call = f"hudi_table_changes('{name}', 'latest_state', '{last}')"
    hoodpy_spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW recent_changes AS SELECT id, name FROM {call}")
    assert [tuple(r) for r in hoodpy_spark.sql("SELECT * FROM recent_changes").collect()] == [(5, "e")]
    hoodpy_spark.sql(f"CREATE TABLE {database}.copied USING parquet AS SELECT id, {COMMIT_TIME} FROM {call}")
    assert [tuple(r) for r in hoodpy_spark.sql(f"SELECT * FROM {database}.copied").collect()] == \
        [(5, changes["instants"][-1])]
    plan = hoodpy_spark.sql(f"EXPLAIN SELECT * FROM {call}").collect()[0][0]
    assert "Physical Plan" in plan and "hudi_table_changes" not in plan


def test_a_timestamp_start_is_read_in_the_session_time_zone(hoodpy_spark, changes):
    zone = hoodpy_spark.conf.get("spark.sql.session.timeZone")
    hoodpy_spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        first = changes["instants"][0]
        text = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:]}"
        ours = _rows(hoodpy_spark.sql(
            f"SELECT * FROM hudi_table_changes('{changes['name']}', 'latest_state', '{text}')"))
    finally:
        hoodpy_spark.conf.set("spark.sql.session.timeZone", zone)
    assert ours == hudi_rs.incremental(changes["path"], first, changes["instants"][-1])


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ("'{db}.no_such', 'latest_state', 'earliest'", UnknownTableError, "no_such"),
    ("'{name}', 'cdc', 'earliest'", InvalidConfigError, "isn't a CDC hudi table.*hoodie.table.cdc.enabled"),
    ("'{name}', 'snapshot', 'earliest'", InvalidStatementError, "'snapshot'"),
    ("'{name}', 'latest_state', '2024-13'", InvalidInstantError, "'2024-13'"),
    ("'{name}', 'latest_state', 'earliest', 'earliest'", InvalidInstantError, "end instant 'earliest'"),
    ("'{name}', 'latest_state'", InvalidStatementError, "3 or 4"),
])
def test_errors_name_the_problem(hoodpy_spark, changes, arguments, error, message):
    arguments = arguments.format(db=changes["database"], name=changes["name"])
    with pytest.raises(error, match=message):
        hoodpy_spark.sql(f"SELECT * FROM hudi_table_changes({arguments})")


@pytest.fixture
def session_confs(hoodpy_spark):
    """Sets session confs for one test and unsets them afterwards."""
    keys = []

    def set_conf(key: str, value: str) -> None:
        keys.append(key)
        hoodpy_spark.sql(f"SET {key}={value}")

    yield set_conf
    for key in keys:
        hoodpy_spark.conf.unset(key)


def test_incremental_read_options_set_in_the_session(hoodpy_spark, changes, session_confs):
    """Hudi's data source takes the session's hoodie.* confs as read options: SELECTs and spark.table of a
    hoodpy table become incremental queries."""
    first, second, third = changes["instants"][:3]
    session_confs("hoodie.datasource.query.type", "incremental")
    session_confs("hoodie.datasource.read.begin.instanttime", first)
    session_confs("hoodie.datasource.read.end.instanttime", third)
    expected = hudi_rs.incremental(changes["path"], first, third)
    assert sorted(r["id"] for r in expected) == [2, 4]
    assert _rows(hoodpy_spark.sql(f"SELECT * FROM {changes['name']}")) == expected
    assert _rows(hoodpy_spark.table(changes["name"])) == expected
    rows = hoodpy_spark.sql(f"SELECT id FROM {changes['name']} WHERE region = 'us'").collect()
    assert [r.id for r in rows] == [4]
    hoodpy_spark.conf.unset("hoodie.datasource.read.end.instanttime")
    session_confs("hoodie.datasource.read.begin.instanttime", "000")
    assert _rows(hoodpy_spark.sql(f"SELECT * FROM {changes['name']}")) == hudi_rs.incremental(
        changes["path"], EARLIEST, changes["instants"][-1])


def test_incremental_read_options_errors_name_the_key(hoodpy_spark, changes, session_confs):
    session_confs("hoodie.datasource.query.type", "incremental")
    with pytest.raises(InvalidConfigError, match="hoodie.datasource.read.begin.instanttime"):
        hoodpy_spark.sql(f"SELECT * FROM {changes['name']}")
    session_confs("hoodie.datasource.read.begin.instanttime", "yesterday")
    with pytest.raises(InvalidConfigError, match="yesterday"):
        hoodpy_spark.sql(f"SELECT * FROM {changes['name']}")


def test_change_views_live_as_long_as_their_statement_or_temporary_view(hoodpy_spark, changes):
    """The views a call registers do not pile up: a statement's go when it ends (its DataFrame still reads
    them), a temporary view's go when it is dropped or redefined."""
    name, first = changes["name"], changes["instants"][0]
    call = f"hudi_table_changes('{name}', 'latest_state', '{first}')"

    def change_views() -> set[str]:
        return {t.name for t in hoodpy_spark.catalog.listTables() if t.name.startswith("__hoodpy_changes_")}

    before = change_views()
    df = hoodpy_spark.sql(f"SELECT id FROM {call} WHERE id > 3")
    hoodpy_spark.sql(f"SELECT count(*) FROM {call} c JOIN {call} d ON c.id = d.id").collect()
    assert change_views() == before
    assert sorted(r.id for r in df.collect()) == [4, 5]
    hoodpy_spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW held_changes AS SELECT id FROM {call}")
    held = change_views() - before
    assert len(held) == 1
    assert sorted(r.id for r in hoodpy_spark.sql("SELECT * FROM held_changes").collect()) == [4, 5]
    hoodpy_spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW held_changes AS SELECT id FROM {call} WHERE id = 5")
    assert len(change_views() - before) == 1 and not held & change_views()
    hoodpy_spark.sql("DROP VIEW held_changes")
    assert change_views() == before

"""integration_project/ end to end through dbt's Python API, on the pytest session's SparkSession.

Batch 1 is landed and built, then batch 2; after each build the three hoodpy tables must hold exactly the
rows computed in plain Python from the generated batches (integration_project/scripts/expected_state.py:
the latest event_ts per key wins, deletes remove). After both builds the rides timeline shows the inline
z-order clustering (replacecommit) and the cleaner's clean instants, and hudi-rs reads the same rows.
"""

from __future__ import annotations

import textwrap
from decimal import Decimal

import pytest

from integration_project import run_demo
from integration_project.scripts import generate_batches as gen
from integration_project.scripts.land_batch import land
from tests.compat import hudi_rs

pytestmark = [pytest.mark.dbt, pytest.mark.spark]

SCHEMA = "rideshare"
KEYS = {"rides": "ride_id", "driver_assignments": "assignment_id", "ride_matches": "ride_id"}


def _profiles(directory) -> None:
    directory.mkdir()
    (directory / "profiles.yml").write_text(textwrap.dedent(f"""\
        rideshare:
          target: test
          outputs:
            test:
              type: hoodpy
              schema: {SCHEMA}
              threads: 1
        """))


@pytest.fixture(scope="module")
def project(spark, tmp_path_factory):
    """Both batches built; per batch id, the tables' rows right after that batch's build."""
    from dbt.cli.main import dbtRunner

    tmp = tmp_path_factory.mktemp("integration_project")
    batches = gen.generate()
    gen.write(batches, tmp / "data")
    _profiles(tmp / "profiles")
    runner = dbtRunner()

    def dbt(command: str, *args: str):
        return runner.invoke(run_demo.dbt_args(
            command, landing=tmp / "landing", profiles=tmp / "profiles",
            extra=["--target-path", str(tmp / "target"), "--log-path", str(tmp / "logs"), *args]))

    built = {}
    for batch in batches:
        land(batch.batch_id, tmp / "data", tmp / "landing")
        result = dbt("build")
        failed = [f"{r.node.name}: {r.status} {r.message}" for r in (result.result or [])
                  if str(r.status) not in ("success", "pass")]
        assert result.success, f"dbt build of batch {batch.batch_id} failed: {result.exception} {failed}"
        built[batch.batch_id] = {
            "statuses": {r.node.name: str(r.status) for r in result.result},
            "tables": {m: run_demo.table_rows(spark, m, run_demo.EXPECTED_COLUMNS[m], SCHEMA)
                       for m in run_demo.MODELS},
        }
    return batches, built, dbt


def test_each_build_leaves_exactly_the_expected_rows(project):
    batches, built, _ = project
    for batch_id, state in built.items():
        expected = run_demo.expected_tables(batches[:batch_id])
        for model in run_demo.MODELS:
            assert state["tables"][model] == expected[model], f"{model} after batch {batch_id}"
    # The second batch changed things: updates, deletes and new rides all show.
    rides1 = {r["ride_id"]: r for r in built[1]["tables"]["rides"]}
    rides2 = {r["ride_id"]: r for r in built[2]["tables"]["rides"]}
    assert set(rides1) - set(rides2), "some batch-1 ride was deleted by batch 2"
    assert set(rides2) - set(rides1), "batch 2 added rides"
    assert any(rides2[k]["status"] != rides1[k]["status"] for k in set(rides1) & set(rides2))


def test_late_events_lost_to_stored_rows(project):
    """The batch-2 events older than what batch 1 stored (stale fares, stale drivers) did not win."""
    batches, built, _ = project
    stale_rides = {e["ride_id"] for e in batches[1].ride_events if e["fare"] == "1.00"}
    stale_assignments = {e["assignment_id"] for e in batches[1].assignment_events
                         if e["driver_id"].startswith("D-stale-")}
    assert stale_rides and stale_assignments
    rides = {r["ride_id"]: r for r in built[2]["tables"]["rides"]}
    assignments = {a["assignment_id"]: a for a in built[2]["tables"]["driver_assignments"]}
    assert all(rides[k]["fare"] != Decimal("1.00") for k in stale_rides if k in rides)
    assert all(not assignments[k]["driver_id"].startswith("D-stale-") for k in stale_assignments
               if k in assignments)


def test_every_dbt_test_ran_and_passed(project):
    _, built, _ = project
    for state in built.values():
        statuses = state["statuses"]
        assert statuses["assert_rides_hold_latest_event"] == "pass"
        assert statuses["assert_assignments_hold_latest_event"] == "pass"
        assert any(name.startswith("relationships_driver_assignments") for name in statuses)
        assert all(s in ("success", "pass") for s in statuses.values()), statuses


def test_timeline_shows_clustering_and_cleaning(spark, project):
    rides = run_demo.timeline_actions(spark, "rides", SCHEMA)
    completed = [action for action, state in rides if state == "completed"]
    assert completed.count("commit") >= 2
    assert "replacecommit" in completed, rides
    assert "clean" in completed, rides
    assignments = [a for a, s in run_demo.timeline_actions(spark, "driver_assignments", SCHEMA) if s == "completed"]
    assert "clean" in assignments
    # show_commits lists the clustering's replacecommit next to the two upserts.
    actions = [r["action"] for r in spark.sql(f"CALL show_commits(table => '{SCHEMA}.rides')").collect()]
    assert actions.count("commit") >= 2 and "replacecommit" in actions


def test_hudi_rs_reads_the_same_rows(spark, project):
    from sql_ext import table_for_name

    batches, built, _ = project
    for model in run_demo.MODELS:
        path = table_for_name(spark, f"{SCHEMA}.{model}").base_path
        columns = run_demo.EXPECTED_COLUMNS[model]
        rows = sorted(hudi_rs.project(hudi_rs.snapshot(path), columns), key=lambda r: r[columns[0]])
        assert rows == hudi_rs.normalize(built[2]["tables"][model]), model


def test_show_table_history_operation_prints_commits_through_run_query(project, capfd):
    """The project's run-operation runs CALL show_commits through run_query and prints each commit."""
    _, _, dbt = project
    capfd.readouterr()
    result = dbt("run-operation", "show_table_history", "--args", "{models: [rides], limit: 3}")
    assert result.success, result.exception
    out = capfd.readouterr().out
    assert f"{SCHEMA}.rides: 109 rows" in out.replace("`", "")
    # One line per commit, as the macro formats it (dbt's print; agate's table printer bypassed the capture).
    assert "replacecommit  records written" in out and ", files updated " in out

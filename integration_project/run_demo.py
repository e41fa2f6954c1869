"""The integration project end to end: generate the change streams, then for each batch land it and
`dbt build`; finally print the tables, their timelines, and whether they hold exactly the expected rows.

Every run starts from a clean slate (the project's .hoodpy/ warehouse and metastore, data/, landing/ and
target/ are deleted first), so running it twice in a row gives the same tables and the same output apart
from instant times. dbt runs in this process (dbt's Python API), so both builds and the report share one
Spark JVM instead of starting three.

Usage (from the repository root): ``.venv/bin/python integration_project/run_demo.py [--batches N]``.
The same steps by hand, from integration_project/:

    python scripts/generate_batches.py
    python scripts/land_batch.py 1 && dbt build --profiles-dir .
    python scripts/land_batch.py 2 && dbt build --profiles-dir .
    dbt run-operation show_table_history --profiles-dir .
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent
REPO = PROJECT.parent
DATA = PROJECT / "data" / "batches"
LANDING = PROJECT / "landing"
# What a run creates; deleted first so every run starts clean (see README: "Running it twice").
GENERATED = (PROJECT / ".hoodpy", PROJECT / "data", LANDING, PROJECT / "target", PROJECT / "logs")
MODELS = ("rides", "driver_assignments", "ride_matches", "daily_city_summary")
# The rows a model's expected rows describe: rides and assignments keep deleted keys as flagged rows,
# ride_matches keeps a row per ride either side mentioned.
LIVE = {"rides": "not is_deleted", "driver_assignments": "not is_deleted", "ride_matches": "is_matched"}
# "read 12 records of rideshare.rides (20260105..., 20260105...]" in a model's run message (dbt/adapters/hoodpy)
READ = re.compile(r"(\d+) records of (\S+) (as of \d+|\(\d+, \d+\]|\(no commit yet\))")
SCHEMA = "rideshare"

sys.path.insert(0, str(REPO))

from integration_project.scripts import expected_state as es  # noqa: E402
from integration_project.scripts import generate_batches as gen  # noqa: E402
from integration_project.scripts.land_batch import land  # noqa: E402


def dbt_args(command: str, *, landing: Path = LANDING, project: Path = PROJECT, profiles: Path = PROJECT,
             extra: list[str] | None = None, raw_schema: str | None = None) -> list[str]:
    """Arguments of one dbt command on this project (shared with tests/dbt/test_integration_project.py)."""
    variables = {"landing_dir": str(landing), **({"raw_schema": raw_schema} if raw_schema else {})}
    return [command, "--project-dir", str(project), "--profiles-dir", str(profiles),
            "--vars", json.dumps(variables), *(extra or [])]


def expected_tables(batches: list[gen.Batch]) -> dict[str, list[dict]]:
    return {"rides": es.expected_rides(batches), "driver_assignments": es.expected_assignments(batches),
            "ride_matches": es.expected_matches(batches), "daily_city_summary": es.expected_summary(batches)}


def table_rows(spark, model: str, columns: tuple[str, ...], schema: str = SCHEMA) -> list[dict]:
    """The model's live rows (the given columns), sorted like the expected rows (by their key columns)."""
    where = f" where {LIVE[model]}" if model in LIVE else ""
    rows = spark.sql(f"select {', '.join(columns)} from {schema}.{model}{where}").toArrow().to_pylist()
    return sorted(rows, key=lambda r: (r[columns[0]], r[columns[1]]))


def changes_read(results) -> list[tuple[str, int, str, str]]:
    """(model, records read, upstream, window) for each change read in a dbt run's results."""
    out = []
    for r in results or []:
        for count, upstream, window in READ.findall(getattr(r, "message", None) or ""):
            out.append((r.node.name, int(count), upstream, window))
    return out


EXPECTED_COLUMNS = {"rides": es.RIDE_COLUMNS, "driver_assignments": es.ASSIGNMENT_COLUMNS,
                    "ride_matches": es.MATCH_COLUMNS, "daily_city_summary": es.SUMMARY_COLUMNS}


def report(spark, batches: list[gen.Batch]) -> bool:
    """Print the final tables and timelines; True when every table holds exactly the expected rows."""
    from sql_ext.procedures import procedure_names

    expected = expected_tables(batches)
    ok = True
    for model in MODELS:
        rows = table_rows(spark, model, EXPECTED_COLUMNS[model])
        match = rows == expected[model]
        ok &= match
        print(f"\n=== {SCHEMA}.{model}: {len(rows)} rows; the expected rows computed in Python from the "
              f"batches: {'identical' if match else 'DIFFERENT'} ===")
        if not match:
            missing = [r for r in expected[model] if r not in rows]
            unexpected = [r for r in rows if r not in expected[model]]
            print(f"  missing {len(missing)}: {missing[:3]}\n  unexpected {len(unexpected)}: {unexpected[:3]}")
        where = f" where {LIVE[model]}" if model in LIVE else ""
        spark.sql(f"select {', '.join(EXPECTED_COLUMNS[model])} from {SCHEMA}.{model}{where} order by 1, 2") \
            .show(5, truncate=False)

    late = es.late_ride_events(batches)
    if late:
        stored = {r["ride_id"]: r for r in table_rows(spark, "rides", EXPECTED_COLUMNS["rides"])}
        print(f"\n=== Late ride events in batch {batches[-1].batch_id} (older than what was already stored): "
              f"{len(late)}; none of them won ===")
        for e in late[:4]:
            now = stored.get(e["ride_id"])
            held = f"{now['status']} (fare {now['fare']}, event_ts {now['event_ts']:%H:%M:%S})" if now else "deleted"
            print(f"  {e['ride_id']}: late event {e['status']} (fare {e['fare']}, event_ts "
                  f"{e['event_ts']:%H:%M:%S}) -> table holds {held}")

    procedures = set(procedure_names())
    for model in ("rides", "driver_assignments"):
        table = f"{SCHEMA}.{model}"
        print(f"\n=== CALL show_commits(table => '{table}') ===")
        spark.sql(f"CALL show_commits(table => '{table}', limit => 20)").show(truncate=False)
        if "show_timeline" in procedures:
            print(f"=== CALL show_timeline(table => '{table}') ===")
            spark.sql(f"CALL show_timeline(table => '{table}')").show(truncate=False)
        if "show_cleans" in procedures:
            print(f"=== CALL show_cleans(table => '{table}') ===")
            spark.sql(f"CALL show_cleans(table => '{table}')").show(truncate=False)
    return ok


def print_reads(reads: list[tuple[str, int, str, str]], batch_id: int) -> None:
    """What each change-fed model read in one build, next to the size of what it read from."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    print(f"\n=== Records each model read from its upstreams' changes (build {batch_id}) ===")
    for model, count, upstream, window in reads:
        total = spark.sql(f"select count(*) from {upstream}").collect()[0][0]
        kind = "all of it (first build)" if window.startswith("as of") else "committed since its last build"
        print(f"  {model:<20} {count:>4} records of {upstream} {window}: {kind}; the table holds {total} rows")


def timeline_actions(spark, model: str, schema: str = SCHEMA) -> list[tuple[str, str]]:
    """(action, state) of every instant on the model's timeline, oldest first."""
    from sql_ext import table_for_name

    timeline = table_for_name(spark, f"{schema}.{model}").timeline
    return [(i.action.value, i.state.value.lower()) for i in timeline.instants]


def hudi_rs_counts(spark, schema: str = SCHEMA) -> dict[str, int] | None:
    """Rows hudi-rs (the Rust Hudi reader) reads from each table, or None without the ``hudi`` package."""
    try:
        import pyarrow as pa
        from hudi import HudiTableBuilder
    except ImportError:
        return None
    from sql_ext import table_for_name

    counts = {}
    for model in MODELS:
        path = table_for_name(spark, f"{schema}.{model}").base_path
        batches = HudiTableBuilder.from_base_uri(path).build().read()
        counts[model] = pa.Table.from_batches(batches).num_rows if batches else 0
    return counts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batches", type=int, default=gen.DEFAULT_BATCHES)
    p.add_argument("--seed", type=int, default=gen.DEFAULT_SEED)
    args = p.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    for path in GENERATED:
        shutil.rmtree(path, ignore_errors=True)
    batches = gen.generate(args.seed, args.batches)
    gen.write(batches, DATA)
    counts = es.summary(batches)
    print(f"Generated {len(batches)} batches under {DATA.relative_to(REPO)}: {counts['ride_events']} ride "
          f"events, {counts['assignment_events']} assignment events, including {counts['duplicates']} "
          f"duplicates, {counts['late_events']} late events and {counts['deletes']} deletes")

    from dbt.cli.main import dbtRunner

    runner = dbtRunner()
    for batch in batches:
        landed = land(batch.batch_id, DATA, LANDING)
        print(f"\n##### batch {batch.batch_id}: landed {', '.join(str(f.relative_to(PROJECT)) for f in landed)}; "
              "dbt build #####", flush=True)
        started = time.monotonic()
        result = runner.invoke(dbt_args("build"))
        if not result.success:
            print(f"dbt build failed on batch {batch.batch_id}: {result.exception or 'see the log above'}")
            return 1
        print(f"dbt build of batch {batch.batch_id}: {time.monotonic() - started:.0f} s", flush=True)
        print_reads(changes_read(result.result), batch.batch_id)

    from pyspark.sql import SparkSession

    from sql_ext import enable

    spark = enable(SparkSession.builder.getOrCreate())  # the session dbt used (same process)
    ok = report(spark, batches)
    print("\n=== Summary ===")
    for model in ("rides", "driver_assignments"):
        actions = timeline_actions(spark, model)
        completed = [a for a, state in actions if state == "completed"]
        print(f"{model}: timeline {', '.join(completed)}")
    rs = hudi_rs_counts(spark)
    if rs is not None:
        print("hudi-rs reads: " + ", ".join(f"{m} {n} rows" for m, n in rs.items()))
    print("Tables match the expected rows: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

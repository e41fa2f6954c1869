"""What ``hoodpy ... --json`` must print for a table: the rows of the SQL procedure it stands for (run through
``sql_ext.enable(spark)``), value for value. Shared by the hoodpy-table and the Java-sample tests."""

from __future__ import annotations

import json

from hoodpy.cli import main


def cli_rows(capsys, argv: list[str]) -> list[tuple] | dict[str, list[tuple]]:
    """The command's JSON rows as tuples (in column order), by key when it prints several results."""
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    if isinstance(printed, dict):
        return {k: [tuple(r.values()) for r in rows] for k, rows in printed.items()}
    return [tuple(r.values()) for r in printed]


def call_rows(spark, statement: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(statement).collect()]


def pairs(path: str, instant: str | None) -> list[tuple[list[str], str | dict[str, str]]]:
    """(command line, CALL statement(s)) that must print the same rows; ``instant``: a completed commit."""
    p = f"path => '{path}'"
    out = [
        (["commits", path], f"CALL show_commits({p})"),
        (["commits", path, "--limit", "1000"], f"CALL show_commits({p}, limit => 1000)"),
        (["commits", path, "--files", "--limit", "1000"], f"CALL show_commits_metadata({p}, limit => 1000)"),
        (["timeline", path], f"CALL show_timeline({p})"),
        (["timeline", path, "--limit", "1000"], f"CALL show_timeline({p}, limit => 1000)"),
        (["files", path, "--limit", "1000"], f"CALL show_fsview_all({p}, limit => 1000)"),
        (["files", path, "--latest", "--limit", "1000"], f"CALL show_fsview_latest({p}, limit => 1000)"),
        (["stats", path, "--limit", "1000"], {"file_sizes": f"CALL stats_file_sizes({p}, limit => 1000)",
                                              "write_amplification": f"CALL stats_wa({p}, limit => 1000)"}),
        (["clustering-plan", path, "--all"], f"CALL show_clustering({p}, show_involved_partition => true)"),
    ]
    if instant:
        out += [
            (["files", path, "--max-instant", instant, "--include-max", "--limit", "1000"],
             f"CALL show_fsview_all({p}, max_instant => '{instant}', include_max => true, limit => 1000)"),
            (["commits", path, "--instant", instant, "--limit", "1000"], {
                "partitions": f"CALL show_commit_partitions({p}, instant_time => '{instant}', limit => 1000)",
                "files": f"CALL show_commit_files({p}, instant_time => '{instant}', limit => 1000)",
                "write_stats": f"CALL show_commit_write_stats({p}, instant_time => '{instant}')"}),
        ]
    return out


def assert_cli_matches_procedures(spark, capsys, path: str, instant: str | None) -> int:
    """Check every pair; returns how many non-empty row lists were compared."""
    compared = 0
    for argv, calls in pairs(path, instant):
        ours = cli_rows(capsys, argv)
        theirs = {k: call_rows(spark, c) for k, c in calls.items()} if isinstance(calls, dict) \
            else call_rows(spark, calls)
        assert ours == theirs, argv
        compared += sum(1 for rows in (theirs.values() if isinstance(theirs, dict) else [theirs]) if rows)
    return compared

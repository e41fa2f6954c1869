"""CALL statements parse to (name, args) and round-trip through format_call (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hoodpy.errors import HoodieError
from sql_ext.call import CallArgument, CallStatement, format_call, parse_call
from hoodpy.errors import CallSyntaxError

FIXTURE = Path(__file__).with_name("call_statements.sql")


def _cases():
    for number, line in enumerate(FIXTURE.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("--"):
            continue
        statement, expected = line.split(" --> ")
        name, args = json.loads(expected)
        yield pytest.param(statement, CallStatement(name, tuple(CallArgument(n, v) for n, v in args)),
                           id=f"line{number}")


@pytest.mark.parametrize(("statement", "expected"), list(_cases()))
def test_call_statement_parses(statement, expected):
    assert parse_call(statement) == expected


@pytest.mark.parametrize(("statement", "expected"), list(_cases()))
def test_call_statement_round_trips(statement, expected):
    assert parse_call(format_call(parse_call(statement))) == expected


def test_value_types_are_python_literals():
    stmt = parse_call("CALL x(1, 2.5, 'three', true, NULL, 20240101000000000)")
    assert [type(a.value) for a in stmt.args] == [int, float, str, bool, type(None), int]


@pytest.mark.parametrize(("statement", "fragment"), [
    ("CALL show_commits(table => )", "Expected a value for argument 'table'"),
    ("CALL (x)", "Expected a procedure name"),
    ("CALL show_commits('a'", "Expecting )"),
    ("CALL show_commits", "Expecting ("),
    ("CALL x(a => 1) extra", "Unexpected token"),
    ("CALL x(a => 1); CALL y()", "exactly one CALL"),
    ("CALL other.x(a => 1)", "unknown namespace"),
    ("CALL x(a => col)", "must be a literal"),
    ("CALL x(a => 1 + 2)", "must be a literal"),
    ("CALL x(a => current_date())", "must be a literal"),
    ("SELECT 1", "exactly one CALL"),
    ("CALL x(a => 'unterminated)", "Malformed CALL"),
])
def test_malformed_calls_raise_call_syntax_error(statement, fragment):
    with pytest.raises(CallSyntaxError) as info:
        parse_call(statement)
    assert fragment in str(info.value)
    assert isinstance(info.value, HoodieError)

"""``CALL`` statements as data: the procedure name and its arguments as Python values (pure).

Example:
    >>> stmt = parse_call("CALL system.show_commits(table => 'db.trips', limit => 5)")
    >>> stmt.name, [(a.name, a.value) for a in stmt.args]
    ('show_commits', [('table', 'db.trips'), ('limit', 5)])
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from sql_ext.catalog import sql_literal
from sql_ext.dialect import DIALECT, Call
from hoodpy.errors import CallSyntaxError

SYSTEM_NAMESPACE = "system"


@dataclass(frozen=True)
class CallArgument:
    """One argument: ``name`` is None for a positional argument."""

    name: str | None
    value: Any


@dataclass(frozen=True)
class CallStatement:
    name: str  # lower case, without the optional ``system.`` prefix
    args: tuple[CallArgument, ...] = ()


def parse_call(text: str) -> CallStatement:
    """Parse one ``CALL`` statement (leading comments and a trailing ``;`` allowed)."""
    try:
        statements = [s for s in DIALECT.parse(text) if s is not None]
    except (ParseError, TokenError) as e:
        raise CallSyntaxError(text, _first_line(e)) from e
    if len(statements) != 1 or not isinstance(statements[0], Call):
        raise CallSyntaxError(text, "expected exactly one CALL statement")
    return call_statement(statements[0], text)


def call_statement(node: Call, text: str = "") -> CallStatement:
    """The :class:`CallStatement` of a parsed :class:`~sql_ext.dialect.Call` node."""
    parts = node.name.split(".")
    if len(parts) == 2 and parts[0].lower() == SYSTEM_NAMESPACE:
        parts = parts[1:]
    if len(parts) != 1:
        raise CallSyntaxError(text or node.sql(), f"procedure name {node.name!r} has an unknown namespace "
                              f"(only {SYSTEM_NAMESPACE}. is allowed)")
    args = []
    for arg in node.expressions:
        if isinstance(arg, exp.Kwarg):
            name = arg.this.name
            args.append(CallArgument(name, literal_value(arg.expression, text, name)))
        else:
            args.append(CallArgument(None, literal_value(arg, text, None)))
    return CallStatement(parts[0].lower(), tuple(args))


class NotALiteral(ValueError):
    """An expression where a constant was required; carries its SQL."""


def constant(node: exp.Expr) -> Any:
    """A constant expression as a Python value (str, int, float, bool or None); :class:`NotALiteral`
    for anything else. Adjacent string literals are joined, as Spark does."""
    if isinstance(node, exp.Paren):
        return constant(node.this)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -_number(node.this.this)
    if isinstance(node, exp.Concat) and all(isinstance(e, exp.Literal) and e.is_string for e in node.expressions):
        return "".join(e.this for e in node.expressions)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    raise NotALiteral(node.sql(dialect=DIALECT))


def literal_value(node: exp.Expr, text: str = "", name: str | None = None) -> Any:
    """A CALL argument's value; :class:`CallSyntaxError` if it is not a literal."""
    try:
        return constant(node)
    except NotALiteral as e:
        what = f"argument {name!r}" if name else "a positional argument"
        raise CallSyntaxError(text or node.sql(), f"{what} must be a literal (string, number, boolean or "
                              f"NULL), got {e}") from None


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        value = Decimal(text)
        return int(value) if value == value.to_integral_value() and "e" not in text.lower() and "." not in text \
            else float(value)


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def format_call(stmt: CallStatement) -> str:
    """Canonical SQL of a CALL statement; ``parse_call(format_call(s)) == s``."""
    args = ", ".join(
        (f"{a.name} => " if a.name is not None else "") + sql_literal(a.value) for a in stmt.args
    )
    return f"CALL {stmt.name}({args})"

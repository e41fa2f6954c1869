"""WHERE -> read filters: the simple conjuncts of a query's WHERE that can prune a hoodpy table's files.

A reference to a hoodpy table in ``SELECT ... FROM t ... WHERE <cond>`` is read with
``HoodieTable.read(filters=...)`` built from the conjuncts of ``<cond>`` that compare one of ``t``'s plain
columns with literals: ``=``, ``!=``/``<>``, ``<``, ``<=``, ``>``, ``>=`` (either side), ``IN (...)``,
``BETWEEN a AND b`` (two filters), ``IS [NOT] NULL``. The filters prune partitions, record-key ranges and
footer column statistics (:mod:`hoodpy.read.query`, :mod:`hoodpy.read.data_skipping`), so fewer files are listed
and read. The statement text is not changed: Spark still applies the whole WHERE on top, so pushdown
only has to be conservative (never drop a row the WHERE keeps). What is not pushed:

* anything under OR / NOT (other than ``NOT x IS NULL``), expressions, functions, casts, subqueries,
  parameter markers, NULL literals;
* a table on the null-supplying side of an outer join (its WHERE conjuncts may test for the join's NULLs),
  i.e. the FROM table of a query with a RIGHT or FULL join, or a LEFT / RIGHT / FULL / SEMI / ANTI joined
  table; and, in a query with joins, columns not qualified with the table's name or alias;
* a literal whose kind differs from the column's type (only integers against integer or floating-point
  columns, decimals and floats against DOUBLE, strings against STRING, booleans against BOOLEAN), nor an
  integer beyond what a FLOAT (2^24) or DOUBLE (2^53) column holds exactly, so Spark's implicit casts
  can never make the filters disagree with the WHERE under either ANSI setting (``id IN (9.0, '20')``
  is true for id 9 with ANSI on, false with it off: such a filter is left to Spark). Pushed literals are
  then bound to the column's type (:func:`hoodpy.read.filters.bind_filters`) for pruning.

Example:
    >>> tree = DIALECT.parse("SELECT * FROM t WHERE city = 'sf' AND fare BETWEEN 1 AND 5")[0]
    >>> candidate_filters(next(tree.find_all(exp.Table)))
    [('city', '=', 'sf'), ('fare', '>=', 1), ('fare', '<=', 5)]
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    FloatType,
    IntegralType,
    StringType,
    StructType,
)
from sqlglot import exp

from hoodpy.read.query import Filter
from sql_ext.call import NotALiteral, constant
from sql_ext.catalog import TableName, qualifies_column
from sql_ext.dialect import DIALECT

_COMPARISONS = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NULLABLE_SIDES = {"LEFT", "RIGHT", "FULL"}
_FILTERING_KINDS = {"SEMI", "ANTI"}
# Integers a FLOAT / DOUBLE holds exactly: beyond them non-ANSI Spark rounds an integer literal to the
# column's type and ANSI compares both as DOUBLE, so the two settings can return different rows.
_FLOAT_EXACT = 1 << 24
_DOUBLE_EXACT = 1 << 53


def _select_of(node: exp.Table) -> tuple[exp.Select, exp.Join | None] | None:
    """The SELECT that reads ``node`` directly (in FROM or a JOIN), and the join, if any."""
    parent = node.parent
    if isinstance(parent, exp.From) and isinstance(parent.parent, exp.Select) and node.arg_key == "this":
        return parent.parent, None
    if isinstance(parent, exp.Join) and isinstance(parent.parent, exp.Select) and node.arg_key == "this":
        return parent.parent, parent
    return None


def _join_keeps_filters(select: exp.Select, join: exp.Join | None) -> bool:
    joins = select.args.get("joins") or []
    if join is None:  # the FROM table: only the null-supplying side of RIGHT / FULL joins is unsafe
        return not any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins)
    return (join.side or "").upper() not in _NULLABLE_SIDES and (join.kind or "").upper() not in _FILTERING_KINDS


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _literal(node: exp.Expr) -> Any:
    """A non-NULL literal's Python value, or raise NotALiteral."""
    if isinstance(node, exp.Literal) and not node.is_string and ("." in node.this or "e" in node.this.lower()):
        value = float(node.this)  # Spark reads 1.5 as a decimal, 1e3 as a double: both compare as numbers
    else:
        value = constant(node)
    if value is None:
        raise NotALiteral("NULL")
    return value


def candidate_filters(node: exp.Table, name: TableName | None = None) -> list[Filter]:
    """Filters (column names as written) from the WHERE of the query that reads ``node``; [] if none.
    ``name``: the catalog table ``node`` resolves to, so that ``db.t.col`` counts as its column when
    ``node`` has no alias (Spark resolves it then)."""
    found = _select_of(node)
    if found is None:
        return []
    select, join = found
    where = select.args.get("where")
    if where is None or not _join_keeps_filters(select, join):
        return []
    names = {node.name.lower()} if not node.alias else {node.alias.lower()}
    single_source = not select.args.get("joins")

    def own_column(e: exp.Expr) -> str | None:
        if not isinstance(e, exp.Column) or not isinstance(e.this, exp.Identifier):
            return None
        if e.args.get("db"):
            return e.name if name is not None and not node.alias and qualifies_column(e, name) else None
        qualifier = e.table
        if qualifier:
            return e.name if qualifier.lower() in names else None
        return e.name if single_source else None

    out: list[Filter] = []
    for c in _conjuncts(where.this):
        try:
            out.extend(_filters_of(c, own_column))
        except NotALiteral:
            continue
    return out


def _filters_of(c: exp.Expr, own_column) -> list[Filter]:
    for kind, op in _COMPARISONS.items():
        if type(c) is kind:
            left, right = own_column(c.this), own_column(c.expression)
            if left is not None and right is None:
                return [(left, op, _literal(c.expression))]
            if right is not None and left is None:
                return [(right, _FLIPPED[op], _literal(c.this))]
            return []
    if isinstance(c, exp.In):
        column = own_column(c.this)
        if column is None or c.args.get("query") is not None or c.args.get("unnest") is not None \
                or not c.expressions:
            return []
        return [(column, "in", [_literal(v) for v in c.expressions])]
    if isinstance(c, exp.Between):
        column = own_column(c.this)
        if column is None or c.args.get("symmetric"):
            return []
        return [(column, ">=", _literal(c.args["low"])), (column, "<=", _literal(c.args["high"]))]
    if isinstance(c, exp.Is) and isinstance(c.expression, exp.Null):
        column = own_column(c.this)
        return [(column, "is null", None)] if column is not None else []
    if isinstance(c, exp.Not) and isinstance(c.this, exp.Is) and isinstance(c.this.expression, exp.Null):
        column = own_column(c.this.this)
        return [(column, "is not null", None)] if column is not None else []
    return []


def _fits(value: Any, data_type) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_fits(v, data_type) for v in value)
    if isinstance(value, bool):
        return isinstance(data_type, BooleanType)
    if isinstance(value, int):  # against FLOAT / DOUBLE only where ANSI (DOUBLE) and non-ANSI casts agree
        if isinstance(data_type, FloatType):
            return abs(value) <= _FLOAT_EXACT
        return isinstance(data_type, IntegralType) or (isinstance(data_type, DoubleType) and
                                                       abs(value) <= _DOUBLE_EXACT)
    if isinstance(value, float):
        return isinstance(data_type, DoubleType)
    if isinstance(value, str):
        return isinstance(data_type, StringType)
    return False


def typed_filters(candidates: list[Filter], schema: StructType) -> list[Filter]:
    """The candidates whose column is a top-level column of ``schema`` (matched case-insensitively, renamed
    to the schema's spelling) and whose literal kind fits its type (see the module docstring)."""
    fields = {f.name.lower(): f for f in schema.fields}
    out = []
    for name, op, value in candidates:
        field = fields.get(name.lower())
        if field is None:
            continue
        if op in ("is null", "is not null") or _fits(value, field.dataType):
            out.append((field.name, op, value))
    return out


def condition_filters(condition: str, schema: StructType) -> list[Filter]:
    """The filters a DataFrame's SQL condition (``df.where("city = 'sf'")``) pushes, as the same condition in
    the WHERE of a query on a table with ``schema`` would; [] when it does not parse as one condition."""
    try:
        statements = [s for s in DIALECT.parse(f"SELECT * FROM __hoodpy_frame WHERE {condition}") if s is not None]
    except Exception:  # noqa: BLE001 -- not SQL sqlglot reads: Spark decides what it means, nothing is pushed
        return []
    if len(statements) != 1:
        return []
    node = next(statements[0].find_all(exp.Table), None)
    return typed_filters(candidate_filters(node), schema) if node is not None else []

"""Persistent views over hoodpy tables, expanded at query time.

``CREATE VIEW v AS SELECT ... FROM db.h`` (``h`` a hoodpy table) is stored by Spark as is: a normal
catalog view whose text names the hoodpy table. Spark itself cannot read it (the table's LOCATION is the
placeholder file), so a statement that goes through the layer and reads such a view gets the view's stored
text spliced in as a subquery with the view's name as alias; the layer's read rewrite then replaces the
hoodpy references inside it by the table's *current* snapshot, as for any query. Views over views are
expanded until no view over hoodpy tables is left. A view is expanded only if its body (recursively) reads
a hoodpy table: views over other tables reach Spark untouched, byte for byte.

What the splice keeps of Spark's view semantics: unqualified names in the body resolve in the view's
stored namespace (they are qualified while splicing) and the output columns take the view's names (the
view's ``(a, b)`` column list included). Not kept: Spark's schema-binding casts (columns come out with the
types the body yields now) and SQL confs captured at CREATE VIEW.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from sqlglot import exp

from hoodpy.errors import UnsupportedStatementError
from sql_ext.catalog import SESSION_CATALOG, TableName, ViewDefinition, quote_identifier
from sql_ext.dialect import DIALECT
from sql_ext.rewrite import name_span, relation_tables

if TYPE_CHECKING:
    from sql_ext.catalog import SparkCatalog

# Spark itself refuses deeper view nesting (spark.sql.view.maxNestedViewDepth, 100); a cycle cannot be
# created through CREATE VIEW, but a replaced view could form one.
MAX_DEPTH = 100
_ALIAS = "__hoodpy_view"


def _parse(text: str) -> exp.Expr | None:
    try:
        statements = [s for s in DIALECT.parse(text) if s is not None]
    except Exception:  # noqa: BLE001 -- not parsable: left to Spark
        return None
    return statements[0] if len(statements) == 1 else None


class ViewExpander:
    """Finds the views over hoodpy tables that a statement reads and splices their bodies in."""

    def __init__(self, catalog: SparkCatalog):
        self.catalog = catalog
        self._reads_hoodpy: dict[TableName, tuple[float, int, bool]] = {}

    # -- which views -----------------------------------------------------------------------------------
    def view_over_hoodpy(self, name: TableName) -> ViewDefinition | None:
        """The view called ``name`` if it (recursively) reads a hoodpy table; None otherwise."""
        view = self.catalog.view(name)
        return view if view is not None and self._reads(view, ()) else None

    def _reads(self, view: ViewDefinition, seen: tuple[TableName, ...]) -> bool:
        now = time.monotonic()
        hit = self._reads_hoodpy.get(view.name)
        if hit is not None and hit[0] > now and hit[1] == self.catalog.generation:
            return hit[2]
        if view.name in seen or len(seen) >= MAX_DEPTH:
            return False  # Spark reports the cycle / depth when it resolves the view
        body = _parse(view.text)
        found = False
        for node in relation_tables(body) if body is not None else ():
            name = self._name_in(view, node)
            if name is None:
                continue
            if self.catalog.lookup_qualified(name) is not None:
                found = True
                break
            inner = self.catalog.view(name)
            if inner is not None and self._reads(inner, (*seen, view.name)):
                found = True
                break
        self._reads_hoodpy[view.name] = (now + self.catalog.ttl, self.catalog.generation, found)
        return found

    @staticmethod
    def _name_in(view: ViewDefinition, node: exp.Table) -> TableName | None:
        """The catalog name a relation in the view's body refers to (resolved in the view's namespace)."""
        catalog = node.args.get("catalog")
        db = node.args.get("db")
        if catalog is not None and catalog.name.lower() != SESSION_CATALOG:
            return None
        if db is None:
            if view.catalog.lower() != SESSION_CATALOG:
                return None
            return TableName(view.namespace.lower(), node.name.lower())
        return TableName(db.name.lower(), node.name.lower())

    # -- expansion --------------------------------------------------------------------------------------
    def expand(self, tree: exp.Expr, text: str, excluded: Callable[[exp.Expr], Iterable[exp.Expr]],
               ) -> tuple[exp.Expr, str] | None:
        """``(tree, text)`` with every view over hoodpy tables in a read position replaced by its body;
        None when the statement reads none. ``excluded(tree)`` gives the nodes that are not reads (a DML
        target)."""
        changed = False
        for _ in range(MAX_DEPTH):
            targets = self._targets(tree, text, excluded(tree))
            if not targets:
                return (tree, text) if changed else None
            new_text = self._splice(text, targets)
            new_tree = _parse(new_text)
            if new_tree is None:
                raise UnsupportedStatementError(text, "hoodpy could not expand view(s) "
                                                f"{', '.join(str(v.name) for _, v in targets)}")
            tree, text, changed = new_tree, new_text, True
        raise UnsupportedStatementError(text, f"views nested more than {MAX_DEPTH} deep")

    def _targets(self, tree: exp.Expr, text: str, excluded: Iterable[exp.Expr],
                 ) -> list[tuple[exp.Table, ViewDefinition]]:
        out = []
        for node in relation_tables(tree, [e for e in excluded if e is not None]):
            if self.catalog.lookup(node) is not None:
                continue  # a hoodpy table: the read rewrite's
            name = self.catalog.qualify(node)
            view = self.view_over_hoodpy(name) if name is not None else None
            if view is None:
                continue
            if node.args.get("version") is not None:
                raise UnsupportedStatementError(
                    text, f"time travel (TIMESTAMP / VERSION AS OF) on view {view.name}: apply it to the "
                    "hoodpy tables the view reads")
            out.append((node, view))
        return out

    def _splice(self, text: str, targets: list[tuple[exp.Table, ViewDefinition]]) -> str:
        spans = []
        for node, view in targets:
            span = name_span(node)
            if span is None:
                raise UnsupportedStatementError(text, f"hoodpy could not locate view {view.name} in the statement")
            alias = "" if node.args.get("alias") is not None else f" AS {quote_identifier(node.name)}"
            spans.append((span, self.subquery(view) + alias))
        spans.sort(key=lambda s: s[0][0])
        out, pos = [], 0
        for (start, end), replacement in spans:
            out.append(text[pos:start])
            out.append(replacement)
            pos = end + 1
        out.append(text[pos:])
        return "".join(out)

    def subquery(self, view: ViewDefinition) -> str:
        """``(SELECT <query column> AS <view column>, ... FROM (<body>) AS __hoodpy_view)``."""
        body = self._qualified_body(view)
        columns, query_columns = view.columns, view.query_columns
        if len(columns) == len(query_columns) and len({c.lower() for c in query_columns}) == len(query_columns):
            select = ", ".join(f"{_alias_ref(q)} AS {quote_identifier(c)}" for q, c in zip(query_columns, columns))
            return f"(SELECT {select} FROM (\n{body}\n) AS {_ALIAS})"
        # Duplicate output names (allowed with a view column list): rename by position.
        names = ", ".join(quote_identifier(c) for c in columns)
        return f"(SELECT * FROM (\n{body}\n) AS {_ALIAS}({names}))"

    @staticmethod
    def _qualified_body(view: ViewDefinition) -> str:
        """The view's text with unqualified relations qualified by the view's namespace (the statement
        that reads the view may run in another database)."""
        text = view.text.strip().rstrip(";")
        tree = _parse(text)
        if tree is None or view.catalog.lower() != SESSION_CATALOG:
            return text
        prefix = quote_identifier(view.namespace) + "."
        starts = sorted(node.this.meta["start"] for node in relation_tables(tree)
                        if node.args.get("db") is None and node.this.meta.get("start") is not None)
        out, pos = [], 0
        for start in starts:
            out.append(text[pos:start])
            out.append(prefix)
            pos = start
        out.append(text[pos:])
        return "".join(out)


def _alias_ref(column: str) -> str:
    return f"{_ALIAS}.{quote_identifier(column)}"

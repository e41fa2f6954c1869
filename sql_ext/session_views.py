"""The lifetime of the temporary views the SQL layer registers for a statement.

The layer registers session temporary views to hand Spark what it computed: one per ``hudi_table_changes``
call (``__hoodpy_changes_<n>``, :mod:`sql_ext.table_changes`) and, for statements that define a session
object, one per hoodpy table read (``__hoodpy_snapshot_<n>``). Without a lifecycle they would pile up, one
set per statement, for the whole session. The rule:

* **Statement-scoped by default.** When the statement has run, its views are dropped. A classic session
  analyzes a query when ``spark.sql`` returns it, so the returned DataFrame keeps reading the rows after
  the views are gone; DDL, DML and CTAS have run by then anyway.
* **Held by the temporary view or cached table the statement defines** (``CREATE [OR REPLACE] TEMPORARY
  VIEW v AS ...``, ``CACHE [LAZY] TABLE v AS ...``): Spark stores such a view as text that names the
  layer's views, so they stay while ``v`` does. They are dropped when ``v`` is dropped through the layer
  (``DROP VIEW v`` / ``DROP TABLE v``) or redefined by a later statement that holds views of its own or
  none (``CREATE OR REPLACE TEMPORARY VIEW v``).
* **Spark Connect queries** keep their views for the session: Connect resolves a query's relations each
  time it runs, after ``spark.sql`` returned, so nothing tells when they are no longer needed. (Connect's
  DDL, DML and CTAS statements are statement-scoped as above.)
* A statement that fails drops the views it made.

A view that ``v`` holds and that ``spark.catalog.dropTempView('v')`` (which bypasses the layer) orphaned
stays until the session ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlglot import exp


@dataclass
class _Statement:
    views: list[str] = field(default_factory=list)
    holder: str | None = None  # the temporary view / cached table the statement defines
    defines: bool = False  # it (re)defines ``holder``: the views ``holder`` held so far go
    lazy: bool = False  # a query on a Spark Connect session: resolved after spark.sql returns


def holder_name(node: exp.Expr | None) -> str | None:
    """A temporary view's name as the key of what it holds: its written parts, lower-cased."""
    if not isinstance(node, exp.Table) or not node.name:
        return None
    return ".".join(p.name.lower() for p in node.parts)


def defined_session_object(tree: exp.Expr) -> exp.Expr | None:
    """The temporary view (``CREATE TEMPORARY VIEW``) or cached table (``CACHE TABLE ... AS``) a statement
    defines, else None."""
    if isinstance(tree, exp.Create) and (tree.args.get("kind") or "").upper() == "VIEW" and any(
            isinstance(p, exp.TemporaryProperty) for p in (tree.args.get("properties") or exp.Properties()).expressions):
        return tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if isinstance(tree, exp.Cache) and tree.expression is not None:
        return tree.this
    return None


class SessionViews:
    """The layer's temporary views of one session: per running statement, and per holding view."""

    def __init__(self, drop_view: Callable[[str], None], connect: bool):
        self._drop_view = drop_view
        self._connect = connect
        self._statements: list[_Statement] = []  # a stack: a statement may run others through the layer
        self._held: dict[str | None, list[str]] = {}  # holder (None: the session) -> views

    @contextmanager
    def statement(self) -> Iterator[None]:
        """One statement's run: its views are settled (dropped or held) when it ends."""
        current = _Statement()
        self._statements.append(current)
        try:
            yield
        except BaseException:
            self._drop(current.views)
            raise
        finally:
            self._statements.pop()
        if current.defines:
            self._drop(self._held.pop(current.holder, []))
        if current.holder is not None and current.views:
            self._held[current.holder] = current.views
        elif current.lazy and current.views:
            self._held.setdefault(None, []).extend(current.views)
        else:
            self._drop(current.views)

    def classify(self, tree: exp.Expr) -> None:
        """Record what the running statement is: whether it defines a session object, or is a query."""
        if not self._statements:
            return
        current = self._statements[-1]
        holder = defined_session_object(tree)
        if holder is not None:
            current.holder, current.defines = holder_name(holder), True
        current.lazy = self._connect and isinstance(tree, exp.Query)

    def add(self, names: Iterable[str]) -> None:
        """Views registered for the running statement (outside any statement: kept for the session)."""
        if self._statements:
            self._statements[-1].views.extend(names)
        else:
            self._held.setdefault(None, []).extend(names)

    def release(self, node: exp.Expr | None) -> None:
        """A temporary view was dropped: the views it held go too."""
        self._drop(self._held.pop(holder_name(node), []) if holder_name(node) is not None else [])

    def held(self) -> dict[str | None, list[str]]:
        """Holder -> the views it keeps (for tests and diagnostics)."""
        return {k: list(v) for k, v in self._held.items()}

    def _drop(self, names: Iterable[str]) -> None:
        for name in names:
            try:
                self._drop_view(name)
            except Exception:  # noqa: BLE001 -- already gone (the user dropped it): nothing to do
                pass

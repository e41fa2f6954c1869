"""``enable(spark)``: hoodpy's SQL layer in front of one session's ``spark.sql``.

How the session is wrapped: ``enable`` rebinds the ``sql`` and ``table`` attributes *of that session
instance* to hoodpy's router and returns the same session object, so both styles work::

    from sql_ext import enable
    spark = enable(spark)            # or just enable(spark); spark.sql(...)

Nothing else changes: the object is still a ``SparkSession`` (isinstance checks, DataFrames'
``df.sparkSession``, ``SparkSession.builder.getOrCreate()`` all return it), and only public Python API is
touched, so the same code serves a classic session and a Spark Connect session. A proxy object was rejected
because libraries (dbt-spark, pyspark.pandas) check ``isinstance(..., SparkSession)`` and DataFrames carry
the real session back. ``enable`` is idempotent; ``disable(spark)`` restores the originals. A session made
later with ``spark.newSession()`` is a different object: enable it too.

Routing, per statement (``spark.sql(text, args)``):

1. A cheap token check picks the statements hoodpy may own (first keyword CALL, SELECT/WITH/FROM/VALUES/
   TABLE/'(', INSERT, CREATE, DROP, TRUNCATE, DELETE, UPDATE, MERGE, CACHE, EXPLAIN, ALTER). Everything else
   (SET, SHOW, DESCRIBE, USE, ...) goes to Spark unchanged without being parsed. Leading comments (dbt's
   ``/* {"app": "dbt", ...} */``) are skipped.
2. The statement is parsed with sqlglot (:mod:`sql_ext.dialect`). If it does not parse, or is several
   statements, it goes to Spark unchanged.
3. ``CALL`` runs a procedure. DDL/DML whose target is a hoodpy table is executed by hoodpy. Other statements
   that read hoodpy tables go to Spark with those references replaced by snapshot DataFrames (only the
   reference spans change). A statement that touches no hoodpy table reaches Spark byte for byte, with the
   caller's ``args`` and keyword arguments. Statements using pyspark's ``{name}`` formatting (keyword
   arguments) always pass through, except ``CALL``, which is rejected.

Persistent views over hoodpy tables are stored with their original text (``CREATE VIEW`` passes through)
and expanded whenever a statement reads them (:mod:`sql_ext.views`), so they always show the tables'
current snapshots. Plain Spark, without the layer, fails to read such a view as it fails to read the table.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from sql_ext import alter, ddl, dml
from sql_ext.call import parse_call
from sql_ext.catalog import HOODPY_PROVIDERS, SparkCatalog, TableName, quote_identifier
from sql_ext.datasource.install import install, uninstall
from sql_ext.dialect import DIALECT
from hoodpy.errors import CallSyntaxError, InvalidStatementError, UnsupportedStatementError
from sql_ext.procedures import get_procedure
from sql_ext.procedures.base import ProcedureContext
from sql_ext.rewrite import ReadRef, ReadResolver, escape_braces, relation_tables, render, splice
from sql_ext.session_views import SessionViews
from sql_ext.table_changes import ChangesRewriter, fallback_option, has_calls, option_window, read_window
from sql_ext.views import ViewExpander

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hoodpy.table import HoodieTable

_LAYER_ATTRIBUTE = "_hoodpy_sql_layer"

# First keywords of statements hoodpy may own; anything else passes through unparsed.
_ROUTED_TOKENS = frozenset({
    TokenType.SELECT, TokenType.WITH, TokenType.FROM, TokenType.VALUES, TokenType.TABLE, TokenType.L_PAREN,
    TokenType.INSERT, TokenType.CREATE, TokenType.REPLACE, TokenType.DROP, TokenType.DELETE, TokenType.UPDATE,
    TokenType.MERGE, TokenType.CACHE,
})
_ROUTED_WORDS = frozenset({"CALL", "TRUNCATE", "EXPLAIN", "ALTER"})
_EXPLAIN_PREFIX = re.compile(r"\s*(?:(?:/\*.*?\*/|--[^\n]*(?:\n|$))\s*)*EXPLAIN\s+"
                             r"(?:(?:EXTENDED|CODEGEN|COST|FORMATTED)\s+)?", re.IGNORECASE | re.DOTALL)
# Statements after which cached catalog lookups may be stale.
_DDL_WORDS = frozenset({"CREATE", "DROP", "ALTER", "REPLACE", "TRUNCATE", "MSCK", "REFRESH"})


def first_word(text: str) -> tuple[TokenType, str] | None:
    """The first token (type, upper-cased text) after comments; None if the text does not tokenize."""
    try:
        tokens = DIALECT.tokenize(text)
    except Exception:  # noqa: BLE001 -- not tokenizable: Spark decides what it is
        return None
    for tok in tokens:
        if tok.token_type != TokenType.SEMICOLON:
            return tok.token_type, tok.text.upper()
    return None


_RELATION_KEYWORDS = frozenset({TokenType.FROM, TokenType.JOIN, TokenType.INTO, TokenType.UPDATE,
                                TokenType.TABLE, TokenType.USING})
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})


def relation_names(text: str) -> list[str]:
    """Dotted names following FROM / JOIN / INTO / UPDATE / TABLE / USING, found by tokens alone."""
    try:
        tokens = DIALECT.tokenize(text)
    except Exception:  # noqa: BLE001
        return []
    names, i = [], 0
    while i < len(tokens):
        if tokens[i].token_type in _RELATION_KEYWORDS:
            parts, j = [], i + 1
            while j < len(tokens) and tokens[j].token_type in _NAME_TOKENS:
                parts.append(quote_identifier(tokens[j].text))
                if j + 1 < len(tokens) and tokens[j + 1].token_type == TokenType.DOT:
                    j += 2
                else:
                    j += 1
                    break
            if parts:
                names.append(".".join(parts))
            i = j
        else:
            i += 1
    return names


@dataclass
class SqlLayer:
    """The router behind an enabled session's ``sql`` and ``table``.

    ``passthrough_sql`` and ``passthrough_table`` are the session's own methods; ``catalog`` defaults to
    the session catalog bridge (tests pass a stub).
    """

    spark: Any
    passthrough_sql: Callable[..., DataFrame]
    passthrough_table: Callable[..., DataFrame]
    catalog: Any = None
    _view_ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _write_options: dict[TableName, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.catalog is None:
            self.catalog = SparkCatalog(self.spark, self.passthrough_sql)
        self.reads = ReadResolver(self.spark, self.catalog, self.timestamp_to_instant)
        self.views = ViewExpander(self.catalog)
        self.changes = ChangesRewriter(self.open_table, self.timestamp_to_instant)
        self.session_views = SessionViews(lambda name: self.spark.catalog.dropTempView(name),
                                          connect=type(self.spark).__module__.startswith("pyspark.sql.connect"))

    # -- entry points ---------------------------------------------------------------------------------
    def sql(self, sqlQuery: str, args: Any = None, **kwargs: Any) -> DataFrame:
        if kwargs:
            head = first_word(sqlQuery)
            if head is not None and head[1] == "CALL":
                raise CallSyntaxError(sqlQuery, "CALL does not take pyspark {name} format arguments")
            return self._pass(sqlQuery, args, **kwargs)
        head = first_word(sqlQuery) if isinstance(sqlQuery, str) else None
        if head is None or not (head[0] in _ROUTED_TOKENS or head[1] in _ROUTED_WORDS):
            return self._pass(sqlQuery, args, invalidate=head is not None and head[1] in _DDL_WORDS)
        if head[1] == "CALL":
            return self.call(sqlQuery, args)
        with self.catalog.statement(), self.session_views.statement():
            return self._routed(sqlQuery, args, head)

    def _routed(self, sqlQuery: str, args: Any, head: tuple[TokenType, str]) -> DataFrame:
        if head[1] == "EXPLAIN":
            return self.explain(sqlQuery, args)
        try:
            statements = [s for s in DIALECT.parse(sqlQuery) if s is not None]
        except Exception as e:  # noqa: BLE001 -- sqlglot not parsing a statement must never break it
            self._refuse_unparsed_hoodpy_statement(sqlQuery, e)
            statements = []
        if head[1] == "ALTER" and len(statements) == 1 and isinstance(statements[0], exp.Command):
            return self._alter_unparsed(sqlQuery, args)
        if len(statements) != 1 or isinstance(statements[0], exp.Command):
            return self._pass(sqlQuery, args, invalidate=head[1] in _DDL_WORDS)
        self.session_views.classify(statements[0])
        tree, sqlQuery = self._with_changes(statements[0], sqlQuery)
        return self.execute(tree, sqlQuery, args)

    def _with_changes(self, tree: exp.Expr, text: str) -> tuple[exp.Expr, str]:
        """``hudi_table_changes(...)`` calls replaced by views of their rows (:mod:`sql_ext.table_changes`),
        the statement parsed again; unchanged without calls."""
        if isinstance(tree, exp.Create) and _is_persistent_view(tree) and has_calls(tree):
            raise UnsupportedStatementError(text, "a persistent view cannot read hudi_table_changes (its rows are a "
                                            "session temporary view): create a TEMPORARY VIEW")
        rewritten = self.changes.rewrite(tree, text)
        if rewritten is None:
            return tree, text
        new_text, views = rewritten
        self.session_views.add(views)
        statements = [s for s in DIALECT.parse(new_text) if s is not None]
        if len(statements) != 1:
            raise UnsupportedStatementError(text, "hoodpy could not rewrite the hudi_table_changes call(s)")
        return statements[0], new_text

    @contextmanager
    def write_options(self, table: str, options: Mapping[str, str]) -> Iterator[None]:
        """Extra write options for every write statements make into ``table`` (a catalog name) while the
        block runs: how the dbt adapter stores a model's checkpoint in the commit of its ``CREATE TABLE ...
        AS SELECT`` (write options under ``hoodie.datasource.write.commitmeta.key.prefix`` land in the
        commit's extraMetadata)."""
        name = self.catalog.qualify(table)
        if name is None or not options:
            yield
            return
        self._write_options[name] = dict(options)
        try:
            yield
        finally:
            self._write_options.pop(name, None)

    def extra_write_options(self, name: TableName) -> dict[str, str] | None:
        """What :meth:`write_options` holds for a table now (None: nothing)."""
        return self._write_options.get(name)

    def open_table(self, name_or_path: str) -> HoodieTable:
        """A hoodpy table by catalog name, or by base path when the argument holds a '/', for an incremental
        read (with the session's and the table's fallback option)."""
        if "/" in name_or_path:
            from hoodpy.table import HoodieTable

            options = fallback_option(self.reads.read_options(None))
            return HoodieTable.for_path(self.spark, name_or_path, options=options)
        entry = self.catalog.require(name_or_path)
        return entry.open(self.spark, fallback_option(self.reads.read_options(entry)))

    def _alter_unparsed(self, text: str, args: Any) -> DataFrame:
        """An ALTER that sqlglot keeps as a command: UNSET TBLPROPERTIES on a hoodpy table, or refused."""
        for name in relation_names(text)[:1]:
            entry = self.catalog.lookup(name)
            if entry is not None:
                try:
                    done = alter.unset_properties(self, entry, text)
                finally:
                    self.catalog.invalidate()
                if done is not None:
                    return done
                raise UnsupportedStatementError(text, f"ALTER TABLE on hoodpy table {entry.name} supports "
                                                f"{alter.SUPPORTED}")
        return self._pass(text, args, invalidate=True)

    def _refuse_unparsed_hoodpy_statement(self, text: str, error: Exception) -> None:
        """A statement sqlglot cannot parse goes to Spark as is, unless it names a hoodpy table (Spark
        would then fail on the placeholder): name the problem instead."""
        for name in relation_names(text):
            entry = self.catalog.lookup(name)
            if entry is not None:
                raise UnsupportedStatementError(
                    text, f"hoodpy could not parse this statement, which uses hoodpy table {entry.name} "
                    f"({str(error).splitlines()[0]})")

    def explain(self, text: str, args: Any = None) -> DataFrame:
        """``EXPLAIN [mode] <query>``: the plan of the query with hoodpy tables read as :meth:`execute` reads
        them (pruned snapshots); anything else, or a query reading no hoodpy table, goes to Spark as is."""
        match = _EXPLAIN_PREFIX.match(text)  # sqlglot tokenizes what follows EXPLAIN as one string
        if match is None or not text[match.end():].strip():
            return self._pass(text, args)
        prefix, inner = text[:match.end()], text[match.end():]
        try:
            statements = [s for s in DIALECT.parse(inner) if s is not None]
        except Exception:  # noqa: BLE001 -- Spark decides what it is
            return self._pass(text, args)
        if len(statements) != 1 or not isinstance(statements[0], exp.Query):
            return self._pass(text, args)
        tree, new_inner = self._with_changes(statements[0], inner)
        if new_inner is not inner:
            statements[0], inner, text = tree, new_inner, prefix + new_inner
        expanded = self.views.expand(statements[0], inner, lambda tree: ())
        if expanded is not None:
            statements[0], inner = expanded
        refs = self.reads.find(statements[0])
        if not refs:
            return self._pass(text, args)
        new_inner = splice(inner, refs, lambda r: "{" + r.key + "}") or render(statements[0])
        return self._pass(escape_braces(prefix) + new_inner, args, **self.reads.frames(refs))

    def read_table(self, name: str, options: Mapping[str, Any]) -> DataFrame | None:
        """``spark.read[.option(...)].table(name)``: a hoodpy table read with its catalog options and the
        reader's (Hudi's read options: incremental window, ``as.of.instant``); None for any other name."""
        entry = self.catalog.lookup(name)
        if entry is None:
            return None
        if not options:
            return self.table(name)
        from sql_ext.datasource.batch_read import load

        return load(self.spark, entry.base_path, {**self.reads.read_options(entry), **options})

    def table(self, tableName: str) -> DataFrame:
        """``spark.table(name)``: a hoodpy table's snapshot, anything else as Spark resolves it."""
        if not isinstance(tableName, str):
            return self.passthrough_table(tableName)
        entry = self.catalog.lookup(tableName)
        if entry is not None:
            options = self.reads.read_options(entry)
            window = option_window(options)
            if window is None:
                return entry.open(self.spark).read()
            return read_window(entry.open(self.spark, fallback_option(options)), options, window)
        name = self.catalog.qualify(tableName)
        if name is not None and self.views.view_over_hoodpy(name) is not None:
            return self.sql(f"SELECT * FROM {name.sql()}")
        return self.passthrough_table(tableName)

    # -- dispatch ---------------------------------------------------------------------------------------
    def _pass(self, text: str, args: Any = None, *, invalidate: bool = False, **kwargs: Any) -> DataFrame:
        try:
            return self.passthrough_sql(text, args, **kwargs) if args is not None else \
                self.passthrough_sql(text, **kwargs)
        finally:
            if invalidate:
                self.catalog.invalidate()

    def call(self, text: str, args: Any = None) -> DataFrame:
        """Run a ``CALL`` statement: a procedure's output rows as a DataFrame."""
        if args:
            raise CallSyntaxError(text, "CALL does not take parameter markers (args)")
        stmt = parse_call(text)
        procedure = get_procedure(stmt.name)
        return procedure().run(ProcedureContext(self.spark, self.catalog), stmt.args)

    def execute(self, tree: exp.Expr, text: str, args: Any) -> DataFrame:
        if _may_read_views(tree):
            expanded = self.views.expand(tree, text, _not_reads)
            if expanded is not None:
                tree, text = expanded
        if isinstance(tree, exp.Create):
            return self._create(tree, text, args)
        if isinstance(tree, exp.Drop):
            return self._drop(tree, text, args)
        if isinstance(tree, exp.TruncateTable):
            targets = [t for t in tree.expressions if isinstance(t, exp.Table)]
            entries = [self.catalog.lookup(t) for t in targets]
            if any(entries):
                if len(targets) != 1:
                    raise UnsupportedStatementError(text, "TRUNCATE of several tables including a hoodpy table")
                return ddl.truncate_table(self, entries[0], tree)
            return self._pass(text, args, invalidate=True)
        if isinstance(tree, (exp.Insert, exp.Delete, exp.Update, exp.Merge)):
            target = dml.target_table(tree)
            entry = self.catalog.lookup(target) if target is not None else None
            if entry is not None:
                return dml.execute(self, tree, entry, text)
            return self.rewrite_reads(tree, text, args, exclude=[target] if target is not None else [])
        if isinstance(tree, exp.Alter):
            target = tree.this if isinstance(tree.this, exp.Table) else None
            entry = self.catalog.lookup(target) if (tree.args.get("kind") or "").upper() == "TABLE" and target \
                else None
            if entry is not None:
                try:
                    return alter.alter_table(self, tree, entry, text)
                finally:
                    self.catalog.invalidate()
            return self._pass(text, args, invalidate=True)
        if isinstance(tree, exp.Cache):
            target = tree.this
            if tree.expression is None and isinstance(target, exp.Table) and self.catalog.lookup(target):
                raise UnsupportedStatementError(
                    text, f"CACHE TABLE on hoodpy table {target.name!r}: use CACHE TABLE <name> AS SELECT ...")
            return self.rewrite_reads(tree, text, args, exclude=[target], session_views=True)
        return self.rewrite_reads(tree, text, args)

    def _create(self, tree: exp.Create, text: str, args: Any) -> DataFrame:
        kind = (tree.args.get("kind") or "").upper()
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        if kind == "TABLE" and ddl.provider(tree) in HOODPY_PROVIDERS:
            return ddl.create_table(self, tree, text)
        if kind == "VIEW":
            temporary = any(isinstance(p, exp.TemporaryProperty)
                            for p in (tree.args.get("properties") or exp.Properties()).expressions)
            if not temporary:
                return self._create_persistent_view(tree, text, args, target)
            refs = self.reads.find(tree, exclude=[target])
            return self._rewritten(tree, text, args, refs, session_views=True, invalidate=True)
        return self.rewrite_reads(tree, text, args, exclude=[target], invalidate=True)

    def _create_persistent_view(self, tree: exp.Create, text: str, args: Any, target: exp.Expr) -> DataFrame:
        """Spark stores the view's text as written; reads through the layer expand it (see
        :mod:`sql_ext.views`), so it shows the hoodpy tables' current snapshots, never pinned files."""
        for node in relation_tables(tree, [target]):
            if node.args.get("version") is not None and self.catalog.lookup(node) is not None:
                raise UnsupportedStatementError(
                    text, f"a persistent view cannot time-travel hoodpy table {node.name!r} (it is expanded at "
                    "query time to the current snapshot): create a TEMPORARY VIEW for a fixed instant")
        return self._pass(text, args, invalidate=True)

    def _drop(self, tree: exp.Drop, text: str, args: Any) -> DataFrame:
        kind = (tree.args.get("kind") or "").upper()
        targets = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        target = targets[0] if len(targets) == 1 else None
        if kind == "TABLE" and isinstance(target, exp.Table):
            entry = self.catalog.lookup(target)
            if entry is not None:
                return ddl.drop_table(self, entry, purge=bool(tree.args.get("purge")))
        dropped = self._pass(text, args, invalidate=True)
        if kind in ("VIEW", "TABLE"):
            self.session_views.release(target)  # a temporary view: the layer's views it held go too
        return dropped

    # -- reads ------------------------------------------------------------------------------------------
    def rewrite_reads(self, tree: exp.Expr, text: str, args: Any, *, exclude: list[exp.Expr] = (),
                      session_views: bool = False, invalidate: bool = False) -> DataFrame:
        refs = self.reads.find(tree, exclude=[e for e in exclude if e is not None])
        return self._rewritten(tree, text, args, refs, session_views=session_views, invalidate=invalidate)

    def _rewritten(self, tree: exp.Expr, text: str, args: Any, refs: list[ReadRef], *,
                   session_views: bool, invalidate: bool = False) -> DataFrame:
        if not refs:
            return self._pass(text, args, invalidate=invalidate)
        frames = self.reads.frames(refs)
        if session_views:
            # Temporary views and cached tables outlive this call: give them views that stay.
            names = {}
            for key, df in frames.items():
                names[key] = f"__hoodpy_snapshot_{next(self._view_ids)}"
                df.createOrReplaceTempView(names[key])
                self.session_views.add([names[key]])
            new_text = splice(text, refs, lambda r: names[r.key], escape=False)
            if new_text is None:
                new_text = render(tree, lambda key: names[key], escape=False)
            return self._pass(new_text, args, invalidate=invalidate)
        new_text = splice(text, refs, lambda r: "{" + r.key + "}")
        if new_text is None:
            new_text = render(tree)
        return self._pass(new_text, args, invalidate=invalidate, **frames)

    def read_sql(self, node: exp.Expr, *, select_from: bool = False) -> DataFrame:
        """A DataFrame for a query (or relation, ``select_from``) sub-tree, hoodpy references resolved."""
        refs = self.reads.find(node)
        frames = self.reads.frames(refs)
        text = render(node, escape=bool(frames))
        if select_from:
            text = f"SELECT * FROM {text}"
        return self.passthrough_sql(text, **frames)

    def timestamp_to_instant(self, text: str) -> str:
        """A timestamp string (session time zone) as a UTC instant time, by Spark's own cast."""
        from datetime import datetime, timezone

        from hoodpy.timeline.instant import instant_time_of

        row = self.passthrough_sql("SELECT unix_micros(CAST(:ts AS TIMESTAMP)) AS us", {"ts": text}).collect()[0]
        if row["us"] is None:
            raise InvalidStatementError(f"TIMESTAMP AS OF {text!r} is neither an instant time nor a timestamp")
        micros = int(row["us"])
        return instant_time_of(datetime.fromtimestamp(micros // 1_000_000, tz=timezone.utc).replace(
            microsecond=micros % 1_000_000))


def _is_persistent_view(tree: exp.Create) -> bool:
    properties = (tree.args.get("properties") or exp.Properties()).expressions
    return (tree.args.get("kind") or "").upper() == "VIEW" and \
        not any(isinstance(p, exp.TemporaryProperty) for p in properties)


def _may_read_views(tree: exp.Expr) -> bool:
    """Whether a statement's relations are reads in which views get expanded: not DDL on the relation
    itself, and not a persistent view's definition (stored as written)."""
    if isinstance(tree, (exp.Drop, exp.TruncateTable, exp.Alter)):
        return False
    return not (isinstance(tree, exp.Create) and _is_persistent_view(tree))


def _not_reads(tree: exp.Expr) -> list[exp.Expr]:
    """The relations of a statement that it writes or defines (never expanded)."""
    if isinstance(tree, exp.Create):
        return [tree.this.this if isinstance(tree.this, exp.Schema) else tree.this]
    if isinstance(tree, (exp.Insert, exp.Delete, exp.Update, exp.Merge)):
        return [dml.target_table(tree)]
    if isinstance(tree, exp.Cache):
        return [tree.this]
    return []


def enable(spark: SparkSession) -> SparkSession:
    """Install hoodpy's SQL layer on ``spark`` (idempotent) and return the same session; with it Spark's
    DataFrame API takes ``format("hoodpy")`` (:mod:`sql_ext.datasource`).

    Example:
        >>> from sql_ext import enable
        >>> spark = enable(spark)
        >>> spark.sql("CREATE TABLE trips (id INT, ts BIGINT) USING hoodpy TBLPROPERTIES (primaryKey = 'id')")
        >>> spark.sql("CALL show_commits(table => 'trips')").show()
    """
    if getattr(spark, _LAYER_ATTRIBUTE, None) is not None:
        return spark
    layer = SqlLayer(spark, spark.sql, spark.table)

    @functools.wraps(layer.passthrough_sql)
    def sql(sqlQuery: str, args: Any = None, **kwargs: Any) -> DataFrame:
        return layer.sql(sqlQuery, args, **kwargs)

    @functools.wraps(layer.passthrough_table)
    def table(tableName: str) -> DataFrame:
        return layer.table(tableName)

    spark.sql = sql
    spark.table = table
    setattr(spark, _LAYER_ATTRIBUTE, layer)
    install(spark, read_table=layer.read_table)
    return spark


def disable(spark: SparkSession) -> SparkSession:
    """Remove hoodpy's SQL layer from ``spark`` (a no-op if it was not enabled)."""
    layer = getattr(spark, _LAYER_ATTRIBUTE, None)
    if layer is None:
        return spark
    for name in ("sql", "table"):
        if name in vars(spark):
            delattr(spark, name)
    delattr(spark, _LAYER_ATTRIBUTE)
    uninstall(spark)
    # If something had already rebound them on the instance before us, put that back.
    if getattr(layer.passthrough_sql, "__self__", None) is not spark:
        spark.sql = layer.passthrough_sql
    if getattr(layer.passthrough_table, "__self__", None) is not spark:
        spark.table = layer.passthrough_table
    return spark


def layer_of(spark: SparkSession) -> SqlLayer | None:
    """The layer ``enable`` installed on ``spark``, if any."""
    return getattr(spark, _LAYER_ATTRIBUTE, None)


def table_for_name(spark: SparkSession, name: str, *, options: Mapping[str, Any] | None = None) -> HoodieTable:
    """Open the hoodpy table registered in the Spark catalog as ``name`` (``db.table``); exported as
    ``sql_ext.table_for_name``. Catalog names are the SQL layer's, so the engine's :class:`HoodieTable` opens
    tables by path only; an enabled layer's catalog (and its cache) is used when there is one.

    Raises :class:`UnknownTableError` or :class:`NotAHoodieTableError`.
    """
    layer = layer_of(spark)
    catalog = layer.catalog if layer is not None else SparkCatalog(spark, spark.sql)
    return catalog.require(name).open(spark, options)

"""Hudi's table-valued function ``hudi_table_changes`` in statements that go through the SQL layer.

``hudi_table_changes('db.t' | '<base path>', 'latest_state', '<start>' [, '<end>'])`` is Hudi's
incremental query: the latest version of each record committed in (start, end], with its meta columns
(``_hoodie_commit_time`` included), read by :meth:`hoodpy.table.HoodieTable.read_incremental`.

How it reaches Spark: each call in the statement is evaluated to a DataFrame, registered as a temporary view
with a name unique in the session (``__hoodpy_changes_<n>``), and the call's text (from the function name to
its closing parenthesis) is replaced by that name; the rest of the statement is kept byte for byte and then
routed as any statement (so joins with hoodpy tables, CTAS, INSERT ... SELECT and temporary views over it
work unchanged). A view rather than a ``{param}`` DataFrame argument because the rewritten statement is
parsed again and may be taken apart by the DML paths, and because Spark Connect resolves a query's
relations when it runs, after ``spark.sql`` returned. Each view holds a fixed commit window and lives as
long as its statement, or as the temporary view / cached table the statement defines (the lifecycle is
:mod:`sql_ext.session_views`'s).

Arguments, as Hudi's parser takes them (``HoodieTableChangesOptionsParser``): 3 or 4 literals. A first
argument containing ``/`` is a base path, anything else a catalog table name. The format must be
``latest_state`` or ``cdc`` (change data capture: ``op``, ``ts_ms``, ``before``, ``after`` per change, tables
with ``hoodie.table.cdc.enabled``; :meth:`hoodpy.table.HoodieTable.read_cdc`). ``earliest`` as start reads from the
beginning of the timeline (Hudi passes begin instant ``000``). Instants are Hudi's ``yyyyMMddHHmmss[SSS]``
(14 digits mean millisecond ``000``); as a convenience ``'yyyy-MM-dd HH:mm:ss[.SSS]'`` and
``'yyyy-MM-dd'`` are read in the session time zone and converted to the timeline's UTC instant, as hoodpy's
``TIMESTAMP AS OF`` does (Hudi's own incremental read compares the begin string with instant times as is).
The start is exclusive and the end inclusive.

Hudi's incremental read options work on SQL reads as well (Hudi's Spark data source takes the session's
``hoodie.*`` confs as read options): with ``hoodie.datasource.query.type=incremental`` set in the session
(``SET``) or in the table's OPTIONS / TBLPROPERTIES, a read of a hoodpy table in a statement returns the
records committed in (``hoodie.datasource.read.begin.instanttime``, ``hoodie.datasource.read.end.instanttime``]
(:func:`option_window`); table options win over the session's, as in Hudi.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp
from sqlglot.tokens import TokenType

from hoodpy.config import HoodieConfig
from hoodpy.config.read import CDC, EARLIEST, INCREMENTAL, LATEST_STATE, ReadConfig
from hoodpy.errors import InvalidConfigError, InvalidInstantError, InvalidStatementError, UnsupportedStatementError
from hoodpy.timeline.instant import EARLIEST_INSTANT
from sql_ext.call import NotALiteral, constant
from sql_ext.dialect import DIALECT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from hoodpy.table import HoodieTable

FUNCTION = "hudi_table_changes"
VIEW_PREFIX = "__hoodpy_changes_"
_INSTANT = re.compile(r"^\d{14}(\d{3})?$")
_ZEROS = re.compile(r"^0+$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{1,3})?)?$")


@dataclass(frozen=True)
class ChangesCall:
    """One ``hudi_table_changes(...)`` call: its arguments as written and its span in the statement."""

    table: str
    format: str
    start: str
    end: str | None
    span: tuple[int, int]  # [start, end] character positions, closing parenthesis included


def _is_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and \
        node.this.name.lower() == FUNCTION


def has_calls(tree: exp.Expr) -> bool:
    return any(_is_call(n) for n in tree.find_all(exp.Table))


def find_calls(tree: exp.Expr, text: str) -> list[ChangesCall]:
    """The calls in ``tree`` (parsed from ``text``), in the order written."""
    calls = []
    for node in tree.find_all(exp.Table):
        if _is_call(node):
            calls.append(_call(node.this, text))
    return sorted(calls, key=lambda c: c.span[0])


def _call(node: exp.Anonymous, text: str) -> ChangesCall:
    usage = (f"{FUNCTION}(table or path, '{LATEST_STATE}' | '{CDC}', start instant [, end instant]) takes 3 or 4 "
             f"string arguments")
    if not 3 <= len(node.expressions) <= 4:
        raise InvalidStatementError(f"{usage}, got {len(node.expressions)}")
    values = []
    for arg in node.expressions:
        try:
            value = constant(arg)
        except NotALiteral as e:
            raise InvalidStatementError(f"{usage}; got {e}") from None
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise InvalidStatementError(f"{usage}; got {arg.sql(dialect=DIALECT)}")
        values.append(str(value).strip())
    span = _span(node, text)
    if span is None:
        raise UnsupportedStatementError(text, f"hoodpy could not locate the {FUNCTION} call in the statement")
    return ChangesCall(values[0], values[1], values[2], values[3] if len(values) == 4 else None, span)


def _span(node: exp.Anonymous, text: str) -> tuple[int, int] | None:
    """From the function name to its matching closing parenthesis, by the statement's tokens."""
    start = node.meta.get("start")
    if start is None:
        return None
    depth = None
    for token in DIALECT.tokenize(text):
        if token.start < start:
            continue
        if token.token_type == TokenType.L_PAREN:
            depth = (depth or 0) + 1
        elif token.token_type == TokenType.R_PAREN and depth is not None:
            depth -= 1
            if depth == 0:
                return start, token.end
    return None


def _full(instant: str) -> str:
    """yyyyMMddHHmmss[SSS] as 17 digits: a whole second is its millisecond 000, as Hudi reads it."""
    return instant if len(instant) == 17 else instant + "000"


def parse_instant(value: str, which: str, to_instant: Callable[[str], str]) -> str:
    """A start or end argument as a 17-digit instant time; ``to_instant`` converts a timestamp string in
    the session time zone."""
    if which == "start" and value.lower() == EARLIEST:
        return EARLIEST_INSTANT
    if _INSTANT.match(value):
        return _full(value)
    if _DATETIME.match(value):
        try:
            return to_instant(value)
        except Exception as e:  # noqa: BLE001 -- a date Spark cannot cast ('2024-02-30')
            raise InvalidInstantError(f"{FUNCTION} {which} instant {value!r} is not a valid timestamp "
                                      f"({str(e).splitlines()[0]})") from None
    earliest = f" or '{EARLIEST}'" if which == "start" else ""
    raise InvalidInstantError(
        f"{FUNCTION} {which} instant {value!r} is not an instant time (yyyyMMddHHmmss or yyyyMMddHHmmssSSS), "
        f"a timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]' / 'yyyy-MM-dd'{earliest}")


def changes(call: ChangesCall, open_table: Callable[[str], HoodieTable],
            to_instant: Callable[[str], str]) -> DataFrame:
    """The incremental read a call asks for (arguments checked before the table is opened)."""
    mode = call.format.lower()
    if mode not in (LATEST_STATE, CDC):
        raise InvalidStatementError(f"{FUNCTION} format {call.format!r} is not one of '{LATEST_STATE}', '{CDC}'")
    start = parse_instant(call.start, "start", to_instant)
    end = parse_instant(call.end, "end", to_instant) if call.end is not None else None
    table = open_table(call.table)
    return table.read_cdc(start, end) if mode == CDC else table.read_incremental(start, end)


class ChangesRewriter:
    """Replaces the ``hudi_table_changes`` calls of a statement by temporary views of their results."""

    def __init__(self, open_table: Callable[[str], HoodieTable], to_instant: Callable[[str], str]):
        self.open_table = open_table
        self.to_instant = to_instant
        self._ids = itertools.count(1)

    def rewrite(self, tree: exp.Expr, text: str) -> tuple[str, list[str]] | None:
        """``text`` with each call replaced by its view's name (an alias kept as written), and the views
        registered; None without calls. Every call is evaluated before any view is registered, so a bad call
        leaves the session as it was."""
        calls = find_calls(tree, text)
        if not calls:
            return None
        frames = [changes(call, self.open_table, self.to_instant) for call in calls]
        out, pos, names = [], 0, []
        for call, df in zip(calls, frames, strict=True):
            name = f"{VIEW_PREFIX}{next(self._ids)}"
            df.createOrReplaceTempView(name)
            names.append(name)
            out.append(text[pos:call.span[0]])
            out.append(name)
            pos = call.span[1] + 1
        out.append(text[pos:])
        return "".join(out), names


READ_KEYS = (ReadConfig.QUERY_TYPE.key, ReadConfig.BEGIN_INSTANTTIME.key, ReadConfig.END_INSTANTTIME.key,
             ReadConfig.INCREMENTAL_FORMAT.key)
FALLBACK_KEY = ReadConfig.INCR_FALLBACK_FULL_TABLE_SCAN.key


def fallback_option(options: Mapping[str, str]) -> dict[str, str]:
    """The full-table-scan fallback of a read's options, as the table's option for its incremental read."""
    return {FALLBACK_KEY: options[FALLBACK_KEY]} if FALLBACK_KEY in options else {}


def read_window(table: HoodieTable, options: Mapping[str, str], window: tuple[str, str | None]) -> DataFrame:
    """The incremental query of :func:`option_window`'s window in the format the options ask for
    (``hoodie.datasource.query.incremental.format``: latest_state or cdc)."""
    if HoodieConfig.of(dict(options)).get(ReadConfig.INCREMENTAL_FORMAT) == CDC:
        return table.read_cdc(*window)
    return table.read_incremental(*window)


def option_window(options: Mapping[str, str]) -> tuple[str, str | None] | None:
    """(start, end) of the incremental query the read options ask for; None for other query types."""
    if HoodieConfig.of(dict(options)).get(ReadConfig.QUERY_TYPE) != INCREMENTAL:
        return None
    begin_key, end_key = ReadConfig.BEGIN_INSTANTTIME.key, ReadConfig.END_INSTANTTIME.key
    begin, end = options.get(begin_key), options.get(end_key)
    if not begin:
        raise InvalidConfigError(begin_key, begin, f"an incremental query ({ReadConfig.QUERY_TYPE.key}="
                                 f"{INCREMENTAL}) needs the instant to read after (000 for the beginning)")
    return _option_instant(begin_key, begin), _option_instant(end_key, end) if end else None


def _option_instant(key: str, value: str) -> str:
    value = str(value).strip()
    if _ZEROS.match(value):
        return EARLIEST_INSTANT  # Hudi's "000": before every instant
    if _INSTANT.match(value):
        return _full(value)
    raise InvalidConfigError(key, value, "not an instant time (yyyyMMddHHmmss or yyyyMMddHHmmssSSS)")

"""Errors of hoodpy's SQL layer: CALL syntax and arguments, catalog names, statements hoodpy does not support.

Each is a :class:`~sql_ext.errors.HoodieError`; messages are built from the structured fields. (These live
here, beside the SQL layer, until ``sql_ext/errors.py`` takes them over.)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from sql_ext.errors import HoodieError


class CallSyntaxError(HoodieError):
    """A ``CALL`` statement that does not parse: ``CALL [system.]name(arg => value, ...)``."""

    def __init__(self, statement: str, reason: str):
        self.statement, self.reason = statement, reason
        super().__init__(
            f"Malformed CALL statement: {reason}. Expected CALL [system.]name(arg => value, ...), "
            f"got: {statement.strip()}"
        )


class UnknownProcedureError(HoodieError):
    """A ``CALL`` of a name the registry does not hold; suggests the closest names."""

    def __init__(self, name: str, known: Iterable[str]):
        self.name = name
        self.known = sorted(known)
        self.suggestions = difflib.get_close_matches(name.lower(), self.known, n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        super().__init__(
            f"Unknown procedure {name!r}.{hint} CALL help() lists the {len(self.known)} procedures hoodpy has."
        )


class ProcedureArgumentError(HoodieError):
    """An unknown, missing, repeated or mistyped argument of a ``CALL``; names the procedure's signature."""

    def __init__(self, procedure: str, problem: str, signature: str):
        self.procedure, self.problem, self.signature = procedure, problem, signature
        super().__init__(f"{procedure}: {problem}. Signature: {signature}")


class UnknownTableError(HoodieError):
    """A table name the Spark catalog does not hold."""

    def __init__(self, name: str, hint: str = ""):
        self.name = name
        super().__init__(f"Table {name!r} not found in the Spark catalog" + (f"; {hint}" if hint else ""))


class NotAHoodieTableError(HoodieError):
    """A catalog table that exists but is not a hoodpy table (no ``hoodie.base.path`` table property)."""

    def __init__(self, name: str, what: str = ""):
        self.name = name
        super().__init__(
            f"Table {name!r} is not a hoodpy table" + (f" ({what})" if what else "")
            + "; create one with CREATE TABLE ... USING hoodpy TBLPROPERTIES (primaryKey = '...')"
        )


class CatalogTableExistsError(HoodieError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"Table {name!r} already exists in the Spark catalog (use IF NOT EXISTS to skip)")


class UnsupportedStatementError(HoodieError):
    """A statement on a hoodpy table that hoodpy's SQL layer does not (yet) support."""

    def __init__(self, statement: str, reason: str):
        self.statement, self.reason = statement, reason
        super().__init__(f"{reason} (statement: {_shorten(statement)})")


class InvalidStatementError(HoodieError):
    """A statement on a hoodpy table that is wrong as written (column counts, key updates, bad options)."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""hoodpy's Spark SQL layer, on top of the engine (:mod:`hoodpy`): ``enable(spark)`` routes ``spark.sql``
through sqlglot so that ``CALL`` procedures, ``CREATE TABLE ... USING hoodpy`` and DML / reads of hoodpy
tables work in plain SQL.

Modules: :mod:`~sql_ext.session` (enable, routing), :mod:`~sql_ext.dialect` (Spark + CALL),
:mod:`~sql_ext.call` (CALL statements as data), :mod:`~sql_ext.procedures` (registry, one module per
procedure family), :mod:`~sql_ext.catalog` (catalog registration), :mod:`~sql_ext.rewrite` (reads),
:mod:`~sql_ext.ddl` / :mod:`~sql_ext.dml` (statements on hoodpy tables), errors in :mod:`hoodpy.errors`.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sql_ext.session import disable, enable, table_for_name

# Imported on first use: a Python worker that unpickles a function of this package (a read rewrite, say)
# would otherwise import sqlglot and every procedure, about a second of CPU per new worker.
_LAZY = {"disable": "sql_ext.session", "enable": "sql_ext.session", "table_for_name": "sql_ext.session"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sql_ext' has no attribute {name!r}")


__all__ = ["disable", "enable", "table_for_name"]

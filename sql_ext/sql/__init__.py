"""hoodpy's Spark SQL layer: ``enable(spark)`` routes ``spark.sql`` through sqlglot so that ``CALL``
procedures, ``CREATE TABLE ... USING hoodpy`` and DML / reads of hoodpy tables work in plain SQL.

Modules: :mod:`~sql_ext.sql.session` (enable, routing), :mod:`~sql_ext.sql.dialect` (Spark + CALL),
:mod:`~sql_ext.sql.call` (CALL statements as data), :mod:`~sql_ext.sql.procedures` (registry, one module per
procedure family), :mod:`~sql_ext.sql.catalog` (catalog registration), :mod:`~sql_ext.sql.rewrite` (reads),
:mod:`~sql_ext.sql.ddl` / :mod:`~sql_ext.sql.dml` (statements on hoodpy tables), errors in :mod:`sql_ext.errors`.
"""

from sql_ext.sql.session import disable, enable

__all__ = ["disable", "enable"]

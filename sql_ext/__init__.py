"""hoodpy: Apache Hudi copy-on-write tables (table version 6) on PySpark, without the JVM bundle."""

import importlib
from typing import TYPE_CHECKING

from sql_ext.errors import (
    HoodieError,
    InstantNotRetainedError,
    InvalidConfigError,
    InvalidInstantError,
    InvalidRecordError,
    MissingConfigError,
    NotAHoodieTableError,
    ProcedureArgumentError,
    SavepointError,
    SchemaEvolutionError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnknownProcedureError,
    UnsupportedTableVersionError,
    WriteConflictError,
)

if TYPE_CHECKING:
    from sql_ext.sql import disable, enable
    from sql_ext.table import HoodieTable
    from sql_ext.write.operation import WriteOperation
    from sql_ext.write.writer import CommitResult

# Imported on first use: Spark's Python workers import sql_ext.write.* for every new worker process, and the
# SQL layer alone (sqlglot, the procedures) costs them about a second of CPU each.
_LAZY = {
    "disable": "sql_ext.sql",
    "enable": "sql_ext.sql",
    "HoodieTable": "sql_ext.table",
    "WriteOperation": "sql_ext.write.operation",
    "CommitResult": "sql_ext.write.writer",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sql_ext' has no attribute {name!r}")

__all__ = [
    "CommitResult",
    "HoodieError",
    "HoodieTable",
    "InstantNotRetainedError",
    "InvalidConfigError",
    "InvalidInstantError",
    "InvalidRecordError",
    "MissingConfigError",
    "NotAHoodieTableError",
    "ProcedureArgumentError",
    "SavepointError",
    "SchemaEvolutionError",
    "TableAlreadyExistsError",
    "TableNotFoundError",
    "UnknownProcedureError",
    "UnsupportedTableVersionError",
    "WriteConflictError",
    "WriteOperation",
    "disable",
    "enable",
]

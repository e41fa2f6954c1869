"""hoodpy: Apache Hudi copy-on-write tables (table version 6) on PySpark, without the JVM bundle."""

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
from sql_ext.sql import disable, enable
from sql_ext.table import HoodieTable
from sql_ext.write.operation import WriteOperation
from sql_ext.write.writer import CommitResult

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

"""hoodpy: Apache Hudi tables (table version 6) on PySpark, without the JVM bundle.

This package is the engine: timeline, file groups, index, write path, reads, table services, transactions,
storage and config. The Spark SQL layer (``enable(spark)``, CALL procedures) is the package ``sql_ext`` on
top of it, and the dbt adapter sits on top of both; nothing here imports either.
"""

import importlib
from typing import TYPE_CHECKING

from hoodpy.arrow_pool import set_driver_allocator

set_driver_allocator()  # transparent huge pages off for Arrow's memory pool, as in the workers

from hoodpy.errors import (  # noqa: E402
    ChangesNotReadableError,
    HoodieError,
    InstantNotRetainedError,
    InvalidConfigError,
    InvalidInstantError,
    InvalidRecordError,
    MissingConfigError,
    NotAHoodieTableError,
    PathHoldsOtherDataError,
    ProcedureArgumentError,
    SavepointError,
    SchemaEvolutionError,
    TableAlreadyExistsError,
    TableNotFoundError,
    UnknownProcedureError,
    UnsupportedApiError,
    UnsupportedTableVersionError,
    WriteConflictError,
)

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable
    from hoodpy.write.operation import WriteOperation
    from hoodpy.write.writer import CommitResult

# Imported on first use: Spark's Python workers import hoodpy.write.* for every new worker process and need
# neither the table facade nor what it imports.
_LAZY = {
    "HoodieTable": "hoodpy.table",
    "WriteOperation": "hoodpy.write.operation",
    "CommitResult": "hoodpy.write.writer",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hoodpy' has no attribute {name!r}")

__all__ = [
    "ChangesNotReadableError",
    "CommitResult",
    "HoodieError",
    "HoodieTable",
    "InstantNotRetainedError",
    "InvalidConfigError",
    "InvalidInstantError",
    "InvalidRecordError",
    "MissingConfigError",
    "NotAHoodieTableError",
    "PathHoldsOtherDataError",
    "ProcedureArgumentError",
    "SavepointError",
    "SchemaEvolutionError",
    "TableAlreadyExistsError",
    "TableNotFoundError",
    "UnknownProcedureError",
    "UnsupportedApiError",
    "UnsupportedTableVersionError",
    "WriteConflictError",
    "WriteOperation",
]

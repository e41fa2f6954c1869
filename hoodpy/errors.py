"""hoodpy's error types: one base, one subclass per problem a user can hit.

Messages are built from structured fields so that callers (the SQL layer, the dbt adapter) can both show
them and act on them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class HoodieError(Exception):
    """Base class of every error hoodpy raises on purpose."""


class HoodieConfigWarning(UserWarning):
    """A ``hoodie.*`` option or table property hoodpy does not honour (it was ignored)."""


class TableNotFoundError(HoodieError):
    def __init__(self, base_path: str, reason: str = "no .hoodie/hoodie.properties found"):
        self.base_path = base_path
        super().__init__(f"No hoodpy/Hudi table at {base_path!r}: {reason}")


class TableAlreadyExistsError(HoodieError):
    def __init__(self, base_path: str):
        self.base_path = base_path
        super().__init__(f"A Hudi table already exists at {base_path!r}")


class UnsupportedTableVersionError(HoodieError):
    def __init__(self, base_path: str, found: str, supported: str):
        self.base_path, self.found, self.supported = base_path, found, supported
        super().__init__(
            f"Table at {base_path!r} has {found}; hoodpy reads and writes {supported} only"
        )


class UnsupportedServiceError(UnsupportedTableVersionError):
    """Something hoodpy does on some table versions only (a table service, a write), asked of another."""

    def __init__(self, base_path: str, what: str, version: str, supported: str = "table version 6"):
        HoodieError.__init__(
            self, f"{what} is not supported on table version {version} at {base_path!r}: hoodpy does it on "
                  f"{supported} only; the table is unchanged")
        self.base_path, self.found, self.supported = base_path, f"table version {version}", supported


class TableVersionChangeError(HoodieError):
    """An upgrade or downgrade of the table version hoodpy cannot do; the table is unchanged."""


class PathHoldsOtherDataError(HoodieError):
    """A write that would create a Hudi table in a folder already holding files that are not one."""

    def __init__(self, base_path: str, examples: Iterable[str] = ()):
        self.base_path = base_path
        self.examples = list(examples)[:3]
        shown = f" (e.g. {', '.join(self.examples)})" if self.examples else ""
        super().__init__(f"{base_path!r} holds files but no Hudi table (no .hoodie/hoodie.properties){shown}: "
                         "hoodpy does not write a table over them; use an empty or new path, or remove them")


class UnsupportedApiError(HoodieError):
    """A Spark DataFrame API call that format('hoodpy') does not support; names what to use instead."""

    def __init__(self, call: str, reason: str):
        self.call, self.reason = call, reason
        super().__init__(f"{call} is not supported for format('hoodpy'): {reason}")


class UnsupportedTableTypeError(HoodieError):
    """An operation hoodpy does not do on this table type yet (table services of merge-on-read tables)."""

    def __init__(self, base_path: str, table_type: str, operation: str):
        self.base_path, self.table_type, self.operation = base_path, table_type, operation
        super().__init__(
            f"Table at {base_path!r} is a {table_type} table: hoodpy reads it but cannot {operation} it yet "
            f"(MERGE_ON_READ tables of table versions 6, 8 and 9 take writes, rollbacks, compaction, clean, clustering, "
            f"archival, savepoints and restores); the table is unchanged")


class InvalidConfigError(HoodieError):
    def __init__(self, key: str, value: object, reason: str):
        self.key, self.value, self.reason = key, value, reason
        super().__init__(f"Invalid value {value!r} for {key}: {reason}")


class MissingConfigError(HoodieError):
    def __init__(self, key: str, reason: str = ""):
        self.key = key
        super().__init__(f"Missing required config {key}" + (f": {reason}" if reason else ""))


class InvalidInstantError(HoodieError):
    """A timeline file name or instant time that is not Hudi's format, or a corrupt instant file."""


class IllegalInstantTransitionError(HoodieError):
    def __init__(self, instant: object, reason: str):
        self.instant = instant
        super().__init__(f"Illegal transition of {instant}: {reason}")


class SchemaEvolutionError(HoodieError):
    """A batch whose schema cannot be written into the table (narrowing, dropped column, key change)."""

    def __init__(self, problems: Iterable[str]):
        self.problems = list(problems)
        super().__init__(
            "Incoming batch schema is not compatible with the table schema: " + "; ".join(self.problems)
        )


class InvalidRecordError(HoodieError):
    """Records that cannot be written: null record keys, null ordering values, missing fields."""

    def __init__(self, reason: str, *, examples: Iterable[object] = ()):
        self.reason = reason
        self.examples = list(examples)
        tail = f" (e.g. {self.examples[:3]})" if self.examples else ""
        super().__init__(reason + tail)


class WriteAbortedError(HoodieError):
    """A task closed a file after its write was aborted or rolled back (another task failed, or a writer
    rolled back the instant): the file is deleted, since no commit will name it."""

    def __init__(self, path: str):
        self.path = path
        super().__init__(f"The write of {path} was aborted or rolled back while the task wrote it; the file is "
                         "deleted")


class WriteConflictError(HoodieError):
    def __init__(self, instant_time: str, conflicting_instant: str, file_ids: Iterable[str]):
        self.instant_time = instant_time
        self.conflicting_instant = conflicting_instant
        self.file_ids = sorted(file_ids)
        super().__init__(
            f"Write {instant_time} conflicts with instant {conflicting_instant} on file groups "
            f"{', '.join(self.file_ids)}"
        )


class PlanNotFoundError(HoodieError):
    pass


class CompactionError(HoodieError):
    """A compaction that cannot be scheduled or run: a copy-on-write table, an instant that would overlap
    writes in progress; the table is unchanged."""


class HoodieIOError(HoodieError):
    """A storage operation failed; names the path."""

    def __init__(self, path: str, reason: str):
        self.path = path
        super().__init__(f"{reason}: {path}")


class HFileFormatError(HoodieError):
    """Bytes that are not a valid HFile (bad magic, truncated, corrupt block) or an HFile feature hoodpy does not
    read (a compression codec, encoded data blocks, MVCC timestamps); names the file and the problem."""

    def __init__(self, source: str, reason: str):
        self.source, self.reason = source, reason
        super().__init__(f"Cannot read HFile {source}: {reason}")


class MetadataTableError(HoodieError):
    """The metadata table (``.hoodie/metadata``) cannot be read or kept in step: names the table and the problem."""

    def __init__(self, base_path: str, reason: str):
        self.base_path, self.reason = base_path, reason
        super().__init__(f"Metadata table of {base_path}: {reason}")


class UnsupportedStorageError(HoodieError):
    """A table path whose scheme hoodpy has no file system for (or whose file system cannot be set up)."""

    def __init__(self, base_path: str, reason: str):
        self.base_path, self.reason = base_path, reason
        super().__init__(f"Cannot use storage at {base_path!r}: {reason}")


class UnsafeStorageConfigError(InvalidConfigError):
    """A configuration that would be unsafe on the table's storage (e.g. a file-system lock where the store
    has no put-if-absent); names the key to change."""

    def __init__(self, key: str, value: object, base_path: str, reason: str):
        self.base_path = base_path
        super().__init__(key, value, f"unsafe on {base_path!r}: {reason}")


class LockAcquisitionError(HoodieError):
    def __init__(self, lock: str, waited_ms: int, holder: str | None = None):
        self.lock, self.waited_ms, self.holder = lock, waited_ms, holder
        held = f"; held by {holder}" if holder else ""
        super().__init__(f"Could not acquire lock {lock} within {waited_ms} ms{held}")


class LockLostError(HoodieError):
    def __init__(self, lock: str, reason: str):
        self.lock = lock
        super().__init__(f"Lost lock {lock}: {reason}")


class RollbackError(HoodieError):
    """A rollback that cannot be planned or run (e.g. the instant is not the latest completed commit)."""


class SavepointError(HoodieError):
    """A savepoint that cannot be created, deleted or restored (unknown instant, cleaned files, pending writes)."""


class InstantNotRetainedError(HoodieError):
    """Time travel to an instant whose files the cleaner already deleted (only retained instants are readable)."""

    def __init__(self, instant_time: str, reason: str):
        self.instant_time, self.reason = instant_time, reason
        super().__init__(f"Cannot read the table as of {instant_time}: {reason}")


class ChangesNotReadableError(HoodieError):
    """An incremental read whose commit window reaches commits archived off the active timeline, or file
    versions the cleaner removed: read incrementally, it would silently miss records."""

    def __init__(self, table: str, start: str, end: str, reason: str, earliest_start: str | None):
        self.table, self.start, self.end, self.reason = table, start, end, reason
        self.earliest_start = earliest_start
        readable = (f"The earliest readable start for this end is {earliest_start}: read ({earliest_start}, "
                    f"{end}] instead, or " if earliest_start is not None else "")
        super().__init__(
            f"Cannot read the changes of table {table} in ({start}, {end}]: {reason}. {readable}"
            f"set hoodie.datasource.read.incr.fallback.fulltablescan.enable=true to read the window by a full "
            f"table scan (Hudi's fallback)")


class ClusteringUpdateError(WriteConflictError):
    """An update or delete aimed at file groups that a pending clustering plan will rewrite."""

    def __init__(self, plan_instant: str, file_ids):
        HoodieError.__init__(
            self, f"Not allowed to update the clustering file groups {', '.join(sorted(file_ids))}: they are "
            f"in pending clustering plan {plan_instant}; run or roll back that clustering first")
        self.instant_time = None
        self.conflicting_instant = plan_instant
        self.file_ids = sorted(file_ids)


# -- the SQL layer: CALL syntax and arguments, catalog names, unsupported statements -------------------
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


class ColumnNotFoundError(HoodieError):
    """A column that no base file's parquet footer holds (``hoodpy layout --column``)."""

    def __init__(self, column: str, available: Iterable[str]):
        self.column, self.available = column, sorted(available)
        close = difflib.get_close_matches(column, self.available, n=1)
        super().__init__(f"No column {column!r} in the base files" + (f" (did you mean {close[0]!r}?)" if close else "")
                         + f"; columns: {', '.join(self.available)}")


class MissingDependencyError(HoodieError):
    """An optional Python package a feature needs is not installed."""

    def __init__(self, package: str, feature: str):
        self.package, self.feature = package, feature
        super().__init__(f"{feature} needs the Python package {package!r}, which is not installed: "
                         f"pip install {package}")


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

"""Connections of ``type: hoodpy``: dbt-spark's session connection, executing every statement through the
hoodpy SQL layer (so ``CALL ...`` works in hooks, ``run_query`` and models) with bindings rendered as
Spark SQL literals."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Generator, List, Optional

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionManager
from dbt.adapters.spark.session import Connection as SessionConnection
from dbt.adapters.spark.session import Cursor, SessionConnectionWrapper
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from sql_ext.catalog import sql_literal

from dbt.adapters.hoodpy.session import hoodpy_session

logger = AdapterLogger("hoodpy")


class HoodpyCursor(Cursor):
    """Runs statements on the profile's session with hoodpy's SQL layer enabled."""

    def __init__(self, credentials: Any) -> None:
        super().__init__()
        self.credentials = credentials

    def execute(self, sql: str, *parameters: Any) -> None:
        if parameters:
            sql = sql % parameters
        self._df = hoodpy_session(self.credentials).sql(sql)


class HoodpyHandle(SessionConnection):
    def __init__(self, credentials: Any) -> None:
        super().__init__()
        self.credentials = credentials

    def cursor(self) -> HoodpyCursor:
        return HoodpyCursor(self.credentials)


class HoodpyConnectionWrapper(SessionConnectionWrapper):
    @classmethod
    def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
        # The SQL layer's literals: None is NULL (dbt-spark renders the string 'None').
        return sql_literal(value)

    def execute(self, sql: str, bindings: Optional[List[Any]] = None) -> None:
        sql = sql.strip()
        if sql.endswith(";"):
            sql = sql[:-1]
        assert self._cursor, "Cursor not available"
        if bindings is None:
            self._cursor.execute(sql)
        else:
            self._cursor.execute(sql, *[self._fix_binding(b) for b in bindings])


class HoodpyConnectionManager(SparkConnectionManager):
    TYPE = "hoodpy"

    @contextmanager
    def exception_handler(self, sql: str) -> Generator[None, None, None]:
        try:
            yield
        except (DbtRuntimeError, DbtDatabaseError):
            raise
        except Exception as exc:
            logger.debug(f"Error while running:\n{sql}")
            logger.debug(exc)
            # hoodpy's errors name the problem; Spark's carry their error class. Either is the message.
            raise DbtRuntimeError(str(exc).strip() or type(exc).__name__) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            logger.debug("Connection is already open, skipping open.")
            return connection
        creds = connection.credentials
        try:
            hoodpy_session(creds)
        except Exception as exc:
            connection.handle = None
            connection.state = ConnectionState.FAIL
            from dbt.adapters.exceptions import FailedToConnectError

            raise FailedToConnectError(f"Could not start the hoodpy Spark session: {exc}") from exc
        connection.handle = HoodpyConnectionWrapper(HoodpyHandle(creds))
        connection.state = ConnectionState.OPEN
        return connection

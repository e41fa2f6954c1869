"""Stand-ins for a Spark session and the catalog bridge, so the SQL layer's routing runs without a JVM."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from sql_ext.catalog import TableName, ViewDefinition, split_name
from sql_ext.session import SqlLayer


class Spy:
    """Records every call; returns a fresh marker object per call."""

    def __init__(self, name: str):
        self.name = name
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return ("result", self.name, len(self.calls))


@dataclass
class StubTable:
    base_path: str

    def read(self, as_of: str | None = None, filters: Any = ()) -> tuple:
        return ("snapshot", self.base_path, as_of, *([tuple(filters)] if filters else []))

    def read_incremental(self, start: str, end: str | None = None) -> tuple:
        return ("incremental", self.base_path, start, end)

    def spark_schema(self, as_of: str | None = None) -> Any:
        from pyspark.sql.types import StructType

        return StructType([])  # no columns known: WHERE pushdown is left to the Spark tests


@dataclass(frozen=True)
class StubEntry:
    name: TableName
    base_path: str

    options: tuple[tuple[str, str], ...] = ()  # the table's hoodie.* options

    def open(self, spark: Any, options: Any = None) -> StubTable:
        return StubTable(self.base_path)

    def write_options(self) -> dict[str, str]:
        return dict(self.options)


@dataclass
class StubConf:
    """A session's ``spark.conf``."""

    values: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


@dataclass
class StubSpark:
    conf: StubConf = field(default_factory=StubConf)


@dataclass
class StubCatalog:
    """Knows a fixed set of hoodpy tables (database ``db`` is current)."""

    hoodpy: set[str] = field(default_factory=set)
    lookups: list[str] = field(default_factory=list)
    invalidations: int = 0
    views: dict[str, ViewDefinition] = field(default_factory=dict)  # persistent views, by qualified name
    view_lookups: list[str] = field(default_factory=list)
    ttl: float = 30.0
    generation: int = 0

    def qualify(self, name: Any) -> TableName | None:
        parts = split_name(name)
        if parts is None:
            return None
        _, database, table = parts
        return TableName((database or "db").lower(), table.lower())

    def lookup(self, name: Any) -> StubEntry | None:
        qualified = self.qualify(name)
        if qualified is None:
            return None
        self.lookups.append(str(qualified))
        return self.lookup_qualified(qualified)

    def lookup_qualified(self, qualified: TableName) -> StubEntry | None:
        return StubEntry(qualified, f"/lake/{qualified.table}") if str(qualified) in self.hoodpy else None

    def view(self, name: TableName) -> ViewDefinition | None:
        self.view_lookups.append(str(name))
        return self.views.get(str(name))

    @contextlib.contextmanager
    def statement(self) -> Any:
        yield

    def invalidate(self, name: Any = None) -> None:
        self.invalidations += 1
        self.generation += 1


@dataclass
class StubState:
    table: StubTable

    def schema(self, table: StubTable, as_of: str | None) -> tuple[Any, Any]:
        return None, table.spark_schema(as_of)


class StubSnapshots:
    """The session's snapshot cache (:class:`hoodpy.read.cache.SnapshotCache`): reads through StubTable."""

    def state(self, table: StubTable) -> StubState:
        return StubState(table)

    def snapshot(self, table: StubTable, *, as_of: str | None = None, filters: Any = (), state: Any = None,
                 ) -> tuple:
        return table.read(as_of=as_of, filters=filters)


def stub_layer(hoodpy: set[str] = frozenset(), views: dict[str, ViewDefinition] | None = None,
               ) -> tuple[SqlLayer, Spy]:
    spy = Spy("sql")
    layer = SqlLayer(StubSpark(), spy, Spy("table"), catalog=StubCatalog(set(hoodpy), views=dict(views or {})))
    layer.reads.snapshots = StubSnapshots()
    return layer, spy

"""How ``format("hoodpy")`` reaches hoodpy: Spark's builders record the calls made on them.

``spark.read`` / ``df.write`` / ``df.writeStream`` make a new builder on each access, and in classic PySpark the
builder keeps its format and options in the JVM, where Python cannot read them back without JVM internals. So
:func:`patch_builders` wraps the builder classes' methods (classic PySpark's, or Spark Connect's once a Connect
session is enabled): each setter (``format``, ``option``, ``options``, ``mode``, ``partitionBy``, ``schema``, ``trigger``,
``queryName``, ``outputMode``) appends ``(name, args, kwargs)`` to a list on the builder and then runs as it always
did; the session and DataFrame properties that make builders note where each came from. A terminal call
(``load``, ``table``, ``save``, ``start``) looks at the recorded format: ``hoodpy`` goes to this package's
routes, anything else to Spark's own method, unchanged. Patching is process-wide and idempotent.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hoodpy.errors import UnsupportedApiError

HOODPY = "hoodpy"
_CALLS = "_hoodpy_calls"  # builder attribute: the recorded calls
_ORIGIN = "_hoodpy_origin"  # builder attribute: the session or DataFrame that made it
_READ_TABLE = "_hoodpy_read_table"  # session attribute: how the SQL layer reads a catalog table by name
_PATCHED = "_hoodpy_patched"

_READER_SETTERS = ("format", "option", "options", "schema")
_WRITER_SETTERS = ("format", "option", "options", "mode", "partitionBy")
_STREAM_WRITER_SETTERS = ("format", "option", "options", "partitionBy", "trigger", "queryName", "outputMode")


@dataclass
class Recorded:
    """What a builder's recorded calls set (later calls win, as in Spark)."""

    calls: list[tuple[str, tuple, dict]]
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None
    partition_by: tuple[str, ...] = ()
    schema: Any = None

    @classmethod
    def of(cls, builder: Any) -> Recorded:
        calls = list(builder.__dict__.get(_CALLS, ()))
        out = cls(calls)
        for name, args, kwargs in calls:
            if name == "format":
                out.format = _argument(args, kwargs, "source")
            elif name == "option":
                out.options[str(_argument(args, kwargs, "key"))] = _argument(args, kwargs, "value", 1)
            elif name == "options":
                out.options.update(kwargs)
            elif name == "mode":
                mode = _argument(args, kwargs, "saveMode")
                out.mode = mode if mode is not None else out.mode
            elif name == "partitionBy":
                cols = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
                out.partition_by = tuple(str(c) for c in cols)
            elif name == "schema":
                out.schema = _argument(args, kwargs, "schema")
        return out

    @property
    def is_hoodpy(self) -> bool:
        return isinstance(self.format, str) and self.format.strip().lower() == HOODPY


def _argument(args: tuple, kwargs: dict, name: str, position: int = 0) -> Any:
    return args[position] if len(args) > position else kwargs.get(name)


def origin(builder: Any) -> Any:
    """The session (readers) or DataFrame (writers) the builder was made by."""
    made_by = builder.__dict__.get(_ORIGIN)
    if made_by is None:
        raise UnsupportedApiError(f"{type(builder).__name__} made without spark.read / df.write",
                                  "format('hoodpy') needs the builder from spark.read, df.write or df.writeStream")
    return made_by


def set_read_table(spark: Any, read_table: Callable[[str, dict], Any] | None) -> None:
    """Let ``spark.read.table(name)`` on ``spark`` resolve names through ``read_table(name, options)`` (the SQL
    layer's catalog: a DataFrame for a hoodpy table, None for anything else)."""
    setattr(spark, _READ_TABLE, read_table)


# -- terminal calls ------------------------------------------------------------------------------------------
def _load(original: Callable) -> Callable:
    @functools.wraps(original)
    def load(self, path=None, format=None, schema=None, **options):
        _apply(self, format=format, schema=schema, options=options)
        recorded = Recorded.of(self)
        if not recorded.is_hoodpy:
            return original(self, path)
        from sql_ext.datasource.batch_read import load as hoodpy_load
        from sql_ext.datasource.options import table_path

        if path is not None and not isinstance(path, str):
            raise UnsupportedApiError("load() of several paths", "a hoodpy read loads one table's base path")
        return hoodpy_load(origin(self), table_path(path, recorded.options, "load()"), recorded.options,
                           schema=recorded.schema)

    return load


def _table(original: Callable) -> Callable:
    @functools.wraps(original)
    def table(self, tableName):
        spark = self.__dict__.get(_ORIGIN)
        read_table = getattr(spark, _READ_TABLE, None) if spark is not None else None
        if read_table is not None and isinstance(tableName, str):
            df = read_table(tableName, Recorded.of(self).options)
            if df is not None:
                return df
        return original(self, tableName)

    return table


def _save(original: Callable) -> Callable:
    @functools.wraps(original)
    def save(self, path=None, format=None, mode=None, partitionBy=None, **options):
        _apply(self, format=format, mode=mode, partitionBy=partitionBy, options=options)
        recorded = Recorded.of(self)
        if not recorded.is_hoodpy:
            return original(self, path)
        from sql_ext.datasource.batch_write import WriteRequest
        from sql_ext.datasource.batch_write import save as hoodpy_save
        from sql_ext.datasource.options import table_path

        request = WriteRequest.of(table_path(path, recorded.options, "save()"), recorded.mode, recorded.options,
                                  recorded.partition_by)
        hoodpy_save(origin(self), request)
        return None

    return save


def _start(original: Callable) -> Callable:
    @functools.wraps(original)
    def start(self, path=None, format=None, outputMode=None, partitionBy=None, queryName=None, **options):
        _apply(self, format=format, outputMode=outputMode, partitionBy=partitionBy, queryName=queryName,
               options=options)
        recorded = Recorded.of(self)
        if not recorded.is_hoodpy:
            return original(self, path)
        from sql_ext.datasource.options import table_path
        from sql_ext.datasource.stream_sink import start_sink

        return start_sink(origin(self), table_path(path, recorded.options, "start()"), recorded)

    return start


def _refused(original: Callable, call: str, instead: str) -> Callable:
    @functools.wraps(original)
    def refused(self, *args, **kwargs):
        if Recorded.of(self).is_hoodpy or str(_argument(args, kwargs, "format", 1) or "").lower() == HOODPY:
            raise UnsupportedApiError(call, instead)
        return original(self, *args, **kwargs)

    return refused


def _apply(builder: Any, *, options: dict, **settings: Any) -> None:
    """A terminal call's keyword arguments, set through the (recording) setters as Spark's own methods do."""
    for name, value in settings.items():
        if value is not None:
            getattr(builder, name)(value)
    if options:
        builder.options(**options)


# -- patching ------------------------------------------------------------------------------------------------
def _recording(original: Callable, name: str) -> Callable:
    @functools.wraps(original)
    def setter(self, *args, **kwargs):
        self.__dict__.setdefault(_CALLS, []).append((name, args, kwargs))
        return original(self, *args, **kwargs)

    return setter


def _noting_origin(prop: property) -> property:
    def getter(owner):
        builder = prop.fget(owner)
        builder.__dict__[_ORIGIN] = owner
        return builder

    return property(functools.wraps(prop.fget)(getter), doc=prop.__doc__)


def _patch(cls: type, setters: tuple[str, ...], terminals: dict[str, Callable[[Callable], Callable]]) -> None:
    if cls.__dict__.get(_PATCHED):
        return
    for name in setters:
        setattr(cls, name, _recording(getattr(cls, name), name))
    for name, wrap in terminals.items():
        setattr(cls, name, wrap(getattr(cls, name)))
    setattr(cls, _PATCHED, True)


def _patch_origin(cls: type, *names: str) -> None:
    marker = f"{_PATCHED}_origin"
    if cls.__dict__.get(marker):
        return
    for name in names:
        setattr(cls, name, _noting_origin(getattr(cls, name)))
    setattr(cls, marker, True)


def _classes(module: str, *names: str) -> list[type] | None:
    try:
        mod = importlib.import_module(module)
    except ImportError:  # Spark Connect's client needs grpc: without it there is nothing to patch
        return None
    return [getattr(mod, n) for n in names]


_FLAVOURS = {
    "classic": ("pyspark.sql.readwriter", "pyspark.sql.streaming.readwriter", "pyspark.sql.session",
                "pyspark.sql.classic.dataframe"),
    "connect": ("pyspark.sql.connect.readwriter", "pyspark.sql.connect.streaming.readwriter",
                "pyspark.sql.connect.session", "pyspark.sql.connect.dataframe"),
}


def flavour_of(spark: Any) -> str:
    """``connect`` for a Spark Connect session, else ``classic``."""
    return "connect" if type(spark).__module__.startswith("pyspark.sql.connect") else "classic"


def patch_builders(flavour: str = "classic") -> None:
    """Make the builder classes of one flavour of PySpark (``classic`` or ``connect``) record their calls and
    route ``format("hoodpy")`` (idempotent). Each flavour is patched when a session of it is enabled, so a
    classic session never imports Spark Connect's client."""
    readwriter, streaming, session, dataframe = _FLAVOURS[flavour]
    found = _classes(readwriter, "DataFrameReader", "DataFrameWriter")
    stream = _classes(streaming, "DataStreamWriter")
    owners = _classes(session, "SparkSession"), _classes(dataframe, "DataFrame")
    if found is None or stream is None or None in owners:
        return
    reader, writer = found
    _patch(reader, _READER_SETTERS, {"load": _load, "table": _table})
    _patch(writer, _WRITER_SETTERS, {
        "save": _save,
        "saveAsTable": lambda m: _refused(m, "saveAsTable", "save(path), then CREATE TABLE <name> USING hoodpy "
                                         "LOCATION '<path>' through sql_ext's SQL layer"),
        "insertInto": lambda m: _refused(m, "insertInto", "save(path) with mode('append')")})
    _patch(stream[0], _STREAM_WRITER_SETTERS, {
        "start": _start,
        "toTable": lambda m: _refused(m, "toTable", "start(path) into the table's base path")})
    _patch_origin(owners[0][0], "read")
    _patch_origin(owners[1][0], "write", "writeStream")

"""What every procedure declares (name, typed parameters, output columns) and how a CALL binds to it.

A procedure is a small class; the registry finds it by walking :class:`Procedure` subclasses, so adding one
is a one-file job::

    class ShowSomethingProcedure(Procedure):
        \"\"\"One line that ``CALL help()`` prints.\"\"\"

        name = "show_something"
        parameters = (TABLE, Parameter.optional("limit", INTEGER, 10), PATH)
        output = (("instant_time", StringType()), ("total", LongType()))

        def call(self, ctx, args):
            table = ctx.table(args)
            return [(i.timestamp, 1) for i in table.timeline.completed_commits()][: args["limit"]]

Binding follows Hudi's ``checkArgs``: arguments by position (in declared order) and by name (case-insensitive)
may be mixed as long as positional ones come first; every required parameter must be given; values are
checked against the declared type (Spark's names: string, integer, long, boolean, double) and converted the
way Spark's implicit casts would (``'10'`` for an integer, ``20240101000000000`` for a string).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.types import (
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from hoodpy.errors import ProcedureArgumentError
from hoodpy.inspect.rows import Column
from sql_ext.call import CallArgument

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sql_ext.catalog import SparkCatalog
    from hoodpy.table import HoodieTable

_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


# -- argument types -----------------------------------------------------------------------------------
def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        raise ValueError("expected a string, got a boolean")
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {value!r}")


def _integral(bounds: tuple[int, int]) -> Callable[[Any], int]:
    def coerce(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError("expected a number, got a boolean")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"expected a whole number, got {value!r}")
            value = int(value)
        elif isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise ValueError(f"expected a whole number, got {value!r}") from None
        if not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {value!r}")
        if not bounds[0] <= value <= bounds[1]:
            raise ValueError(f"{value} is out of range")
        return value

    return coerce


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"expected true or false, got {value!r}")


def _to_double(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a number, got {value!r}")


@dataclass(frozen=True)
class ArgType:
    """A parameter type, named as Spark names it (``DataType.typeName()``)."""

    name: str
    coerce: Callable[[Any], Any]

    def __str__(self) -> str:
        return self.name


STRING = ArgType("string", _to_string)
INTEGER = ArgType("integer", _integral(_INT_RANGE))
LONG = ArgType("long", _integral(_LONG_RANGE))
BOOLEAN = ArgType("boolean", _to_boolean)
DOUBLE = ArgType("double", _to_double)

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Parameter:
    """One declared parameter (Hudi's ``ProcedureParameter.required/optional``)."""

    name: str
    type: ArgType
    is_required: bool = False
    default: Any = None
    unless: str | None = None  # required unless this other parameter is given (``table`` unless ``path``)
    doc: str = ""

    @classmethod
    def required(cls, name: str, type: ArgType, *, unless: str | None = None, doc: str = "") -> Parameter:
        return cls(name, type, True, None, unless, doc)

    @classmethod
    def optional(cls, name: str, type: ArgType, default: Any = None, *, doc: str = "") -> Parameter:
        return cls(name, type, False, default, None, doc)

    def describe(self) -> str:
        text = f"{self.name} => {self.type}"
        if self.is_required:
            return text + (f" (required unless {self.unless})" if self.unless else " (required)")
        return text + (f" = {_sql_literal(self.default)}" if self.default is not None else "")


TABLE = Parameter.required("table", STRING, unless="path", doc="Table name in the Spark catalog.")
PATH = Parameter.optional("path", STRING, doc="Table base path (used when table is not given).")
# The run_* procedures' (TableServiceProcedure) shared parameters.
OPTIONAL_TABLE = Parameter.optional("table", STRING, doc="Table name in the Spark catalog (or give path).")
OPTIONS = Parameter.optional("options", STRING, doc="hoodie.* options as 'k1=v1,k2=v2'.")
PENDING_LIMIT = Parameter.optional("limit", INTEGER, doc="Execute at most this many pending plans (oldest first).")


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    return str(value)


class Args(dict):
    """Bound arguments by parameter name (every declared parameter present, defaults filled in);
    ``given`` holds the names the call spelled out."""

    def __init__(self, values: Mapping[str, Any], given: Iterable[str]):
        super().__init__(values)
        self.given = frozenset(given)


# -- procedures ---------------------------------------------------------------------------------------
class Procedure:
    """Base of every procedure. Subclasses set ``name``, ``parameters``, ``output`` and implement ``call``."""

    name: ClassVar[str] = ""
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    output: ClassVar[tuple[tuple[str, DataType], ...]] = ()

    @classmethod
    def description(cls) -> str:
        doc = inspect.getdoc(cls) or ""
        return doc.split("\n\n", 1)[0].replace("\n", " ").strip()

    @classmethod
    def output_schema(cls) -> StructType:
        return StructType([StructField(n, t, True) for n, t in cls.output])

    @classmethod
    def signature(cls) -> str:
        return f"{cls.name}({', '.join(p.describe() for p in cls.parameters)})"

    @classmethod
    def bind(cls, args: Sequence[CallArgument]) -> Args:
        """Match CALL arguments to the declared parameters; raise :class:`ProcedureArgumentError`."""
        by_name = {p.name.lower(): p for p in cls.parameters}
        values: dict[str, Any] = {}
        seen_named = False
        for position, arg in enumerate(args):
            if arg.name is None:
                if seen_named:
                    cls._fail(f"positional argument {position + 1} follows a named argument")
                if position >= len(cls.parameters):
                    cls._fail(f"too many arguments: {len(args)} given, it takes at most "
                              f"{len(cls.parameters)}")
                param = cls.parameters[position]
            else:
                seen_named = True
                param = by_name.get(arg.name.lower())
                if param is None:
                    import difflib

                    close = difflib.get_close_matches(arg.name.lower(), list(by_name), n=1, cutoff=0.6)
                    cls._fail(f"unknown argument {arg.name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            if param.name in values:
                cls._fail(f"argument {param.name!r} given more than once")
            if arg.value is None:
                continue  # NULL: as if not given
            try:
                values[param.name] = param.type.coerce(arg.value)
            except ValueError as e:
                cls._fail(f"argument {param.name!r} must be {param.type}: {e}")
        for param in cls.parameters:
            if param.is_required and param.name not in values and not (param.unless and param.unless in values):
                alt = f" (or {param.unless!r})" if param.unless else ""
                cls._fail(f"missing required argument {param.name!r}{alt}")
        given = set(values)
        for param in cls.parameters:
            values.setdefault(param.name, param.default)
        return Args(values, given)

    @classmethod
    def _fail(cls, problem: str) -> None:
        raise ProcedureArgumentError(cls.name, problem, cls.signature())

    def _options(self, args: Args) -> dict[str, str]:
        """The ``options`` argument ('k1=v1,k2=v2') as a dict; a malformed one fails naming it."""
        try:
            return parse_options(args["options"])
        except ValueError as e:
            self._fail(f"argument 'options' must be 'key=value[,key=value...]': {e}")

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        raise NotImplementedError

    def run(self, ctx: ProcedureContext, args: Sequence[CallArgument]) -> DataFrame:
        """Bind, call, and return the rows as a DataFrame with the declared output columns."""
        bound = self.bind(args)
        rows = [tuple(r) for r in self.call(ctx, bound)]
        df = ctx.spark.createDataFrame(rows, self.output_schema())
        text = bound.get("filter") if any(p.name == "filter" for p in self.parameters) else None
        if text and text.strip():
            try:
                df = df.filter(text)
                df.schema  # noqa: B018 -- analyse now (Spark Connect analyses lazily)
            except Exception as e:  # pyspark's AnalysisException / ParseException
                self._fail(f"argument 'filter' is not a valid predicate over the output columns "
                           f"({', '.join(n for n, _ in self.output)}): {str(e).splitlines()[0]}")
        return df


class TableServiceProcedure(Procedure):
    """Hudi's run_* procedures declare ``table`` optional (``op`` or other arguments come first) but need
    ``table`` or ``path``."""

    @classmethod
    def bind(cls, args: Sequence[CallArgument]) -> Args:
        bound = super().bind(args)
        if not bound.get("table") and not bound.get("path"):
            cls._fail("missing required argument 'table' (or 'path')")
        return bound


@dataclass
class ProcedureContext:
    """What a procedure may use: the Spark session (un-routed) and the catalog bridge."""

    spark: SparkSession
    catalog: SparkCatalog

    def table(self, args: Args) -> HoodieTable:
        """The table named by ``table`` (through the catalog) or, failing that, located at ``path``."""
        from hoodpy.table import HoodieTable

        name, path = args.get("table"), args.get("path")
        if name:
            return self.catalog.require(name).open(self.spark)
        if path:
            return HoodieTable.for_path(self.spark, path)
        raise AssertionError("bind() guarantees table or path")


# -- helpers shared by procedures -----------------------------------------------------------------------
_SPARK_TYPES = {"string": StringType(), "int": IntegerType(), "long": LongType(), "double": DoubleType(),
                "boolean": BooleanType()}


def spark_output(columns: Sequence[Column]) -> tuple[tuple[str, DataType], ...]:
    """A procedure's ``output`` from the engine's column declarations (``hoodpy.inspect``)."""
    return tuple((name, _SPARK_TYPES[kind]) for name, kind in columns)


def csv_items(text: str | None) -> list[str]:
    """Comma-separated names (instants, partitions, columns), blanks dropped."""
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def parse_options(text: str | None) -> dict[str, str]:
    """Hudi's ``HoodieCLIUtils.extractOptions``: ``'k1=v1, k2=v2'`` split on commas, then on the first
    ``=``; commas cannot be escaped; a repeated key keeps its last value. Blank text: no options."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"expected key=value, got {item.strip()!r}")
        out[key.strip()] = value.strip()
    return out

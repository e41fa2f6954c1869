"""``spark.read.format("hoodpy").options(...).load(path)``: Hudi's datasource queries, answered by
:meth:`hoodpy.table.HoodieTable.read` / :meth:`~hoodpy.table.HoodieTable.read_incremental` (Spark's own parquet
scan over the chosen file slices, pruned by filters given to those calls).

Options, as Hudi's datasource takes them:

* ``hoodie.datasource.query.type``: ``snapshot`` (default), ``read_optimized`` (merge-on-read tables: base files
  only) or ``incremental``.
* incremental: ``hoodie.datasource.read.begin.instanttime`` (exclusive; ``000`` or ``0`` for the start of the
  timeline, as Hudi's quick start passes it) and ``hoodie.datasource.read.end.instanttime`` (inclusive; default
  the latest commit); ``hoodie.datasource.query.incremental.format=cdc``: change data capture (``op``,
  ``ts_ms``, ``before``, ``after``; :meth:`hoodpy.table.HoodieTable.read_cdc`).
* ``as.of.instant``: time travel to an instant (``yyyyMMddHHmmss[SSS]``) or a timestamp
  (``yyyy-MM-dd HH:mm:ss[.SSS]``, ``yyyy-MM-dd``) read as the wall time of the timeline's time zone (UTC in
  hoodpy), as Hudi turns it into an instant.

A user schema (``spark.read.schema(...)``) is refused: the table's schema is what a read returns.

Filters prune as in SQL: ``load(path).where("city = 'sf' AND fare > 20")`` (a SQL condition string, called on
the loaded DataFrame itself) reads the table again with the conjuncts :mod:`sql_ext.pushdown` can push, so only
the files they may match are listed and read; the whole condition still filters the rows. A ``Column``
condition, or a filter after other transformations, is applied by Spark alone (its parquet reader still skips
row groups by their statistics).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from hoodpy.config import HoodieConfig
from hoodpy.config.read import ReadConfig
from hoodpy.errors import InvalidConfigError, UnsupportedApiError
from hoodpy.timeline.instant import instant_time_of
from sql_ext.datasource.options import hoodpy_options
from sql_ext.table_changes import option_window, read_window

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_INSTANT = re.compile(r"^\d{14}(\d{3})?$")
_TIMESTAMP_FORMATS = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


def as_of_instant(value: str) -> str:
    """An ``as.of.instant`` value as a 17-digit instant time."""
    text = str(value).strip()
    if _INSTANT.match(text):
        return text if len(text) == 17 else text + "000"
    for pattern in _TIMESTAMP_FORMATS:
        try:
            moment = datetime.strptime(text, pattern)
        except ValueError:
            continue
        return instant_time_of(moment.replace(tzinfo=UTC))
    raise InvalidConfigError(ReadConfig.AS_OF_INSTANT.key, value, "expected an instant time (yyyyMMddHHmmss[SSS]) "
                             "or a timestamp 'yyyy-MM-dd HH:mm:ss[.SSS]' / 'yyyy-MM-dd'")


def load(spark: SparkSession, path: str, options: Mapping[str, object], *, schema: object = None) -> DataFrame:
    """The rows a Hudi datasource read with ``options`` returns from the table at ``path``."""
    from hoodpy.table import HoodieTable

    if schema is not None:
        raise UnsupportedApiError("spark.read.schema(...)", "a hoodpy table is read with its own schema; drop the "
                                  "schema and select or cast columns after load()")
    opts = hoodpy_options(options)
    config = HoodieConfig.of(opts)
    query = config.get(ReadConfig.QUERY_TYPE)
    window = option_window(opts)  # bad instants fail before the table is opened
    as_of = config.raw(ReadConfig.AS_OF_INSTANT)
    as_of = as_of_instant(as_of) if as_of is not None and window is None else None
    table = HoodieTable.for_path(spark, path, options={k: v for k, v in opts.items() if k.startswith("hoodie.")})
    if window is not None:
        return read_window(table, opts, window)
    df = table.read(as_of=as_of, query_type=query)
    df.__class__ = _pruning_class(type(df))
    df.__dict__[_SNAPSHOT] = (table, as_of, query)
    return df


_SNAPSHOT = "_hoodpy_snapshot"  # on a loaded DataFrame: (table, as_of, query type) it reads
_PRUNING_CLASSES: dict[type, type] = {}


def _pruning_class(base: type) -> type:
    """``base`` (classic or Spark Connect DataFrame) whose ``filter`` / ``where`` with a SQL condition re-read
    the snapshot with the filters the condition pushes."""
    if base in _PRUNING_CLASSES or _SNAPSHOT in base.__dict__:
        return _PRUNING_CLASSES.get(base, base)

    def filter(self, condition):
        snapshot = self.__dict__.get(_SNAPSHOT)
        if snapshot is not None and isinstance(condition, str):
            from sql_ext.pushdown import condition_filters

            table, as_of, query = snapshot
            filters = condition_filters(condition, self.schema)
            if filters:
                return base.filter(table.read(as_of=as_of, filters=filters, query_type=query), condition)
        return base.filter(self, condition)

    _PRUNING_CLASSES[base] = type(base.__name__, (base,), {
        "filter": filter, "where": filter, _SNAPSHOT: None, "__module__": base.__module__,
        "__doc__": base.__doc__})
    return _PRUNING_CLASSES[base]

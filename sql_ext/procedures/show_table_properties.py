"""``show_table_properties``: the table's ``.hoodie/hoodie.properties`` as key / value rows (sorted by key).

Parameters and columns are Hudi's (``ShowTablePropertiesProcedure``).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import StringType

from hoodpy.inspect.rows import limited
from sql_ext.procedures.base import (
    INTEGER,
    PATH,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
)


class ShowTablePropertiesProcedure(Procedure):
    """The table's hoodie.properties (table config), one row per key."""

    name = "show_table_properties"
    parameters = (
        TABLE, PATH,
        Parameter.optional("limit", INTEGER, 10),
        Parameter.optional("filter", STRING, "", doc="Spark SQL predicate over key and value."),
    )
    output = (("key", StringType()), ("value", StringType()))

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        properties = ctx.table(args).properties
        return limited(sorted(properties.items()), args["limit"])

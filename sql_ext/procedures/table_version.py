"""``upgrade_table`` / ``downgrade_table``: change a table's version between 6 and 8 (Hudi's
``UpgradeOrDowngradeProcedure``, one class behind both names as in Hudi).

Parameters are Hudi's (``table``, ``to_version``: ``SIX`` / ``EIGHT``, or ``6`` / ``8``), with ``path``
appended; output ``result`` (true). Where Hudi logs a failure and returns ``false``, hoodpy raises
:class:`~hoodpy.errors.TableVersionChangeError` naming what it cannot convert, and the table is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import BooleanType

from hoodpy.services.table_service import ServiceContext
from hoodpy.services.table_version import change_table_version, parse_version
from sql_ext.procedures.base import PATH, STRING, TABLE, Args, Parameter, Procedure, ProcedureContext


class UpgradeTableProcedure(Procedure):
    """Upgrade (or downgrade) the table to ``to_version``."""

    name = "upgrade_table"
    parameters = (TABLE, Parameter.required("to_version", STRING, doc="SIX or EIGHT (or 6 / 8)."), PATH)
    output = (("result", BooleanType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        version = parse_version(args["to_version"])  # a bad version fails before the table is opened
        change_table_version(ServiceContext.of(ctx.table(args)), version)
        return [(True,)]


class DowngradeTableProcedure(UpgradeTableProcedure):
    """Downgrade (or upgrade) the table to ``to_version``."""

    name = "downgrade_table"

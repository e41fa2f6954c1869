"""``rollback_to_instant``: undo the latest completed commit (Hudi's ``RollbackToInstantTimeProcedure``).

The instant must be a completed commit of the active timeline and the newest one (hoodpy, like Hudi's
write client, rolls back one commit at a time, newest first); the table's ``rollback_to_instant`` records
a ``rollback`` instant. Output: ``rollback_result`` (true).
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import BooleanType

from sql_ext.procedures.base import PATH, STRING, TABLE, Args, Parameter, Procedure, ProcedureContext


class RollbackToInstantProcedure(Procedure):
    """Roll back the latest completed commit (its files and instant), recording a rollback instant."""

    name = "rollback_to_instant"
    parameters = (TABLE, Parameter.required("instant_time", STRING, doc="The latest completed commit."), PATH)
    output = (("rollback_result", BooleanType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        table = ctx.table(args)
        table.rollback_to_instant(args["instant_time"].strip())  # RollbackError names a wrong instant
        return [(True,)]

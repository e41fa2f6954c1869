"""The savepoint family: ``create_savepoint``, ``show_savepoints``, ``delete_savepoint``,
``rollback_to_savepoint``.

Parameters and output columns are Hudi's; ``path`` is appended. Where Hudi logs a failure and returns
``false``, hoodpy raises :class:`~hoodpy.errors.SavepointError` naming the problem (an unknown instant, a
commit already cleaned), and the table is left as it was.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql.types import BooleanType, StringType

from sql_ext.procedures.base import PATH, STRING, TABLE, Args, Parameter, Procedure, ProcedureContext

_INSTANT = Parameter.required("instant_time", STRING, doc="The savepoint's instant time.")


class CreateSavepointProcedure(Procedure):
    """Savepoint a completed commit (default: the latest): its files are never cleaned."""

    name = "create_savepoint"
    parameters = (
        TABLE,
        Parameter.optional("commit_time", STRING, "", doc="Completed commit to savepoint; '' is the latest."),
        Parameter.optional("user", STRING, ""),
        Parameter.optional("comments", STRING, ""),
        PATH,
    )
    output = (("create_savepoint_result", BooleanType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        ctx.table(args).savepoints.create(args["commit_time"] or None, user=args["user"], comment=args["comments"])
        return [(True,)]


class ShowSavepointsProcedure(Procedure):
    """Savepoint instant times, newest first."""

    name = "show_savepoints"
    parameters = (TABLE, PATH)
    output = (("savepoint_time", StringType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return [(s.instant_time,) for s in reversed(ctx.table(args).savepoints.list())]


class DeleteSavepointProcedure(Procedure):
    """Delete a savepoint; its files become eligible for cleaning."""

    name = "delete_savepoint"
    parameters = (TABLE, _INSTANT, PATH)
    output = (("delete_savepoint_result", BooleanType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        ctx.table(args).savepoints.delete(args["instant_time"])
        return [(True,)]


class RollbackToSavepointProcedure(Procedure):
    """Restore the table to a savepoint: every later write is rolled back (a restore instant)."""

    name = "rollback_to_savepoint"
    parameters = (TABLE, _INSTANT, PATH)
    output = (("rollback_savepoint_result", BooleanType()),)

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        ctx.table(args).savepoints.rollback_to(args["instant_time"])
        return [(True,)]

"""The compaction family: ``run_compaction`` and ``show_compaction`` (Hudi 0.14's names, parameters and output
columns; ``table.compaction`` does the work).

``run_compaction`` follows Hudi's ``RunCompactionProcedure``:

* ``op`` (required): ``schedule``, ``execute`` (pending plans, oldest first, at most ``limit``),
  ``scheduleAndExecute`` (a new plan, or every pending plan when nothing qualifies); ``run`` is the old name
  of ``scheduleAndExecute``;
* ``timestamp`` (a pending compaction instant) or ``instants`` (comma-separated) execute those plans; either
  implies ``execute`` and every instant must be a pending compaction;
* ``options``: ``hoodie.*`` keys as ``'k1=v1,k2=v2'`` (``hoodie.compaction.target.io``, ...).

Both return one row per compaction, newest first: ``timestamp``, ``operation_size`` (file slices in the plan)
and ``state`` (REQUESTED / INFLIGHT / COMPLETED). They refuse copy-on-write tables, which have nothing to
compact.
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodpy.inspect.plans import COMPACTION, compaction_instants, compaction_plans, compaction_row
from hoodpy.inspect.rows import limited
from sql_ext.procedures.base import (
    INTEGER,
    LONG,
    OPTIONAL_TABLE,
    OPTIONS,
    PATH,
    PENDING_LIMIT,
    STRING,
    TABLE,
    Args,
    Parameter,
    Procedure,
    ProcedureContext,
    TableServiceProcedure,
    csv_items,
    spark_output,
)

SCHEDULE, EXECUTE, SCHEDULE_AND_EXECUTE = "schedule", "execute", "scheduleandexecute"
_OPERATIONS = {SCHEDULE: SCHEDULE, EXECUTE: EXECUTE, SCHEDULE_AND_EXECUTE: SCHEDULE_AND_EXECUTE,
               "run": SCHEDULE_AND_EXECUTE}
_OUTPUT = spark_output(COMPACTION)



class RunCompactionProcedure(TableServiceProcedure):
    """Schedule and/or execute compaction of a merge-on-read table; one row per compaction scheduled or run."""

    name = "run_compaction"
    parameters = (
        Parameter.required("op", STRING, doc="schedule, execute, scheduleAndExecute (run: the same)."),
        OPTIONAL_TABLE,
        PATH,
        Parameter.optional("timestamp", LONG, doc="A pending compaction instant to execute."),
        OPTIONS,
        Parameter.optional("instants", STRING, doc="Comma-separated pending compaction instants to execute."),
        PENDING_LIMIT,
    )
    output = _OUTPUT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        op = args["op"].strip().lower()
        if op not in _OPERATIONS:
            self._fail(f"argument 'op' must be schedule, execute, scheduleAndExecute or run, got {args['op']!r}")
        operation = _OPERATIONS[op]
        options = self._options(args)
        instants = args["instants"]
        if args["timestamp"] is not None and instants is None:
            instants, operation = str(args["timestamp"]), EXECUTE
        table = ctx.table(args)
        service = table.compaction  # refuses a copy-on-write table before anything happens
        pending = service.pending_instant_times()
        if instants is not None:
            if operation != EXECUTE:
                self._fail("specific instants only can be used in 'execute' op or not specific op")
            wanted = csv_items(instants)
            missing = [i for i in wanted if i not in pending]
            if missing:
                self._fail(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not a pending compaction "
                           f"of {table.name} (pending compactions: {', '.join(pending) or 'none'}); nothing was run")
            to_run = wanted
        else:
            to_run = pending if args["limit"] is None else limited(pending, args["limit"])
        if operation in (SCHEDULE, SCHEDULE_AND_EXECUTE):
            plan = service.schedule(options)
            if plan is not None:
                to_run = [plan.instant_time]
        if operation in (EXECUTE, SCHEDULE_AND_EXECUTE):
            for instant_time in to_run:
                service.execute(instant_time, options=options)
        return [compaction_row(i, p) for i, p in compaction_instants(table.storage) if i.timestamp in to_run]


class ShowCompactionProcedure(Procedure):
    """Compactions on the active timeline (pending and completed), newest first."""

    name = "show_compaction"
    parameters = (TABLE, PATH, Parameter.optional("limit", INTEGER, 20))
    output = _OUTPUT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        table = ctx.table(args)
        _ = table.compaction  # "Cannot show compaction on a Non Merge On Read table", as Hudi refuses it
        return compaction_plans(table.storage, limit=args["limit"]).rows

"""The clustering family: ``run_clustering`` and ``show_clustering`` (Hudi's released names, parameters and
output columns; ``table.clustering`` does the work).

``run_clustering`` follows Hudi's ``RunClusteringProcedure``:

* partitions: ``predicate`` (a Spark SQL predicate over partition columns only) wins over
  ``selected_partitions`` (comma-separated partition paths); either sets the SELECTED_PARTITIONS filter
  mode, and when nothing matches the call returns no rows and schedules nothing. ``partition_regex_pattern``
  applies when no partitions are given explicitly;
* ``order`` (comma-separated columns, checked against the table schema) and ``order_strategy``
  (linear, z-order, hilbert) set the sort; a sort-columns key in ``options`` (``k=v,k2=v2``) wins;
* ``op``: ``schedule``, ``execute`` (pending plans, oldest first, at most ``limit``) or
  ``scheduleAndExecute`` (the default: a new plan, or all pending plans when nothing qualifies);
  ``instants`` (comma-separated pending plans) implies ``execute``.

Both return one row per clustering instant: ``timestamp``, ``input_group_size`` (plan input groups),
``state`` (REQUESTED / INFLIGHT / COMPLETED) and ``involved_partitions`` (comma-separated when
``show_involved_partition``, else ``*``), newest first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyspark.sql.types import StringType, StructField, StructType
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from hoodpy.config.clustering import ClusteringConfig, SELECTED_PARTITIONS, parse_layout_strategy
from hoodpy.errors import InvalidConfigError
from hoodpy.inspect.plans import CLUSTERING, clustering_plans, clustering_row
from hoodpy.inspect.rows import limited
from hoodpy.services.clustering.service import table_schema
from hoodpy.services.clustering.strategy import validate_sort_columns
from sql_ext.dialect import DIALECT
from sql_ext.procedures.base import (
    BOOLEAN,
    INTEGER,
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

if TYPE_CHECKING:
    from hoodpy.table import HoodieTable

SCHEDULE, EXECUTE, SCHEDULE_AND_EXECUTE = "schedule", "execute", "scheduleandexecute"
_OPERATIONS = {SCHEDULE: SCHEDULE, EXECUTE: EXECUTE, SCHEDULE_AND_EXECUTE: SCHEDULE_AND_EXECUTE}
SHOW_INVOLVED_PARTITION = Parameter.optional("show_involved_partition", BOOLEAN, False,
                                             doc="List each plan's partitions instead of '*'.")
_OUTPUT = spark_output(CLUSTERING)



class RunClusteringProcedure(TableServiceProcedure):
    """Schedule and/or execute clustering (merge small files, sort); one row per plan scheduled or run."""

    name = "run_clustering"
    parameters = (
        OPTIONAL_TABLE,
        PATH,
        Parameter.optional("predicate", STRING, doc="Spark SQL predicate over partition columns."),
        Parameter.optional("order", STRING, doc="Comma-separated sort columns."),
        SHOW_INVOLVED_PARTITION,
        Parameter.optional("op", STRING, doc="schedule, execute or scheduleAndExecute (default)."),
        Parameter.optional("order_strategy", STRING, doc="linear, z-order or hilbert."),
        OPTIONS,
        Parameter.optional("instants", STRING, doc="Comma-separated pending clustering instants to execute."),
        Parameter.optional("selected_partitions", STRING, doc="Comma-separated partition paths."),
        Parameter.optional("partition_regex_pattern", STRING, doc="Regex over partition paths."),
        PENDING_LIMIT,
    )
    output = _OUTPUT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        table = ctx.table(args)
        options = self._options(args)
        op = args["op"]
        if op is not None and op.strip().lower() not in _OPERATIONS:
            self._fail(f"argument 'op' must be schedule, execute or scheduleAndExecute, got {op!r}")
        operation = _OPERATIONS[op.strip().lower()] if op is not None else None

        selected = None
        if args["predicate"] is not None:
            selected = self._partitions_matching(ctx, table, args["predicate"])
        elif args["selected_partitions"] is not None:
            selected = csv_items(args["selected_partitions"])
        if selected is not None and not selected:
            return []  # Hudi: "No partition matched" -- nothing scheduled
        conf: dict[str, str] = {}
        if selected:
            conf[ClusteringConfig.PARTITION_FILTER_MODE.key] = SELECTED_PARTITIONS
            conf[ClusteringConfig.PARTITION_SELECTED.key] = ",".join(selected)
        elif args["partition_regex_pattern"] is not None:
            conf[ClusteringConfig.PARTITION_REGEX_PATTERN.key] = args["partition_regex_pattern"]
        if args["order"] is not None:
            conf[ClusteringConfig.SORT_COLUMNS.key] = ",".join(csv_items(args["order"]))
        if args["order_strategy"] is not None:
            try:
                conf[ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key] = parse_layout_strategy(args["order_strategy"])
            except ValueError as e:
                self._fail(f"argument 'order_strategy' {args['order_strategy']!r}: {e}")
        conf.update(options)  # Hudi: options override what the named arguments set
        self._check_order_columns(table, conf)
        try:
            ClusteringConfig.validate(table.config.with_options(conf))
        except InvalidConfigError as e:
            self._fail(str(e))

        service = table.clustering
        pending = [p.instant_time for p in service.pending()]
        if args["instants"] is not None:
            if operation not in (None, EXECUTE):
                self._fail("specific instants only can be used in 'execute' op or not specific op")
            wanted = csv_items(args["instants"])
            missing = [i for i in wanted if i not in pending]
            if missing:
                self._fail(f"specific clustering instant(s) {', '.join(missing)} do not exist as pending "
                           f"clustering plans (pending: {', '.join(pending) or 'none'})")
            to_run, operation = wanted, EXECUTE
        else:
            operation = operation or SCHEDULE_AND_EXECUTE
            to_run = pending if args["limit"] is None else limited(pending, args["limit"])

        if operation in (SCHEDULE, SCHEDULE_AND_EXECUTE):
            plan = service.schedule(options=conf)
            if plan is not None:
                to_run = [plan.instant_time]
            elif operation == SCHEDULE:
                to_run = []  # Hudi lists the pending plans only when it executes them
        if operation in (EXECUTE, SCHEDULE_AND_EXECUTE):
            for instant_time in to_run:
                service.execute(instant_time, options=conf)
        show = args["show_involved_partition"]
        return [clustering_row(t, state, plan, show) for t, state, plan in service.instants() if t in to_run]

    def _partitions_matching(self, ctx: ProcedureContext, table: HoodieTable, predicate: str) -> list[str]:
        """The table's partition paths whose values satisfy ``predicate`` (partition columns only)."""
        fields = list(table.keygen.partition_fields)
        if not fields:
            self._fail("argument 'predicate' needs a partitioned table (Only partition predicates are allowed)")
        try:
            tree = exp.maybe_parse(predicate, dialect=DIALECT)
        except (ParseError, TokenError) as e:
            self._fail(f"argument 'predicate' does not parse: {str(e).splitlines()[0]}")
        lowered = {f.lower(): f for f in fields}
        others = sorted({c.name for c in tree.find_all(exp.Column) if c.name.lower() not in lowered})
        if others:
            self._fail(f"Only partition predicates are allowed: {', '.join(others)} "
                       f"{'is not a partition column' if len(others) == 1 else 'are not partition columns'} "
                       f"(partition columns: {', '.join(fields)})")
        schema = table.spark_schema()
        types = {f.name: f.dataType for f in schema.fields}
        paths = table.file_system_view().partitions()
        rows = [(p, *[table.keygen.partition_values(p).get(f) for f in fields]) for p in paths]
        raw = StructType([StructField("__path", StringType())] + [StructField(f, StringType()) for f in fields])
        df = ctx.spark.createDataFrame(rows, raw).selectExpr(
            "__path", *[f"CAST(`{f}` AS {types[f].simpleString()}) AS `{f}`" if f in types else f"`{f}`"
                        for f in fields])
        try:
            return sorted(r[0] for r in df.filter(predicate).select("__path").collect())
        except Exception as e:  # pyspark's AnalysisException / ParseException
            self._fail(f"argument 'predicate' is not a valid predicate over the partition columns "
                       f"({', '.join(fields)}): {str(e).splitlines()[0]}")

    def _check_order_columns(self, table: HoodieTable, conf: dict[str, str]) -> None:
        columns = csv_items(conf.get(ClusteringConfig.SORT_COLUMNS.key))
        if not columns:
            return
        schema = table_schema(table.storage, table.timeline)
        if schema is None:
            return  # an empty table: nothing will be planned
        layout = parse_layout_strategy(conf.get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY.key)
                                       or table.config.get(ClusteringConfig.LAYOUT_OPTIMIZE_STRATEGY))
        try:
            validate_sort_columns(columns, schema, layout)
        except InvalidConfigError as e:
            self._fail(f"argument 'order': {e.args[0] if e.args else e}")


class ShowClusteringProcedure(Procedure):
    """Clustering plans on the active timeline (pending and completed), newest first."""

    name = "show_clustering"
    parameters = (TABLE, PATH, Parameter.optional("limit", INTEGER, 20), SHOW_INVOLVED_PARTITION)
    output = _OUTPUT

    def call(self, ctx: ProcedureContext, args: Args) -> Iterable[tuple]:
        return clustering_plans(ctx.table(args).storage, show_partitions=args["show_involved_partition"],
                                limit=args["limit"]).rows

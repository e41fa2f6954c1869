"""DML on hoodpy tables, computed as DataFrames and written by the engine in one commit each.

* ``INSERT INTO t [PARTITION (p = v)] [(cols)] [BY NAME] <query>``: the query's columns map onto the
  table's data columns by position (or by the column list / name); static partition values fill their
  columns; ``_hoodie_*`` columns in the query are dropped (as Hudi does); values are cast to the table's
  types. The operation is ``hoodie.spark.sql.insert.into.operation`` (default **upsert** in hoodpy, so
  INSERT INTO is idempotent by key; with an ordering field, a row older than the stored one is ignored),
  else the deprecated ``hoodie.sql.insert.mode``; an explicit ``hoodie.datasource.write.operation`` wins.
* ``INSERT OVERWRITE``: on a partitioned table, a static ``PARTITION (p = v)`` spec, or DYNAMIC mode
  (``hoodie.datasource.overwrite.mode``, else ``spark.sql.sources.partitionOverwriteMode``), replaces
  just the partitions in the batch (``insert_overwrite``); otherwise (STATIC, Spark's default, or a
  non-partitioned table) the whole table is replaced (``insert_overwrite_table``).
* ``DELETE FROM t [WHERE c]``: the matching rows' keys, deleted (no commit when nothing matches).
* A table created without ``primaryKey`` has generated record keys: INSERT INTO inserts (an upsert operation
  becomes insert: new rows have no key to match), UPDATE and DELETE locate the rows by their stored
  ``_hoodie_record_key``, as Hudi 0.14+ does; so does MERGE INTO, whose ON condition may then be any
  condition: matched rows keep their stored keys, inserted rows get new keys in the same commit (HUDI-6464).
* ``UPDATE t SET a = e, ... [WHERE c]``: the matching rows with the assignments, upserted with
  COMMIT_TIME_ORDERING (an explicit UPDATE wins even if it lowers the ordering field). Record key and
  partition columns cannot be updated.
* ``MERGE INTO t USING s ON <cond> WHEN MATCHED [AND c] THEN UPDATE SET * | SET a = e, ... | DELETE
  WHEN NOT MATCHED [AND c] THEN INSERT * | (cols) VALUES (...)``: the ON condition must equate every record
  key column of ``t`` (a table with record key columns); clauses apply first-match-wins per source row; the
  outcome is one upsert carrying ``_hoodie_is_deleted`` for the deleted rows. Matched updates follow the
  table's merge mode (with an ordering field, an update carrying a smaller ordering value than the stored row
  is ignored, as in Hudi).
  ``WHEN NOT MATCHED BY SOURCE`` is not supported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql.types import StructField
from sqlglot import exp

from hoodpy.config import HoodieConfig
from hoodpy.config.sql import SqlConfig
from hoodpy.config.write import COMMIT_TIME_ORDERING, WriteConfig
from hoodpy.meta_fields import META_COLUMNS, RECORD_KEY
from hoodpy.schema import IS_DELETED_COLUMN
from sql_ext.call import NotALiteral, constant
from sql_ext.catalog import CatalogTable, quote_identifier
from sql_ext.ddl import empty_result, session_options, write
from sql_ext.dialect import DIALECT
from hoodpy.errors import InvalidStatementError, UnsupportedStatementError
from sql_ext.rewrite import render
from hoodpy.write.operation import WriteOperation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sql_ext.session import SqlLayer
    from hoodpy.table import HoodieTable

TARGET_KEY = "__hoodpy_target"
SOURCE_KEY = "__hoodpy_source"
MATCHED_COLUMN = "__hoodpy_matched"
CLAUSE_COLUMN = "__hoodpy_clause"


def target_table(tree: exp.Expr) -> exp.Table | None:
    """The table a DML statement writes."""
    node = tree.this
    if isinstance(node, exp.Schema):
        node = node.this
    return node if isinstance(node, exp.Table) else None


def execute(layer: SqlLayer, tree: exp.Expr, entry: CatalogTable, text: str) -> DataFrame:
    if isinstance(tree, exp.Insert):
        return insert(layer, tree, entry, text)
    if isinstance(tree, exp.Delete):
        return delete(layer, tree, entry, text)
    if isinstance(tree, exp.Update):
        return update(layer, tree, entry, text)
    return merge(layer, tree, entry, text)


def data_fields(table: HoodieTable) -> list[StructField]:
    """The table's columns without the meta columns: what a statement's rows are aligned to."""
    return [f for f in table.spark_schema().fields if f.name not in META_COLUMNS]


def _field(fields: Sequence[StructField], name: str, table: CatalogTable) -> StructField:
    for f in fields:
        if f.name.lower() == name.lower():
            return f
    raise InvalidStatementError(f"Column {name!r} is not a column of {table.name} "
                                f"({', '.join(f.name for f in fields)})")


def _options(layer: SqlLayer, entry: CatalogTable) -> HoodieConfig:
    return HoodieConfig.of(session_options(layer.spark), entry.write_options())


def _sql(node: exp.Expr) -> str:
    return render(node)


def _qualified(alias: str, column: str) -> str:
    return f"{quote_identifier(alias)}.{quote_identifier(column)}"


# -- INSERT -------------------------------------------------------------------------------------------
def insert(layer: SqlLayer, tree: exp.Insert, entry: CatalogTable, text: str) -> DataFrame:
    table = entry.open(layer.spark)
    fields = data_fields(table)
    target = target_table(tree)
    listed = [c.name for c in tree.this.expressions] if isinstance(tree.this, exp.Schema) else None
    static: dict[str, Any] = {}
    partition_spec = target.args.get("partition")
    for item in (partition_spec.expressions if partition_spec is not None else []):
        if isinstance(item, exp.EQ):
            try:
                static[_field(fields, item.this.name, entry).name] = constant(item.expression)
            except NotALiteral as e:
                raise InvalidStatementError(f"INSERT INTO {entry.name}: a static PARTITION value must be a "
                                            f"literal, got {e}") from None
    if tree.expression is None:
        raise UnsupportedStatementError(text, "INSERT without a query")
    source = layer.read_sql(tree.expression)
    source = source.drop(*[c for c in source.columns if c in META_COLUMNS])
    batch = align_insert(source, fields, entry, listed=listed, static=static,
                         by_name=bool(tree.args.get("by_name")))
    config = _options(layer, entry)
    if tree.args.get("overwrite"):
        mode = config.get(SqlConfig.OVERWRITE_MODE) or str(
            layer.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "STATIC")).upper()
        dynamic = bool(table.keygen.partition_fields) and (bool(static) or mode == "DYNAMIC")
        operation = WriteOperation.INSERT_OVERWRITE if dynamic else WriteOperation.INSERT_OVERWRITE_TABLE
    else:
        operation = insert_operation(config)
        if operation == WriteOperation.UPSERT and table.keygen.auto_keys:
            # Generated keys: every inserted row is a new record, there is no key to upsert by (as Hudi
            # inserts into a table without a primary key).
            operation = WriteOperation.INSERT
    write(layer, entry, batch, operation)
    return empty_result(layer.spark)


def insert_operation(config: HoodieConfig) -> WriteOperation:
    if config.is_set(WriteConfig.OPERATION):
        op = config.get(WriteConfig.OPERATION)
        if op in ("insert", "upsert", "bulk_insert"):
            return WriteOperation(op)
    if not config.is_set(SqlConfig.INSERT_INTO_OPERATION) and config.is_set(SqlConfig.INSERT_MODE):
        return WriteOperation.UPSERT if config.get(SqlConfig.INSERT_MODE) == "upsert" else WriteOperation.INSERT
    return WriteOperation(config.get(SqlConfig.INSERT_INTO_OPERATION))


def align_insert(source: DataFrame, fields: Sequence[StructField], entry: CatalogTable, *,
                 listed: list[str] | None, static: dict[str, Any], by_name: bool) -> DataFrame:
    """The query's rows as the table's data columns (cast to the table's types)."""
    names = [f.name for f in fields]
    if listed is not None:
        targets = [_field(fields, c, entry).name for c in listed]
        clash = [c for c in targets if c in static]
        if clash:
            raise InvalidStatementError(f"Column(s) {', '.join(clash)} are both in the column list and in the "
                                        "static PARTITION spec")
        twice = [c for c in dict.fromkeys(targets) if targets.count(c) > 1]
        if twice:
            raise InvalidStatementError(f"INSERT INTO {entry.name}: column(s) {', '.join(twice)} are listed twice")
    else:
        targets = [n for n in names if n not in static]
    if by_name:
        unknown = [c for c in source.columns if c.lower() not in {n.lower() for n in targets}]
        if unknown:
            raise InvalidStatementError(f"INSERT INTO {entry.name} BY NAME: the query's column(s) "
                                        f"{', '.join(unknown)} are not columns of the table")
    else:
        if len(source.columns) != len(targets):
            raise InvalidStatementError(
                f"INSERT INTO {entry.name}: the query has {len(source.columns)} column(s) but "
                f"{len(targets)} are expected ({', '.join(targets)})")
        source = source.toDF(*targets)  # by position: the query's columns take the target names
    for name, value in static.items():
        source = source.withColumn(name, F.lit(value))
    return align_by_name(source, fields)


def align_by_name(batch: DataFrame, fields: Sequence[StructField], *, cast: bool = True,
                  keep_extra: bool = False) -> DataFrame:
    """``batch`` as the table columns ``fields``, matched by name ignoring case: in table order, typed nulls
    for the columns it lacks.

    Args:
        cast: values take the table's types (INSERT); off, a batch's wider type reaches the write, which
            widens the table (Hudi's promotion).
        keep_extra: the batch's other columns follow the table's (new columns for the write to add);
            else they are dropped.
    """
    have = {c.lower(): c for c in batch.columns}
    out = []
    for f in fields:
        name = have.get(f.name.lower())
        if name is None:
            out.append(F.lit(None).cast(f.dataType).alias(f.name))
        else:
            column = F.col(quote_identifier(name))
            out.append((column.cast(f.dataType) if cast else column).alias(f.name))
    if keep_extra:
        known = {f.name.lower() for f in fields}
        out += [F.col(quote_identifier(c)) for c in batch.columns if c.lower() not in known]
    return batch.select(*out)


# -- DELETE / UPDATE --------------------------------------------------------------------------------
def _target_frame(layer: SqlLayer, entry: CatalogTable) -> tuple[HoodieTable, DataFrame]:
    table = entry.open(layer.spark)
    return table, table.read()


def _stored_key(table: HoodieTable) -> list[str]:
    """The meta key column UPDATE and DELETE carry to the write on a table with generated keys (the key
    locates the stored row, as Hudi's Spark SQL does on a table without a primary key); none otherwise."""
    return [RECORD_KEY] if table.keygen.auto_keys else []


def _where(tree: exp.Expr, layer: SqlLayer) -> tuple[str, dict[str, DataFrame]]:
    where = tree.args.get("where")
    if where is None:
        return "", {}
    refs = layer.reads.find(where.this)
    return f" WHERE {_sql(where.this)}", layer.reads.frames(refs)


def delete(layer: SqlLayer, tree: exp.Delete, entry: CatalogTable, text: str) -> DataFrame:
    if tree.args.get("using"):
        raise UnsupportedStatementError(text, "DELETE ... USING on a hoodpy table; use MERGE INTO ... THEN DELETE")
    table, snapshot = _target_frame(layer, entry)
    alias = tree.this.alias_or_name
    where, frames = _where(tree, layer)
    keys = [*table.keygen.record_key_fields, *_stored_key(table), *table.keygen.partition_fields]
    rows = layer.passthrough_sql(
        f"SELECT {', '.join(_qualified(alias, k) for k in keys)} FROM {{{TARGET_KEY}}} AS "
        f"{quote_identifier(alias)}{where}", **{TARGET_KEY: snapshot, **frames})
    if not rows.isEmpty():
        write(layer, entry, rows, WriteOperation.DELETE)
    return empty_result(layer.spark)


def _assignments(assignments: Sequence[exp.Expr], fields: Sequence[StructField], table: HoodieTable,
                 entry: CatalogTable, what: str) -> dict[str, exp.Expr]:
    protected = {f.lower() for f in (*table.keygen.record_key_fields, *table.keygen.partition_fields)}
    out: dict[str, exp.Expr] = {}
    for a in assignments:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise InvalidStatementError(f"{what}: expected column = expression, got {a.sql(dialect=DIALECT)}")
        name = _field(fields, a.this.name, entry).name
        if name.lower() in protected:
            raise InvalidStatementError(
                f"{what}: column {name!r} of {entry.name} is a record key or partition column and cannot be "
                "updated (delete the row and insert it anew)")
        if name in out:
            raise InvalidStatementError(f"{what}: column {name!r} is assigned twice")
        out[name] = a.expression
    return out


def update(layer: SqlLayer, tree: exp.Update, entry: CatalogTable, text: str) -> DataFrame:
    if tree.args.get("from_") or tree.args.get("from"):
        raise UnsupportedStatementError(text, "UPDATE ... FROM on a hoodpy table; use MERGE INTO")
    table, snapshot = _target_frame(layer, entry)
    fields = data_fields(table)
    alias = tree.this.alias_or_name
    assigned = _assignments(tree.expressions, fields, table, entry, f"UPDATE {entry.name}")
    refs = [r for node in assigned.values() for r in layer.reads.find(node)]
    frames = layer.reads.frames(refs)
    projection = ", ".join([*(_qualified(alias, k) for k in _stored_key(table)), *(
        (f"{_sql(assigned[f.name])} AS {quote_identifier(f.name)}" if f.name in assigned
         else _qualified(alias, f.name)) for f in fields)])
    where, where_frames = _where(tree, layer)
    rows = layer.passthrough_sql(
        f"SELECT {projection} FROM {{{TARGET_KEY}}} AS {quote_identifier(alias)}{where}",
        **{TARGET_KEY: snapshot, **frames, **where_frames})
    rows = rows.select(*_stored_key(table),
                       *[F.col(quote_identifier(f.name)).cast(f.dataType).alias(f.name) for f in fields])
    if not rows.isEmpty():
        write(layer, entry, rows, WriteOperation.UPSERT,
              {WriteConfig.RECORD_MERGE_MODE.key: COMMIT_TIME_ORDERING})
    return empty_result(layer.spark)


# -- MERGE --------------------------------------------------------------------------------------------
def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    return [node]


def _check_on_keys(on: exp.Expr, target_alias: str, keys: Sequence[str], entry: CatalogTable) -> None:
    equated = set()
    for c in _conjuncts(on):
        if not isinstance(c, exp.EQ):
            continue
        for side in (c.this, c.expression):
            if isinstance(side, exp.Column) and (not side.table or side.table.lower() == target_alias.lower()):
                equated.add(side.name.lower())
    missing = [k for k in keys if k.lower() not in equated]
    if missing:
        raise InvalidStatementError(
            f"MERGE INTO {entry.name}: the ON condition must equate the record key column(s) "
            f"{', '.join(keys)} of the target (e.g. {target_alias}.{keys[0]} = s.{keys[0]}); "
            f"missing {', '.join(missing)}")


def merge(layer: SqlLayer, tree: exp.Merge, entry: CatalogTable, text: str) -> DataFrame:
    table, snapshot = _target_frame(layer, entry)
    fields = data_fields(table)
    t_alias = tree.this.alias_or_name
    using = tree.args["using"]
    if isinstance(using, exp.Table):
        s_alias = using.alias_or_name
        relation = using.copy()
        relation.set("alias", None)
        source = layer.read_sql(relation, select_from=True)
    elif isinstance(using, exp.Subquery):
        s_alias = using.alias_or_name
        if not s_alias:
            raise InvalidStatementError("MERGE INTO ... USING (subquery) needs an alias for the subquery")
        source = layer.read_sql(using.this)
    else:
        raise UnsupportedStatementError(text, f"MERGE source {using.sql(dialect=DIALECT)}")
    if t_alias.lower() == s_alias.lower():
        raise InvalidStatementError(f"MERGE INTO {entry.name}: give the target and the source different aliases")
    source_columns = {c.lower(): c for c in source.columns}
    if not table.keygen.auto_keys:  # generated keys: any condition (the rows it matches keep their keys)
        _check_on_keys(tree.args["on"], t_alias, table.keygen.record_key_fields, entry)
    stored_key = _stored_key(table)

    matched = _matched(t_alias)
    clause_conditions, clause_values, deletes = [], [], []
    whens = tree.args["whens"].expressions
    refs = []
    for when in whens:
        if when.args.get("source"):
            raise UnsupportedStatementError(text, "WHEN NOT MATCHED BY SOURCE on a hoodpy table")
        cond = matched if when.args.get("matched") else f"NOT ({matched})"
        if when.args.get("condition") is not None:
            refs += layer.reads.find(when.args["condition"])
            cond = f"{cond} AND ({_sql(when.args['condition'])})"
        then = when.args["then"]
        values: dict[str, str] = {}
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            if not when.args.get("matched"):
                raise InvalidStatementError("MERGE: DELETE is only allowed in WHEN MATCHED clauses")
            values = {f.name: _qualified(t_alias, f.name) for f in fields}
            deletes.append(len(clause_conditions))
        elif isinstance(then, exp.Update):
            if not when.args.get("matched"):
                raise InvalidStatementError("MERGE: UPDATE is only allowed in WHEN MATCHED clauses")
            if len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star):
                # keys come from the target (they are equal by the ON condition)
                protected = {k.lower() for k in (*table.keygen.record_key_fields, *table.keygen.partition_fields)}
                values = _updated([f.name for f in fields], t_alias, {
                    f.name: _qualified(s_alias, source_columns[f.name.lower()]) for f in fields
                    if f.name.lower() in source_columns and f.name.lower() not in protected})
            else:
                assigned = _assignments(then.expressions, fields, table, entry, f"MERGE INTO {entry.name}")
                for node in assigned.values():
                    refs += layer.reads.find(node)
                values = _updated([f.name for f in fields], t_alias,
                                  {name: _sql(node) for name, node in assigned.items()})
        elif isinstance(then, exp.Insert):
            if when.args.get("matched"):
                raise InvalidStatementError("MERGE: INSERT is only allowed in WHEN NOT MATCHED clauses")
            if isinstance(then.this, exp.Star):
                values = {f.name: _qualified(s_alias, source_columns[f.name.lower()])
                          if f.name.lower() in source_columns else "NULL" for f in fields}
            else:
                cols = [_field(fields, c.name, entry).name for c in then.this.expressions]
                vals = list(then.expression.expressions) if then.expression is not None else []
                if len(cols) != len(vals):
                    raise InvalidStatementError(f"MERGE INSERT lists {len(cols)} column(s) but {len(vals)} value(s)")
                for node in vals:
                    refs += layer.reads.find(node)
                given = dict(zip(cols, vals, strict=True))
                values = {f.name: _sql(given[f.name]) if f.name in given else "NULL" for f in fields}
        else:
            raise UnsupportedStatementError(text, f"MERGE action {then.sql(dialect=DIALECT)}")
        # Generated keys: a matched row keeps its stored key, an inserted one gets a new key in the write
        values.update({k: _qualified(t_alias, k) if when.args.get("matched") else "CAST(NULL AS STRING)"
                       for k in stored_key})
        clause_conditions.append(cond)
        clause_values.append(values)

    refs += layer.reads.find(tree.args["on"])
    outcome = merge_rows(layer.passthrough_sql, source, snapshot, source_alias=s_alias, target_alias=t_alias,
                         on=_sql(tree.args["on"]), clauses=list(zip(clause_conditions, clause_values)),
                         frames=layer.reads.frames(refs))
    outcome = outcome.select(
        *stored_key, *[F.col(quote_identifier(f.name)).cast(f.dataType).alias(f.name) for f in fields],
        F.col(CLAUSE_COLUMN).isin(deletes).alias(IS_DELETED_COLUMN) if deletes
        else F.lit(False).alias(IS_DELETED_COLUMN),
    )
    if not outcome.isEmpty():
        write(layer, entry, outcome, WriteOperation.UPSERT)
    return empty_result(layer.spark)


def _matched(target_alias: str) -> str:
    """The condition of a WHEN MATCHED clause in :func:`merge_rows`: the target row exists."""
    return f"{_qualified(target_alias, MATCHED_COLUMN)} IS NOT NULL"


def _updated(names: Sequence[str], target_alias: str, assigned: Mapping[str, str]) -> dict[str, str]:
    """WHEN MATCHED THEN UPDATE SET: the ``assigned`` columns take their expressions, every other column keeps
    the target row's value."""
    return {n: assigned[n] if n in assigned else _qualified(target_alias, n) for n in names}


def merge_rows(sql: Callable[..., DataFrame], source: DataFrame, target: DataFrame, *, source_alias: str,
               target_alias: str, on: str, clauses: Sequence[tuple[str, Mapping[str, str]]],
               frames: Mapping[str, DataFrame] | None = None) -> DataFrame:
    """The rows a MERGE writes: each row of ``source`` LEFT JOIN ``target`` ON ``on`` takes the values of the
    first clause whose condition holds; rows that no clause takes are left out.

    Args:
        sql: runs a query with ``{name}`` DataFrame arguments (the session's own ``spark.sql``).
        clauses: (condition, column -> SQL expression) per WHEN clause; ``_matched(target_alias)`` tells
            whether the target row exists. Every clause names the same columns: the result's, in order,
            followed by ``CLAUSE_COLUMN`` (the index of the clause taken).
        frames: DataFrames that ``on`` and the clauses reference by ``{name}``.
    """
    conditions = [c for c, _ in clauses]

    def case(column: str) -> str:
        branches = " ".join(f"WHEN {c} THEN {values[column]}" for c, values in clauses)
        return f"CASE {branches} END"

    columns = [f"{case(n)} AS {quote_identifier(n)}" for n in clauses[0][1]]
    clause = f"CASE {' '.join(f'WHEN {c} THEN {i}' for i, c in enumerate(conditions))} ELSE -1 END"
    query = (
        f"SELECT {', '.join(columns)}, {clause} AS {CLAUSE_COLUMN} "
        f"FROM {{{SOURCE_KEY}}} AS {quote_identifier(source_alias)} "
        f"LEFT JOIN (SELECT *, true AS {MATCHED_COLUMN} FROM {{{TARGET_KEY}}}) AS {quote_identifier(target_alias)} "
        f"ON {on}"
    )
    rows = sql(query, **{SOURCE_KEY: source, TARGET_KEY: target, **(frames or {})})
    return rows.filter(F.col(CLAUSE_COLUMN) >= 0)


def partial_update(spark: SparkSession, batch: DataFrame, target: DataFrame, keys: Sequence[str],
                   update_columns: Iterable[str]) -> DataFrame:
    """``MERGE INTO target USING batch ON <keys equal> WHEN MATCHED THEN UPDATE SET <update_columns> WHEN NOT
    MATCHED THEN INSERT *``, as the rows to upsert (dbt's merge_update_columns): a batch row whose key is in
    ``target`` takes the target's values for its other columns.

    Unlike the statement, the rows keep the batch's columns and types (new columns, a widened type,
    ``_hoodie_is_deleted``, which is always taken from the batch) for the write to evolve the table by;
    columns the target lacks come from the batch. Columns match ignoring case.
    """
    s_alias, t_alias = "__hoodpy_batch", "__hoodpy_stored"
    stored = {c.lower(): c for c in target.columns}
    given = {c.lower(): c for c in batch.columns}
    taken = {c.lower() for c in (*update_columns, *keys, IS_DELETED_COLUMN)}
    inserted = {c: _qualified(s_alias, c) for c in batch.columns}
    updated = _updated(batch.columns, t_alias, {c: v for c, v in inserted.items()
                                                 if c.lower() in taken or c.lower() not in stored})
    on = " AND ".join(f"{_qualified(t_alias, stored[k.lower()])} = {_qualified(s_alias, given[k.lower()])}"
                      for k in keys)
    matched = _matched(t_alias)
    rows = merge_rows(spark.sql, batch, target, source_alias=s_alias, target_alias=t_alias, on=on,
                      clauses=[(matched, updated), (f"NOT ({matched})", inserted)])
    return rows.drop(CLAUSE_COLUMN)

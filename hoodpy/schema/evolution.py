"""How a table schema evolves when a batch is written: Hudi 0.14's default rules and Avro's type promotions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa

from hoodpy.errors import SchemaEvolutionError
from hoodpy.schema.normal_form import LIST_ITEM, data_fields, normal_fields

# Avro's type promotions (reader may be wider than writer), restricted to what Spark can hold: Hudi's rules for
# a column whose type changes. Public so that callers deciding ahead of a write (dbt's on_schema_change) agree.
TYPE_PROMOTIONS: dict[pa.DataType, frozenset[pa.DataType]] = {
    pa.int32(): frozenset({pa.int64(), pa.float32(), pa.float64()}),
    pa.int64(): frozenset({pa.float32(), pa.float64()}),
    pa.float32(): frozenset({pa.float64()}),
}


def promotes(narrow: pa.DataType, wide: pa.DataType) -> bool:
    """Whether every value of ``narrow`` can be read as ``wide`` (both in normal form, different).

    Example:
        >>> promotes(pa.int32(), pa.int64()), promotes(pa.int64(), pa.int32())
        (True, False)
    """
    if pa.types.is_decimal(narrow) and pa.types.is_decimal(wide):
        return wide.precision - wide.scale >= narrow.precision - narrow.scale and wide.scale >= narrow.scale
    return wide in TYPE_PROMOTIONS.get(narrow, frozenset())


class _Evolver:
    def __init__(self, allow_missing: Iterable[str], fixed_type: dict[str, str]):
        self.allow_missing = frozenset(allow_missing)
        # path -> role ("record key", "partition") of columns whose type may not change at all
        self.fixed_type = fixed_type
        self.problems: list[str] = []

    def fields(self, table: Sequence[pa.Field], batch: Sequence[pa.Field], prefix: str) -> list[pa.Field]:
        """Table fields in table order (evolved), then the batch's new fields appended."""
        by_name = {f.name: f for f in batch}
        out = []
        for tf in table:
            path = prefix + tf.name
            bf = by_name.get(tf.name)
            if bf is None:
                # Key and partition fields are reported by evolve_schema with their role.
                if path not in self.allow_missing and path not in self.fixed_type:
                    self.problems.append(
                        f"column '{path}' ({tf.type}) is in the table but not in the batch; dropping "
                        "columns is not allowed "
                        "(hoodie.datasource.write.schema.allow.auto.evolution.column.drop=false)"
                    )
                out.append(tf)
                continue
            role = self.fixed_type.get(path)
            if role is not None and tf.type != bf.type:
                self.problems.append(
                    f"{role} field '{path}' cannot change type from {tf.type} (table) to {bf.type} (batch)"
                )
                out.append(tf)
                continue
            out.append(pa.field(tf.name, self.type(tf.type, bf.type, path)))
        known = {f.name for f in table}
        out.extend(f for f in batch if f.name not in known)
        return out

    def type(self, table: pa.DataType, batch: pa.DataType, path: str) -> pa.DataType:
        if table == batch:
            return table
        if pa.types.is_struct(table) and pa.types.is_struct(batch):
            tf = [table.field(i) for i in range(table.num_fields)]
            bf = [batch.field(i) for i in range(batch.num_fields)]
            return pa.struct(self.fields(tf, bf, f"{path}."))
        if pa.types.is_list(table) and pa.types.is_list(batch):
            item = self.type(table.value_type, batch.value_type, f"{path}.{LIST_ITEM}")
            return pa.list_(pa.field(LIST_ITEM, item))
        if pa.types.is_map(table) and pa.types.is_map(batch):
            return pa.map_(pa.string(), self.type(table.item_type, batch.item_type, f"{path}.value"))
        if promotes(batch, table):
            return table  # the batch is cast up to the table's type
        if promotes(table, batch):
            return batch  # the table widens; old files still read through Avro promotion
        self.problems.append(f"column '{path}' cannot change type from {table} (table) to {batch} (batch)")
        return table


def _lookup(fields: Sequence[pa.Field], path: str) -> pa.Field | None:
    """A field by dotted path through structs (ComplexKeyGenerator allows nested key fields)."""
    head, _, rest = path.partition(".")
    for f in fields:
        if f.name == head:
            if not rest:
                return f
            if pa.types.is_struct(f.type):
                return _lookup([f.type.field(i) for i in range(f.type.num_fields)], rest)
            return None
    # A top-level column may itself contain a dot.
    for f in fields:
        if f.name == path:
            return f
    return None


def evolve_schema(
    table: pa.Schema | None,
    batch: pa.Schema,
    *,
    key_fields: Sequence[str],
    partition_fields: Sequence[str] = (),
    allow_missing: Sequence[str] = (),
) -> pa.Schema:
    """The table's data schema after writing ``batch``, by Hudi 0.14's default evolution rules.

    - New batch columns (also inside structs) are appended at the end.
    - A table column missing from the batch is an error unless its (dotted) path is in ``allow_missing``;
      then it is kept. Columns are never dropped.
    - Types may differ only by Avro promotion (int -> long/float/double, long -> float/double, float ->
      double, decimal(p, s) -> decimal(p2, s2) with p2-s2 >= p-s and s2 >= s); the result has the wider
      type, whichever side it is on. Structs, list elements and map values evolve recursively.
    - Record key and partition fields must be in the batch (unless in ``allow_missing``) and keep their type.

    The result is in normal form (see :func:`normalize_arrow_schema`): meta columns and
    ``_hoodie_is_deleted`` dropped, all fields nullable. Cast the batch to it before writing.

    Args:
        table: the table's current data schema, or ``None`` for a new table.
        batch: the incoming batch's schema.
        key_fields: record key fields (``hoodie.table.recordkey.fields``).
        partition_fields: partition path fields.
        allow_missing: column paths (``a`` or ``s.inner``) the batch may leave out.

    Raises:
        SchemaEvolutionError: every problem found, each naming the column (and both types for a type change).

    Example:
        >>> evolve_schema(pa.schema([("id", pa.int32()), ("v", pa.int32())]),
        ...               pa.schema([("id", pa.int32()), ("v", pa.int64()), ("w", pa.string())]),
        ...               key_fields=["id"])
        id: int32
        v: int64
        w: string
    """
    problems: list[str] = []
    batch_fields = normal_fields(data_fields(batch), "", problems) or []
    table_fields = None if table is None else (normal_fields(data_fields(table), "", problems) or [])
    if problems:
        raise SchemaEvolutionError(problems)

    roles = {name: "partition" for name in partition_fields}
    roles.update({name: "record key" for name in key_fields})
    if table_fields is None:
        result = batch_fields
    else:
        evolver = _Evolver(allow_missing, roles)
        result = evolver.fields(table_fields, batch_fields, "")
        problems.extend(evolver.problems)

    for name, role in roles.items():
        if _lookup(batch_fields, name) is None and name not in allow_missing:
            problems.append(f"{role} field '{name}' is missing from the batch")
        if table_fields is not None and _lookup(table_fields, name) is None:
            problems.append(f"{role} field '{name}' is not a column of the table")
    if problems:
        raise SchemaEvolutionError(_dedupe(problems))
    return pa.schema(result)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))

"""Record keys made in the write task from the key fields' Arrow columns, instead of in the JVM.

A bulk_insert moves every row from the JVM to a Python worker as Arrow. A key the JVM builds (``concat_ws`` of
``name:value`` strings for a composite key, :func:`hoodpy.write.records.record_key_column`) is one more string
per row built there and moved; the worker builds the same strings from the key fields it receives anyway, with
Arrow kernels. Only for key fields whose Arrow cast to string prints what Spark's cast does (integers,
strings, booleans), top-level, and keys the key generator makes from the fields (not generated ones).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.keygen import EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER, KeyGenerator


def _prints_as_spark(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t) or pa.types.is_boolean(t)


def keys_in_task(keygen: KeyGenerator, schema: pa.Schema) -> bool:
    """Whether :func:`record_keys` makes ``keygen``'s keys over rows of ``schema`` as Spark would."""
    fields = keygen.record_key_fields
    return (not keygen.auto_keys and bool(fields)
            and all("." not in f and "`" not in f and f in schema.names and _prints_as_spark(schema.field(f).type)
                    for f in fields))


def record_keys(keygen: KeyGenerator, rows: pa.Table) -> tuple[pa.Array, pa.Array]:
    """(record key, is-invalid) per row, as :func:`hoodpy.write.records.record_key_column` computes them: a
    simple key is its field as a string (invalid when null or empty); a composite key is ``name:value`` per
    field joined by commas, null and empty values as Hudi's placeholders (invalid when every field is)."""
    parts = [pc.cast(rows.column(f).combine_chunks(), pa.string()) for f in keygen.record_key_fields]
    # Per part, which values are null or empty; None when none is (no null, and a type that never prints
    # empty), so a table of non-null integer keys costs no mask and no placeholder pass.
    blank = [_blank(rows.schema.field(f).type, p) for f, p in zip(keygen.record_key_fields, parts, strict=True)]
    if not keygen.composite_record_key:
        return parts[0], _mask_or_false(blank[0], len(parts[0]))
    pieces: list[pa.Array | str] = []
    for i, (name, p, b) in enumerate(zip(keygen.record_key_fields, parts, blank, strict=True)):
        if b is not None:
            p = pc.if_else(pc.is_null(p), NULL_RECORDKEY_PLACEHOLDER,
                           pc.if_else(pc.equal(pc.fill_null(p, ""), ""), EMPTY_RECORDKEY_PLACEHOLDER, p))
        pieces += [f"{',' if i else ''}{name}:", p]
    # One join builds every key (the separator is empty: the literal pieces carry the commas and names).
    keys = pc.binary_join_element_wise(*pieces, "")
    if any(b is None for b in blank):  # a field that is never blank: no key is all blank
        return keys, _mask_or_false(None, len(keys))
    invalid = blank[0]
    for b in blank[1:]:
        invalid = pc.and_(invalid, b)
    return keys, invalid


def _blank(field_type: pa.DataType, printed: pa.Array) -> pa.Array | None:
    """Whether each value is null or prints empty; None when no value is."""
    can_be_empty = pa.types.is_string(field_type) or pa.types.is_large_string(field_type)
    if not printed.null_count and not can_be_empty:
        return None
    return pc.fill_null(pc.or_kleene(pc.is_null(printed), pc.equal(printed, "")), True)


def _mask_or_false(mask: pa.Array | None, n: int) -> pa.Array:
    return mask if mask is not None else pa.repeat(pa.scalar(False), n)

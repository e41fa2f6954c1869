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
    blank = [pc.or_kleene(pc.is_null(p), pc.equal(p, "")) for p in parts]
    blank = [pc.fill_null(b, True) for b in blank]
    if not keygen.composite_record_key:
        return parts[0], blank[0]
    encoded = []
    for name, p in zip(keygen.record_key_fields, parts, strict=True):
        value = pc.if_else(pc.is_null(p), NULL_RECORDKEY_PLACEHOLDER,
                           pc.if_else(pc.equal(pc.fill_null(p, ""), ""), EMPTY_RECORDKEY_PLACEHOLDER, p))
        encoded.append(pc.binary_join_element_wise(f"{name}:", value, ""))
    invalid = blank[0]
    for b in blank[1:]:
        invalid = pc.and_(invalid, b)
    return pc.binary_join_element_wise(*encoded, ","), invalid

"""The record keys of a stored base file's rows: its ``_hoodie_record_key`` column, or, for a table with
virtual keys (no meta fields), the keys the key generator computes from the key fields, as Hudi's readers do.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from hoodpy.keygen import KeyGenerator
from hoodpy.meta_fields import RECORD_KEY


def stored_record_keys(pf: pq.ParquetFile, virtual: KeyGenerator | None) -> pa.Array:
    """Keys in file order; ``virtual`` is the table's key generator when its files hold no keys."""
    if virtual is None:
        return pf.read(columns=[RECORD_KEY]).column(RECORD_KEY).combine_chunks()
    return virtual.record_keys_of(pf.read(columns=list(virtual.record_key_fields)))


def with_record_keys(rows: pa.Table, virtual: KeyGenerator | None) -> pa.Table:
    """``rows`` with their record keys in ``_hoodie_record_key`` (added first when absent): for a table with
    virtual keys (``virtual``, the table's key generator) the keys it computes from the key fields, since its
    base files and log records keep the column null; unchanged otherwise."""
    if virtual is None:
        return rows
    keys = virtual.record_keys_of(rows)
    if RECORD_KEY in rows.column_names:
        return rows.set_column(rows.schema.get_field_index(RECORD_KEY), RECORD_KEY, keys)
    return rows.add_column(0, RECORD_KEY, keys)

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

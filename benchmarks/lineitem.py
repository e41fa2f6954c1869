"""TPC-H lineitem for the benchmarks: generated with ``tpchgen-cli``, normalized once per scale factor, and
the upsert batches derived from it.

Normalized means plain Arrow types every engine reads the same way (string instead of string_view,
nullable fields, no field ids) plus ``ship_year`` / ``ship_month`` for the partitioned variant.

Upsert batches keep TPC-H's key shape. Order keys are sparse (8 of every 32 values are used), so
``l_orderkey + 8`` of an existing order is a key no table holds yet: inserts land between existing keys
instead of all at the end, and the "concentrated" and "uniform" batches differ only in which orders they
sample.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

RECORD_KEY = ("l_orderkey", "l_linenumber")
PARTITION_FIELDS = ("ship_year", "ship_month")
NEW_KEY_OFFSET = 8  # see the module docstring


def generate(data_dir: Path, sf: float) -> Path:
    """The normalized lineitem parquet file for scale factor ``sf`` (generated on first use)."""
    out = data_dir / f"sf{sf:g}" / "lineitem_norm.parquet"
    if out.exists():
        return out
    raw_dir = out.parent / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    cli = Path(sys.executable).with_name("tpchgen-cli")
    subprocess.run([str(cli), "parquet", "-s", f"{sf:g}", "--tables=lineitem", f"--output-dir={raw_dir}",
                    "--overwrite"], check=True)
    table = normalize(pq.read_table(raw_dir / "lineitem.parquet"))
    pq.write_table(table, out, compression="snappy", row_group_size=256 * 1024)
    (raw_dir / "lineitem.parquet").unlink()
    return out


def normalize(table: pa.Table) -> pa.Table:
    fields, columns = [], []
    for f, col in zip(table.schema, table.columns, strict=True):
        t = pa.string() if pa.types.is_string_view(f.type) or pa.types.is_large_string(f.type) else f.type
        fields.append(pa.field(f.name, t))
        columns.append(col.cast(t))
    ship = table.column("l_shipdate")
    fields += [pa.field("ship_year", pa.int32()), pa.field("ship_month", pa.int32())]
    columns += [pc.year(ship).cast(pa.int32()), pc.month(ship).cast(pa.int32())]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def upsert_batch(table: pa.Table, *, updates: int, inserts: int, concentrated: bool, seed: int = 7,
                 newest: int | None = None) -> pa.Table:
    """``updates`` existing rows with changed values plus ``inserts`` rows with new keys.

    ``concentrated`` samples from the newest 10% of orders (the highest order keys), else from all rows;
    ``newest`` instead samples from that many rows of the newest orders, whatever the table's size (the
    scaling workload: the same batch touches the same amount of data in a larger table).
    """
    rng = np.random.default_rng(seed)
    orderkeys = table.column("l_orderkey")
    if newest is not None:
        pool = np.argsort(orderkeys.to_numpy(zero_copy_only=False), kind="stable")[-newest:]
    elif concentrated:
        lo, hi = pc.min_max(orderkeys).values()
        cut = lo.as_py() + 0.9 * (hi.as_py() - lo.as_py())
        pool = np.flatnonzero(pc.greater_equal(orderkeys, cut).to_numpy(zero_copy_only=False))
    else:
        pool = np.arange(table.num_rows)
    if updates > len(pool):
        raise ValueError(f"{updates} updates asked of a pool of {len(pool)} rows")
    upd_idx = np.sort(rng.choice(pool, size=updates, replace=False))
    ins_idx = np.sort(rng.choice(pool, size=inserts, replace=inserts > len(pool)))
    upd = table.take(pa.array(upd_idx))
    upd = upd.set_column(upd.schema.get_field_index("l_quantity"), "l_quantity",
                         pc.add(upd.column("l_quantity"), pa.scalar(1, upd.schema.field("l_quantity").type))
                         .cast(upd.schema.field("l_quantity").type))
    upd = upd.set_column(upd.schema.get_field_index("l_comment"), "l_comment",
                         pc.binary_join_element_wise(upd.column("l_comment"), pa.scalar("upd"), " "))
    ins = table.take(pa.array(ins_idx))
    ins = ins.set_column(0, "l_orderkey", pc.add(ins.column("l_orderkey"), NEW_KEY_OFFSET))
    # With replacement, the same source row may be drawn twice: keep each new key once.
    ins = _unique_keys(ins)
    return pa.concat_tables([upd, ins])


def _unique_keys(t: pa.Table) -> pa.Table:
    keyed = t.append_column("_i", pa.array(np.arange(t.num_rows)))
    first = keyed.group_by(list(RECORD_KEY)).aggregate([("_i", "min")]).column("_i_min")
    return t.take(pc.sort_indices(first))


def concentrated_upsert_batch(data_dir: Path, sf: float) -> Path:
    """run.py's upsert batch for scale factor ``sf`` (5% updates + 1% inserts, concentrated keys), written
    under ``data_dir`` on first use."""
    src = generate(data_dir, sf)
    rows = pq.ParquetFile(src).metadata.num_rows
    updates, inserts = int(rows * 0.05), int(rows * 0.01)
    batch = data_dir / f"sf{sf:g}" / f"batch-w2-conc-{updates}-{inserts}.parquet"
    if not batch.exists():
        pq.write_table(upsert_batch(pq.read_table(src), updates=updates, inserts=inserts, concentrated=True), batch)
    return batch

"""Bytes per record measured on a sample (hoodpy.write.record_size), without Spark."""

from __future__ import annotations

import io
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodpy.arrow_rows import add_meta_columns, finalize
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.base_file import BaseFileOptions, encode_parquet
from hoodpy.write.record_size import encoded_record_size

SCHEMA = pa.schema([("id", pa.int64()), ("city", pa.string()), ("note", pa.string())])
INSTANT = "20240101000000000"


def _batch(n: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.permutation(n)
    notes = rng.integers(ord("a"), ord("k"), size=(n, 40), dtype=np.uint8).view("S40").ravel()
    return pa.table({RECORD_KEY: pc.utf8_lpad(pa.array(ids).cast(pa.string()), 8, "0"), PARTITION_PATH: [""] * n,
                     "id": ids, "city": pa.array(np.array(["sf", "nyc", "la"])[ids % 3]),
                     "note": pa.array(notes).cast(pa.string())})


def _real_file_size(batch: pa.Table, options: BaseFileOptions) -> int:
    ordered = batch.sort_by(RECORD_KEY)
    rows = add_meta_columns(ordered.select(SCHEMA.names), ordered.column(RECORD_KEY), "", INSTANT)
    rows = finalize(rows, pa.repeat(pa.scalar(True), rows.num_rows), instant_time=INSTANT,
                    file_name="f_0-0-0_" + INSTANT + ".parquet", task_partition=0)
    sink = io.BytesIO()
    encode_parquet(sink, rows, options, {})
    return len(sink.getvalue())


def test_a_sample_predicts_the_bytes_per_record_of_the_whole_file():
    options = BaseFileOptions()
    batch = _batch(200_000)
    real = _real_file_size(batch, options) / batch.num_rows
    sample = batch.take(random.Random(2).sample(range(batch.num_rows), 20_000))
    measured = encoded_record_size(sample, SCHEMA, options, sort=True, instant_time=INSTANT)
    # Sampled keys are sparser, so they compress a little worse: the estimate errs high, by little.
    assert real <= measured <= 1.15 * real, (measured, real)


def test_the_codec_of_the_table_decides_the_size():
    sample = _batch(5000)
    zstd = encoded_record_size(sample, SCHEMA, BaseFileOptions(compression="zstd"), sort=True, instant_time=INSTANT)
    none = encoded_record_size(sample, SCHEMA, BaseFileOptions(compression="uncompressed"), sort=True,
                               instant_time=INSTANT)
    assert zstd < 0.7 * none

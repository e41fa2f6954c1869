"""Bytes per record of a batch, measured by encoding a sample of it as its base files would be written.

Hudi sizes a table's first files with ``hoodie.copyonwrite.record.size.estimate`` (1024 bytes) until a commit
measures the average; columnar files are often far smaller per record (TPC-H lineitem: 29 bytes with zstd),
so a first load wrote files of a few MB against a 120 MB target. A random sample encoded in memory with the
table's codec, encodings and meta columns gives the size instead. It errs high (sorted keys are denser in a
full file than in a sample): SF1 lineitem's 100k-row sample said ~13% more than its 120 MB files hold.
"""

from __future__ import annotations

import io

import pyarrow as pa
from pyspark.sql import DataFrame

from hoodpy.arrow_rows import add_meta_columns, align, finalize
from hoodpy.file_group.naming import base_file_name, new_file_id, write_token
from hoodpy.meta_fields import PARTITION_PATH, RECORD_KEY
from hoodpy.write.base_file import BaseFileOptions, encode_parquet

SAMPLE_ROWS = 100_000
# Bound on the sample's in-memory size on the driver, by a guess of the row width from the schema.
SAMPLE_BYTES = 64 << 20
_VARIABLE_WIDTH_GUESS = 32  # bytes per string or binary value
_NESTED_WIDTH_GUESS = 128
_SEED = 20240101


def _width_guess(schema: pa.Schema) -> int:
    width = 0
    for f in schema:
        if pa.types.is_nested(f.type):
            width += _NESTED_WIDTH_GUESS
            continue
        try:
            width += max(1, f.type.bit_width // 8)
        except ValueError:  # not fixed width
            width += _VARIABLE_WIDTH_GUESS
    return max(1, width)


def sample_records(records: DataFrame, total: int, schema: pa.Schema) -> pa.Table:
    """About ``min(total, SAMPLE_ROWS)`` random rows of ``records`` (``total`` rows; fewer for wide rows by
    ``schema``) as Arrow, in one Spark job: rows are sampled in the JVM, so only the sample crosses to Python."""
    rows = max(1, min(SAMPLE_ROWS, SAMPLE_BYTES // _width_guess(schema)))
    if total > rows:
        records = records.sample(withReplacement=False, fraction=rows / total, seed=_SEED)
    return records.toArrow()


def encoded_record_size(sample: pa.Table, data_schema: pa.Schema, options: BaseFileOptions, *, sort: bool,
                        instant_time: str) -> float:
    """Bytes per record of ``sample`` (record key, partition path and ``data_schema``'s columns) written as one
    base file: meta columns stamped as a write stamps them, sorted by (partition path, record key) when the
    write sorts (bulk_insert), the table's codec and encodings. Footer entries are not counted: the bloom
    filter's size depends on a file's record count, not on its records (see ``bloom_filter.serialized_sizes``)."""
    if not sample.num_rows:
        raise ValueError("an empty sample has no record size")
    if sort:
        sample = sample.sort_by([(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")])
    rows = add_meta_columns(align(sample, data_schema), sample.column(RECORD_KEY).combine_chunks(), "",
                            instant_time)
    rows = rows.set_column(rows.schema.get_field_index(PARTITION_PATH), PARTITION_PATH,
                           sample.column(PARTITION_PATH).cast(pa.string()))
    # Numbered from 0, not from the running task's sequence numbers: a write task measures its own first rows,
    # then writes them.
    name = base_file_name(new_file_id(), write_token(0, 0, 0), instant_time)
    rows = finalize(rows, pa.repeat(pa.scalar(True), rows.num_rows), instant_time=instant_time, file_name=name,
                    task_partition=0, first=0)
    sink = io.BytesIO()
    encode_parquet(sink, rows, options, {})
    return len(sink.getvalue()) / sample.num_rows

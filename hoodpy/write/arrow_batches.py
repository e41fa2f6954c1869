"""Spark's Arrow batches into hoodpy's write tasks bounded by their record count alone, during hoodpy's own job.

Spark (4.0.5's code read) bounds the batches a ``mapInArrow`` task takes by bytes too
(``spark.sql.execution.arrow.maxBytesPerBatch``, default 256 MB): below Int.MaxValue, the JVM sizes the whole
Arrow batch after every row it adds (BatchedPythonArrowInput.underBatchSizeLimit -> ArrowWriter.sizeInBytes,
which walks every vector of the row's struct). Feeding SF 1's 360k-row upsert batch to its merge task, that
check is ~0.2 of ~0.78 JVM CPU s; feeding bulk_insert's 6M rows to its tasks, ~4 of ~10. At Int.MaxValue Spark
skips it, and the batches are bounded by ``spark.sql.execution.arrow.maxRecordsPerBatch`` alone.

Lifted only where, by the table's size per record, it cannot bind: the user left it at its default, a record bound
is set, and that many records of the table's size per record (bytes on disk from its commits, see
``BucketAssigner.known_sizing``; before the table has any, Hudi's ``hoodie.copyonwrite.record.size.estimate``,
1024 by default) times :data:`EXPANSION` (parquet's compression, in-memory Arrow overhead) stay within the
default. Where the user's record bound is too many for that, the job takes fewer records a batch (no fewer than
:data:`MIN_BATCH_RECORDS`): SF 1 lineitem, ~28 bytes a record on disk, keeps 10,000 records a batch (18 MB by
that bound, ~2.7 MB measured); a first load at the estimate's 1024 bytes takes 4,096. Records too wide even for
that keep Spark's check (it costs little beside converting them). Records far wider than a first load's estimate
would get batches past 256 MB (as every batch could before Spark 4.0): such a table sets the estimate. The
settings are the session's for the one job and restored after it (unset again), whatever the job's outcome; a
query run meanwhile from another thread of the same session sees them too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

MAX_BYTES_KEY = "spark.sql.execution.arrow.maxBytesPerBatch"
MAX_RECORDS_KEY = "spark.sql.execution.arrow.maxRecordsPerBatch"
UNBOUNDED = 2147483647  # Int.MaxValue: Spark's "no byte bound", which skips the per-row sizing
DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # Spark's default maxBytesPerBatch
# A record's Arrow bytes against its bytes in a parquet file, an upper bound (SF 1 lineitem: ~270 against ~28).
EXPANSION = 64
# Fewer records a batch than this and Spark's byte check is kept: for records that wide, sizing the batch after
# each row costs little beside converting the row, and small batches cost per batch.
MIN_BATCH_RECORDS = 1024


def batch_records(max_records: int, record_size: int) -> int | None:
    """The records a batch may take with Spark's default byte bound idle, for a record bound of ``max_records``
    (<= 0: unbounded) and ``record_size`` bytes a record on disk: ``max_records`` where that many fit, else as
    many as fit; None where the byte bound must stay (no record bound, or fewer than MIN_BATCH_RECORDS fit)."""
    if max_records <= 0:
        return None
    fit = DEFAULT_MAX_BYTES // (max(1, record_size) * EXPANSION)
    if fit >= max_records:
        return max_records
    return fit if fit >= MIN_BATCH_RECORDS else None


@contextmanager
def batches_by_records(spark: SparkSession, record_size: int) -> Iterator[None]:
    """Spark's byte bound on Arrow batches lifted for the job run inside, where the user set none and
    :func:`batch_records` allows, with the record bound lowered to its count for the job where needed.
    ``record_size``: bytes a record on disk, measured or estimated."""
    max_records = int(spark.conf.get(MAX_RECORDS_KEY))
    records = batch_records(max_records, record_size) if spark.conf.get(MAX_BYTES_KEY, None) is None else None
    if records is None:
        yield
        return
    users_records = spark.conf.get(MAX_RECORDS_KEY, None)  # None: not set (Spark's default)
    spark.conf.set(MAX_BYTES_KEY, str(UNBOUNDED))
    if records != max_records:
        spark.conf.set(MAX_RECORDS_KEY, str(records))
    try:
        yield
    finally:
        spark.conf.unset(MAX_BYTES_KEY)
        if records != max_records:
            if users_records is None:
                spark.conf.unset(MAX_RECORDS_KEY)
            else:
                spark.conf.set(MAX_RECORDS_KEY, users_records)

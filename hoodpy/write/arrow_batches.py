"""Spark's Arrow batches into hoodpy's merge tasks bounded by their record count alone, during hoodpy's own job.

Spark (4.0.5's code read) bounds the batches a ``mapInArrow`` task takes by bytes too
(``spark.sql.execution.arrow.maxBytesPerBatch``, default 256 MB): below Int.MaxValue, the JVM sizes the whole
Arrow batch after every row it adds (BatchedPythonArrowInput.underBatchSizeLimit -> ArrowWriter.sizeInBytes,
which walks every vector of the row's struct). Feeding SF 1's 360k-row upsert batch to its merge task, that
check is ~0.2 of ~0.78 JVM CPU s. At Int.MaxValue Spark skips it, and the batches are bounded by
``spark.sql.execution.arrow.maxRecordsPerBatch`` alone.

Safe because the byte bound is only lifted where it cannot bind: the user left it at its default, a record bound
is set, and that many records of the table's size per record (bytes on disk from its commits, see
``BucketAssigner.known_sizing``) times :data:`EXPANSION` (parquet's compression, in-memory Arrow overhead) stay
within the default (SF 1 lineitem: ~28 bytes a record on disk, 10,000 records a batch: 18 MB by that bound, ~2.7 MB
measured). Records of more than ~410 bytes on disk keep Spark's check, as does a table whose size per record is
not known yet. The setting is the session's for the one job and restored after it (unset again), whatever
the job's outcome.
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


def bytes_bound_idle(max_records: int, record_size: int) -> bool:
    """Whether Spark's default byte bound cannot bind batches of ``max_records`` records (<= 0: unbounded) of
    ``record_size`` bytes each on disk."""
    return 0 < max_records and max_records * max(1, record_size) * EXPANSION <= DEFAULT_MAX_BYTES


@contextmanager
def batches_by_records(spark: SparkSession, record_size: int | None) -> Iterator[None]:
    """Spark's byte bound on Arrow batches lifted for the job run inside, where it is idle (see the module doc):
    the user set no byte bound and :func:`bytes_bound_idle`. ``record_size``: bytes per record on disk, None
    when not known (the bound is kept)."""
    lift = record_size is not None and spark.conf.get(MAX_BYTES_KEY, None) is None \
        and bytes_bound_idle(int(spark.conf.get(MAX_RECORDS_KEY)), record_size)
    if not lift:
        yield
        return
    spark.conf.set(MAX_BYTES_KEY, str(UNBOUNDED))
    try:
        yield
    finally:
        spark.conf.unset(MAX_BYTES_KEY)

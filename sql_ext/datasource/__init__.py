"""Spark's own API on hoodpy tables: ``df.write.format("hoodpy")``, ``spark.read.format("hoodpy")``,
``df.writeStream.format("hoodpy")`` and ``spark.readStream.format("hoodpy")``, with Hudi's option names.

Installed by :func:`sql_ext.enable` (one call for the SQL layer and this API)::

    from sql_ext import enable
    enable(spark)
    df.write.format("hoodpy").options(**hudi_options).mode("append").save(base_path)
    spark.read.format("hoodpy").load(base_path)

The route, decided on measurements (pyspark 4.0.5, ../shared/DESIGN.md and ``benchmarks/dataframe_api.py``):

* Spark's Python data source API (``pyspark.sql.datasource``) cannot carry batch writes: its
  ``DataSourceWriter.write`` runs in tasks over whatever partitioning the input has and its ``commit`` runs in
  a Python worker without a SparkSession, so nothing can shuffle records to their file groups, look keys up
  or start the merge job an upsert is. Its reader was 1.5-3.8x slower than Spark's parquet scan, and a catalog
  table ``USING`` it loses its OPTIONS and LOCATION. Neither meets the targets (a write no slower than
  ``HoodieTable.upsert``, a read within 1.2x of ``spark.read.parquet``).
* So batch reads and writes, and the streaming sink, run on the driver: ``enable`` makes the builders
  (``DataFrameReader``, ``DataFrameWriter``, ``DataStreamWriter``, classic and Spark Connect) record the calls
  made on them, and a terminal call (``load``, ``save``, ``start``) whose format is ``hoodpy`` goes to
  :mod:`~sql_ext.datasource.batch_read` (``HoodieTable.read`` / ``read_incremental``: Spark's native parquet
  scan), :mod:`~sql_ext.datasource.batch_write` (``HoodieTable.write``: the distributed index lookup and
  merge) or :mod:`~sql_ext.datasource.stream_sink` (``foreachBatch``, one commit per micro-batch). Any other
  format reaches Spark exactly as before: the recorded calls were passed on as they were made.
* Only the streaming source needs Spark to pull data on its own schedule, and there the Python data source
  fits: :mod:`~sql_ext.datasource.stream_source` registers ``hoodpy`` with ``spark.dataSource.register``; its
  stream reader plans each micro-batch from the timeline (offsets are instants) and its tasks read file slices
  with pyarrow.

Modules: :mod:`~sql_ext.datasource.install` (what ``enable`` calls), :mod:`~sql_ext.datasource.builders`
(the recording builders), :mod:`~sql_ext.datasource.options`, :mod:`~sql_ext.datasource.batch_read`,
:mod:`~sql_ext.datasource.batch_write`, :mod:`~sql_ext.datasource.stream_sink` (also ``sink(...)``, the sink as a
``foreachBatch`` function) and :mod:`~sql_ext.datasource.stream_source`. Nothing is imported here: Spark's
Python workers import the stream source alone.

Patching the builder classes (not a session instance) is needed because ``spark.read`` and ``df.write`` are
properties that make a new builder on each access; the patched methods only record and pass on, so the
classes behave as before for every other format. No JVM internals are used: the same code serves Spark
Connect.
"""

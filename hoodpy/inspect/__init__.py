"""What a table holds, as rows: commits, the timeline, the file-system view, size and write statistics,
pending plans and column layouts.

These are the computations behind both the ``hoodpy`` command line and the Spark SQL procedures
(``CALL show_commits(...)`` and friends): the procedures only turn these rows into DataFrames, so the two
agree by construction. Nothing here needs Spark: storage listings, the timeline's JSON and Avro files,
and parquet footers.
"""

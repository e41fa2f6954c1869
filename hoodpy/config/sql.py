"""SQL-scope keys: how ``INSERT INTO`` / ``INSERT OVERWRITE`` pick their write operation, and the table
options hoodpy's ``CREATE TABLE`` understands (Hudi's Spark SQL names). CTAS writes with ``bulk_insert``
unless ``hoodie.datasource.write.operation`` (:class:`~hoodpy.config.write.WriteConfig`) says otherwise.

Options come, later wins, from ``SET hoodie.x = y`` in the session, the table's TBLPROPERTIES / OPTIONS,
and what the statement itself implies.
"""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_enum, parse_ordering_field


class SqlConfig:
    INSERT_INTO_OPERATION = ConfigKey(
        "hoodie.spark.sql.insert.into.operation", "upsert", parse_enum("insert", "bulk_insert", "upsert"),
        doc="Write operation of INSERT INTO. hoodpy defaults to upsert (every hoodpy table has a record key, "
        "so INSERT INTO is idempotent by key); Hudi 0.14+ defaults to insert.",
    )
    INSERT_MODE = ConfigKey(
        "hoodie.sql.insert.mode", None, parse_enum("upsert", "strict", "non-strict"),
        doc="Deprecated Hudi switch: upsert -> upsert, strict / non-strict -> insert. Used only when "
        "hoodie.spark.sql.insert.into.operation is not set.",
    )
    OVERWRITE_MODE = ConfigKey(
        "hoodie.datasource.overwrite.mode", None, parse_enum("STATIC", "DYNAMIC"),
        doc="INSERT OVERWRITE without a partition spec on a partitioned table: STATIC replaces the whole "
        "table, DYNAMIC only the partitions in the batch. Default: spark.sql.sources.partitionOverwriteMode.",
    )


class TableOptions:
    """Hudi's Spark SQL table options (TBLPROPERTIES / OPTIONS of CREATE TABLE ... USING hoodpy)."""

    PRIMARY_KEY = ConfigKey("primaryKey", None, doc="Record key field(s), comma-separated. Without it, record keys are "
                            "generated (Hudi 0.14+): INSERT INTO inserts, UPDATE / DELETE go by _hoodie_record_key.",
                            aliases=("primarykey", "hoodie.table.recordkey.fields",
                                     "hoodie.datasource.write.recordkey.field"))
    PRECOMBINE_FIELD = ConfigKey("preCombineField", None, parse_ordering_field,
                                 doc="Ordering field, or a comma-separated list compared as a tuple.",
                                 aliases=("precombineField", "precombinefield", "hoodie.table.precombine.field",
                                          "hoodie.datasource.write.precombine.field"))
    BASE_PATH = ConfigKey("hoodie.base.path", None, doc="The table's base path: in a catalog table's "
                          "TBLPROPERTIES it marks a hoodpy table and says where it lives.")
    TYPE = ConfigKey("type", "cow", parse_enum("cow", "copy_on_write", "mor", "merge_on_read"),
                     doc="Table type: cow (copy-on-write) or mor (merge-on-read, table versions 6, 8 and 9).")

"""Hudi's meta fields: the five string columns every base file row starts with (HoodieRecord's
``HOODIE_META_COLUMNS``), in file order. Names only, so any layer can import them.
"""

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"

META_COLUMNS: tuple[str, ...] = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)

# The parquet footer (key-value metadata) entries of a base file's key bloom filter: its text serialization and
# its type code. Here so that the metadata table, below the index, reads them too.
FOOTER_BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
FOOTER_BLOOM_TYPE_KEY = "hoodie_bloom_filter_type_code"

__all__ = ["COMMIT_SEQNO", "COMMIT_TIME", "FILE_NAME", "FOOTER_BLOOM_FILTER_KEY", "FOOTER_BLOOM_TYPE_KEY",
           "META_COLUMNS", "PARTITION_PATH", "RECORD_KEY"]

"""Hudi's meta fields: the five string columns every base file row starts with (HoodieRecord's
``HOODIE_META_COLUMNS``), in file order. Names only, so any layer can import them.
"""

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"

META_COLUMNS: tuple[str, ...] = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)

__all__ = ["COMMIT_SEQNO", "COMMIT_TIME", "FILE_NAME", "META_COLUMNS", "PARTITION_PATH", "RECORD_KEY"]

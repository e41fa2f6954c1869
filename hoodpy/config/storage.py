"""Storage-scope keys: base file sizing and parquet settings, merge-on-read log files (Hudi's HoodieStorageConfig /
CompactionConfig)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_float, parse_int

# Parquet codecs by the names Hudi accepts (parquet-mr's CompressionCodecName, any case), plus Spark's "none".
# LZO is a Hudi name pyarrow cannot write.
COMPRESSION_CODECS = ("zstd", "snappy", "gzip", "lz4", "lz4_raw", "brotli", "uncompressed", "none")
UNWRITABLE_CODECS = {"lzo": "lzo is a Hudi codec hoodpy cannot write (pyarrow has no LZO writer)"}
# Log data block formats hoodpy writes, and Hudi's others.
LOG_BLOCK_FORMATS = ("avro", "parquet")
UNWRITABLE_LOG_BLOCK_FORMATS = {"hfile": "HFile data blocks are the metadata table's"}


def _parse_name(value: object, names: tuple[str, ...], refused: dict[str, str], what: str) -> str:
    """``value`` lower case when it is one of ``names``; a ValueError naming them otherwise (with the reason of
    a name Hudi knows that hoodpy refuses)."""
    text = str(value).strip().lower()
    if text in refused:
        raise ValueError(f"{refused[text]}; expected one of {', '.join(names)}")
    if text not in names:
        raise ValueError(f"not a {what}; expected one of {', '.join(names)}")
    return text


def parse_codec(value: object) -> str:
    """A parquet codec name, lower case; "none" is "uncompressed"."""
    text = _parse_name(value, COMPRESSION_CODECS, UNWRITABLE_CODECS, "parquet codec")
    return "uncompressed" if text == "none" else text


def parse_log_block_format(value: object) -> str:
    """A log data block format hoodpy writes: avro or parquet (any case)."""
    return _parse_name(value, LOG_BLOCK_FORMATS, UNWRITABLE_LOG_BLOCK_FORMATS, "log data block format")


class StorageConfig:
    PARQUET_MAX_FILE_SIZE = ConfigKey(
        "hoodie.parquet.max.file.size", 125829120, parse_int,
        doc="Target size of a base file; new file groups are cut at this size.",
    )
    PARQUET_SMALL_FILE_LIMIT = ConfigKey(
        "hoodie.parquet.small.file.limit", 104857600, parse_int,
        doc="Base files below this size receive inserts first; <= 0 disables bin-packing.",
    )
    PARQUET_BLOCK_SIZE = ConfigKey(
        "hoodie.parquet.block.size", 125829120, parse_int, doc="Parquet row group size in bytes."
    )
    PARQUET_COMPRESSION_CODEC = ConfigKey(
        "hoodie.parquet.compression.codec", "zstd", parse_codec,
        doc="Parquet compression codec of base files. Hudi 0.14 defaults to gzip; hoodpy to zstd, which writes "
            "4x faster than gzip and smaller files than snappy (README: defaults that differ from Hudi's).",
    )
    SMALL_FILE_GROUP_CANDIDATES_LIMIT = ConfigKey(
        "hoodie.merge.small.file.group.candidates.limit", 1, parse_int,
        doc="Merge-on-read upserts with an index that cannot index log files: how many of a partition's small "
            "base-file-only slices (the smallest first) may take inserts; each one's base file is rewritten.",
    )
    RECORD_SIZE_ESTIMATE = ConfigKey(
        "hoodie.copyonwrite.record.size.estimate", 1024, parse_int,
        doc="Bytes per record assumed until a commit gives a measured size.",
    )
    RECORD_SIZE_ESTIMATION_THRESHOLD = ConfigKey(
        "hoodie.record.size.estimation.threshold", 1.0, parse_float,
        doc="Only commits writing more than threshold * small.file.limit bytes estimate the record size.",
    )
    INSERT_SPLIT_SIZE = ConfigKey(
        "hoodie.copyonwrite.insert.split.size", 500000, parse_int,
        doc="Records per new file group when auto split is off.",
    )
    INSERT_AUTO_SPLIT = ConfigKey(
        "hoodie.copyonwrite.insert.auto.split", True, parse_bool,
        doc="Size new file groups from the record size estimate.",
    )
    LOGFILE_DATA_BLOCK_FORMAT = ConfigKey(
        "hoodie.logfile.data.block.format", "avro", parse_log_block_format,
        doc="Data block format of merge-on-read log files: avro (Hudi's default for parquet base files) or "
            "parquet (one parquet file per block, compressed with hoodie.parquet.compression.codec).",
    )
    LOGFILE_MAX_SIZE = ConfigKey(
        "hoodie.logfile.max.size", 1073741824, parse_int,
        doc="Merge-on-read log file size in bytes after which a write rolls over to the next log version "
            "(a block that would take a non-empty file past it goes to a new version).",
    )
    LOGFILE_DATA_BLOCK_MAX_SIZE = ConfigKey(
        "hoodie.logfile.data.block.max.size", 268435456, parse_int,
        doc="Most bytes of records (as held in memory) one log data block takes; more records start another "
            "block.",
    )

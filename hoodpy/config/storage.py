"""Storage-scope keys: base file sizing and parquet settings (Hudi's HoodieStorageConfig/CompactionConfig)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_float, parse_int


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
        "hoodie.parquet.compression.codec", "gzip", doc="Parquet compression codec (Hudi 0.14 default gzip)."
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

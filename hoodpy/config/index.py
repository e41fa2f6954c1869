"""Index-scope keys (Hudi's HoodieIndexConfig)."""

from __future__ import annotations

from hoodpy.config import ConfigKey, parse_bool, parse_csv, parse_enum, parse_float, parse_int

BLOOM = "BLOOM"
GLOBAL_BLOOM = "GLOBAL_BLOOM"
SIMPLE = "SIMPLE"
GLOBAL_SIMPLE = "GLOBAL_SIMPLE"
BUCKET = "BUCKET"
RECORD_INDEX = "RECORD_INDEX"
# Engines of the bucket index; hoodpy implements SIMPLE (a fixed number of buckets).
SIMPLE_BUCKET_ENGINE = "SIMPLE"
CONSISTENT_HASHING = "CONSISTENT_HASHING"


class IndexConfig:
    TYPE = ConfigKey(
        "hoodie.index.type", BLOOM, parse_enum(BLOOM, GLOBAL_BLOOM, SIMPLE, GLOBAL_SIMPLE, BUCKET, RECORD_INDEX),
        doc="How incoming keys are located: footer bloom filters and key ranges, or a key join; "
        "GLOBAL_* forms keep keys unique across partitions; BUCKET computes each key's file group from its hash; "
        "RECORD_INDEX (global) reads each key's file group from the metadata table's record_index partition, "
        "which it turns on (hoodie.metadata.record.index.enable).",
    )
    BUCKET_ENGINE = ConfigKey(
        "hoodie.index.bucket.engine", SIMPLE_BUCKET_ENGINE, parse_enum(SIMPLE_BUCKET_ENGINE, CONSISTENT_HASHING),
        doc="BUCKET index: SIMPLE keeps a fixed number of buckets per partition (CONSISTENT_HASHING, Hudi's "
        "resizable buckets, is not supported).",
    )
    BUCKET_NUM_BUCKETS = ConfigKey(
        "hoodie.bucket.index.num.buckets", 256, parse_int,
        doc="BUCKET index: buckets (file groups) per partition; fixed for the life of the table.",
    )
    BUCKET_HASH_FIELD = ConfigKey(
        "hoodie.bucket.index.hash.field", (), parse_csv,
        doc="BUCKET index: the record key fields whose values are hashed (default: all record key fields).",
    )
    BLOOM_NUM_ENTRIES = ConfigKey(
        "hoodie.index.bloom.num_entries", 60000, parse_int, doc="Keys per bloom filter row."
    )
    BLOOM_FPP = ConfigKey("hoodie.index.bloom.fpp", 0.000000001, parse_float, doc="Bloom false positive rate.")
    BLOOM_MAX_ENTRIES = ConfigKey(
        "hoodie.bloom.index.filter.dynamic.max.entries", 100000, parse_int,
        doc="Upper bound of keys the dynamic bloom filter grows to.",
    )
    BLOOM_PRUNE_BY_RANGES = ConfigKey(
        "hoodie.bloom.index.prune.by.ranges", True, parse_bool,
        doc="Skip files whose footer key range excludes a key (turn off for random keys).",
    )
    BLOOM_USE_METADATA = ConfigKey(
        "hoodie.bloom.index.use.metadata", False, parse_bool,
        doc="BLOOM / GLOBAL_BLOOM: read the candidate files' bloom filters from the metadata table's bloom_filters "
        "partition (when the table has it) instead of their parquet footers; a file whose filter rules out every "
        "candidate key is then never opened.",
    )
    BLOOM_UPDATE_PARTITION_PATH = ConfigKey(
        "hoodie.bloom.index.update.partition.path", True, parse_bool,
        doc="GLOBAL_BLOOM: a key whose partition changed moves (delete old, insert new).",
    )
    RECORD_INDEX_UPDATE_PARTITION_PATH = ConfigKey(
        "hoodie.record.index.update.partition.path", False, parse_bool,
        doc="RECORD_INDEX: a key whose partition changed moves (delete old, insert new); off, the record is "
        "updated in the partition it is in.",
    )
    RECORD_INDEX_DRIVER_LOOKUP_MAX_KEYS = ConfigKey(
        "hoodie.record.index.driver.lookup.max.keys", 100_000, parse_int,
        doc="RECORD_INDEX (hoodpy's own key): a batch of at most this many records has its keys collected to the "
        "driver and looked up there (the record_index shards read by threads, no Spark shuffle); a larger batch "
        "is looked up by one Spark task per shard. 0: always in Spark.",
    )
    SIMPLE_UPDATE_PARTITION_PATH = ConfigKey(
        "hoodie.simple.index.update.partition.path", True, parse_bool,
        doc="GLOBAL_SIMPLE: a key whose partition changed moves (delete old, insert new).",
    )

    @staticmethod
    def is_global(index_type: str) -> bool:
        return index_type in (GLOBAL_BLOOM, GLOBAL_SIMPLE, RECORD_INDEX)

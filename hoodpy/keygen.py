"""Record keys and partition paths, as Hudi's Simple, Complex and Nonpartitioned key generators make them.

The key generator is a pure description; :mod:`hoodpy.write.records` turns it into Spark expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from hoodpy.config import HoodieConfig
from hoodpy.config.table import TableConfig
from hoodpy.errors import InvalidConfigError, MissingConfigError

SIMPLE_KEY_GENERATOR = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX_KEY_GENERATOR = "org.apache.hudi.keygen.ComplexKeyGenerator"
NONPARTITIONED_KEY_GENERATOR = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
SUPPORTED_KEY_GENERATORS = (SIMPLE_KEY_GENERATOR, COMPLEX_KEY_GENERATOR, NONPARTITIONED_KEY_GENERATOR)

# KeyGenUtils' placeholders inside composite keys, and the partition of null / empty values.
NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"


def infer_key_generator_class(record_key_fields: tuple[str, ...], partition_fields: tuple[str, ...]) -> str:
    """The class Hudi 0.14 infers when none is configured."""
    if not partition_fields:
        return NONPARTITIONED_KEY_GENERATOR
    if len(record_key_fields) > 1 or len(partition_fields) > 1:
        return COMPLEX_KEY_GENERATOR
    return SIMPLE_KEY_GENERATOR


@dataclass(frozen=True)
class KeyGenerator:
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    key_generator_class: str
    hive_style_partitioning: bool = False
    url_encode_partitioning: bool = False

    @classmethod
    def from_config(cls, config: HoodieConfig) -> KeyGenerator:
        keys = tuple(config.get(TableConfig.RECORD_KEY_FIELDS))
        if not keys:
            raise MissingConfigError(TableConfig.RECORD_KEY_FIELDS.key, "a table needs record key fields")
        partitions = tuple(config.get(TableConfig.PARTITION_FIELDS))
        klass = config.get(TableConfig.KEY_GENERATOR_CLASS) or infer_key_generator_class(keys, partitions)
        if klass not in SUPPORTED_KEY_GENERATORS:
            raise InvalidConfigError(
                TableConfig.KEY_GENERATOR_CLASS.key, klass,
                "hoodpy supports " + ", ".join(c.rsplit(".", 1)[-1] for c in SUPPORTED_KEY_GENERATORS),
            )
        if klass == NONPARTITIONED_KEY_GENERATOR and partitions:
            raise InvalidConfigError(
                TableConfig.PARTITION_FIELDS.key, ",".join(partitions),
                "NonpartitionedKeyGenerator takes no partition fields",
            )
        return cls(
            keys, partitions, klass,
            config.get(TableConfig.HIVE_STYLE_PARTITIONING),
            config.get(TableConfig.URL_ENCODE_PARTITIONING),
        )

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def composite_record_key(self) -> bool:
        """Keys read 'f1:v1,f2:v2' for several fields, and always with ComplexKeyGenerator (Hudi 0.14)."""
        return len(self.record_key_fields) > 1 or self.key_generator_class == COMPLEX_KEY_GENERATOR

    def record_key_of(self, values: dict[str, object]) -> str:
        """The record key of one record given as a dict (used for key predicates and tests)."""
        if not self.composite_record_key:
            return _plain(values[self.record_key_fields[0]])
        parts = []
        for f in self.record_key_fields:
            v = values.get(f)
            text = NULL_RECORDKEY_PLACEHOLDER if v is None else _plain(v)
            parts.append(f"{f}:{text or EMPTY_RECORDKEY_PLACEHOLDER}")
        return ",".join(parts)

    def partition_segment(self, field: str, value: str | None) -> str:
        text = DEFAULT_PARTITION_PATH if value is None or value == "" else value
        if self.url_encode_partitioning:
            text = quote(text, safe="")
        return f"{field}={text}" if self.hive_style_partitioning else text

    def partition_values(self, partition_path: str) -> dict[str, str | None]:
        """Field -> value string (None for the default partition) parsed back from a partition path."""
        if not self.partition_fields:
            return {}
        segments = partition_path.split("/")
        out: dict[str, str | None] = {}
        for field, seg in zip(self.partition_fields, segments, strict=False):
            if self.hive_style_partitioning and "=" in seg:
                seg = seg.split("=", 1)[1]
            out[field] = None if seg == DEFAULT_PARTITION_PATH else seg
        return out


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
